// trendsRun: `mkt monitor trends TARGET` — per-bucket latency with a sparkline, or JSON.
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { callApi } from '../../src/cli/api-errors.js';
import { printJson, printTable } from '../../src/cli/output.js';
import { monitorClient, sparkline, type ClientFlags } from './shared.js';

export interface TrendsOptions extends ClientFlags {
  factory: Factory;
  target: string;
  hours?: string;
  bucket?: string;
}

function positiveInt(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`--${name} must be a whole number of at least 1, got ${v}`);
  return Number(v);
}

export async function trendsRun(opts: TrendsOptions): Promise<void> {
  const { io } = opts.factory;
  const hours = positiveInt('hours', opts.hours);
  const bucket = positiveInt('bucket', opts.bucket);
  const client = await monitorClient(opts.factory, opts);
  // bucket_minutes is --bucket; the rest of a refused field is named after its own flag (commands/root/run.ts).
  const t = await callApi('monitor', () => client.trends(opts.target, hours, bucket), { flags: { bucket_minutes: '--bucket' } });
  if (opts.json) {
    printJson(io, t);
    return;
  }
  io.stdout.write(`${t.target}: ${t.window_hours} h in ${t.bucket_minutes}-minute buckets  ${sparkline(t.buckets.map((b) => b.p50))}\n`);
  const o = t.overall;
  const b = t.baseline;
  io.stdout.write(`overall p50 ${o?.p50 ?? '-'} ms, p95 ${o?.p95 ?? '-'} ms (${o?.count ?? 0} checks); 7-day baseline p50 ${b?.p50 ?? '-'} ms, p95 ${b?.p95 ?? '-'} ms\n`);
  printTable(io, ['bucket start', 'checks', 'p50', 'p95', 'max'], t.buckets.filter((x) => x.count > 0).map((x) => [x.start, x.count, x.p50, x.p95, x.max]));
}
