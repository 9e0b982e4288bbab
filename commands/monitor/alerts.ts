// alertsRun: `mkt monitor alerts` — each alert channel with its last send and how it went.
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { printJson, printTable } from '../../src/cli/output.js';
import { alertChannels } from '../../src/client/monitor-alerts.js';
import { monitorClient, type ClientFlags } from './shared.js';

export interface AlertsOptions extends ClientFlags {
  factory: Factory;
}

export async function alertsRun(opts: AlertsOptions): Promise<void> {
  const { io } = opts.factory;
  const client = await monitorClient(opts.factory, opts);
  const answer = await callApi('monitor', () => alertChannels(client.http));
  if (opts.json) {
    printJson(io, answer);
    return;
  }
  const rows = answer.channels.map((c) => {
    const l = c.last;
    if (!l) return [c.name, c.type, 'never sent', '', '', ''];
    const outcome = l.ok ? 'ok' : `failed: ${l.error ?? 'unknown error'}`;
    return [c.name, c.type, outcome, l.event, l.target, `${l.at} (${l.attempts} attempt${l.attempts === 1 ? '' : 's'})`];
  });
  printTable(io, ['channel', 'type', 'last send', 'event', 'target', 'at'], rows);
}
