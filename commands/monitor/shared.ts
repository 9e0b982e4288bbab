// What the `mkt monitor` verbs share: the client, and the terminal sparkline.
import type { Factory } from '../../src/cli/factory.js';
import { MonitorClient } from '../../src/client/monitor.js';

export interface ClientFlags {
  server?: string;
  json?: boolean;
}

export async function monitorClient(f: Factory, flags: ClientFlags): Promise<MonitorClient> {
  return new MonitorClient(await f.http('monitor', { server: flags.server }));
}

const BARS = '▁▂▃▄▅▆▇█';

/** One character per value; gaps (no data) are spaces. */
export function sparkline(values: (number | null | undefined)[]): string {
  const present = values.filter((v): v is number => typeof v === 'number');
  if (present.length === 0) return '';
  const min = Math.min(...present);
  const span = Math.max(...present) - min || 1;
  return values.map((v) => (typeof v === 'number' ? BARS[Math.min(7, Math.floor(((v - min) / span) * 7.999))] : ' ')).join('');
}

export function pct(v: number | null | undefined): string {
  return typeof v === 'number' ? `${v.toFixed(2)}%` : '-';
}
