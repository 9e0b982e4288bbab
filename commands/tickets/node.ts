// nodeRun: `mkt tickets node` — the server's node id (also a quick token check).
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { printJson } from '../../src/cli/output.js';
import { ticketsClient, type ClientFlags } from './shared.js';

export interface NodeOptions extends ClientFlags {
  factory: Factory;
}

export async function nodeRun(opts: NodeOptions): Promise<void> {
  const client = await ticketsClient(opts.factory, opts);
  const res = await callApi('tickets', () => client.node());
  if (opts.json) printJson(opts.factory.io, res);
  else opts.factory.io.stdout.write(res.node_id + '\n');
}
