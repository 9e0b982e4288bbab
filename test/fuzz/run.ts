// The fuzz loop: request i of a run is drawn from its own seed (seed, i), so any one request
// replays alone; requests go over real HTTP through an undici Pool, a few at a time.
import fc from 'fast-check';
import { Pool, errors } from 'undici';
import { describeFailure, failureKey, judge, type Failure } from './check.js';
import { requestArb, UNKNOWN_ROUTE, type FuzzRequest, type FuzzTarget } from './mutate.js';

export interface FuzzSettings {
  seed: number;
  runs: number;
  /** Replay only this request index. */
  only?: number;
}

/** MKT_FUZZ_SEED (else a fresh one), MKT_FUZZ_RUNS (else `defaultRuns`), MKT_FUZZ_ONLY. */
export function settingsFromEnv(defaultRuns: number): FuzzSettings {
  const seed = process.env.MKT_FUZZ_SEED ? Number(process.env.MKT_FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
  const runs = process.env.MKT_FUZZ_RUNS ? Number(process.env.MKT_FUZZ_RUNS) : defaultRuns;
  const only = process.env.MKT_FUZZ_ONLY ? Number(process.env.MKT_FUZZ_ONLY) : undefined;
  if (!Number.isInteger(seed) || !Number.isInteger(runs) || (only !== undefined && !Number.isInteger(only))) throw new Error('MKT_FUZZ_SEED, MKT_FUZZ_RUNS and MKT_FUZZ_ONLY are whole numbers');
  return { seed, runs, only };
}

export interface OpCount {
  sent: number;
  ok: number;
  client: number;
  server: number;
  none: number;
}

export interface FuzzReport {
  sent: number;
  perOp: Map<string, OpCount>;
  failures: Failure[];
  /** One reproducer per distinct failure class. */
  distinct: Map<string, string>;
  summary: string;
}

/** The seed of request i: a cheap mix, so neighbouring indices get unrelated streams. */
function seedOf(seed: number, i: number): number {
  let h = Math.imul(seed ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b);
  h ^= h >>> 13;
  return Math.imul(h, 0xc2b2ae35) | 0;
}

const drawers = new WeakMap<FuzzTarget, (seed: number, i: number) => FuzzRequest>();

/** Request i of the run with this seed: operation i modulo (operations + unknown routes). */
export function requestAt(t: FuzzTarget, seed: number, i: number): FuzzRequest {
  let draw = drawers.get(t);
  if (!draw) {
    const arbs = [...t.ops, undefined].map((op) => requestArb(t, op));
    draw = (sd, n) => fc.sample(arbs[n % arbs.length]!, { seed: seedOf(sd, n), numRuns: 1 })[0]!;
    drawers.set(t, draw);
  }
  return draw(seed, i);
}

export async function fuzz(service: string, url: string, t: FuzzTarget, s: FuzzSettings, secrets: string[], concurrency = 8): Promise<FuzzReport> {
  const draw = (i: number): FuzzRequest => requestAt(t, s.seed, i);
  const perOp = new Map<string, OpCount>([...t.ops.map((o) => o.id), UNKNOWN_ROUTE].map((id) => [id, { sent: 0, ok: 0, client: 0, server: 0, none: 0 }]));
  const failures: Failure[] = [];
  const pool = new Pool(url, { connections: concurrency, headersTimeout: 60_000, bodyTimeout: 60_000, keepAliveTimeout: 10_000 });
  const indices = s.only !== undefined ? [s.only] : Array.from({ length: s.runs }, (_, i) => i);
  let next = 0;
  let sent = 0;
  const worker = async (): Promise<void> => {
    while (next < indices.length) {
      const index = indices[next++]!;
      const request = draw(index);
      const count = perOp.get(request.op)!;
      count.sent++;
      sent++;
      try {
        const res = await pool.request({ method: request.method, path: request.path, headers: request.headers, body: request.body });
        const answer = { status: res.statusCode, headers: res.headers, body: await res.body.text() };
        if (answer.status >= 500) count.server++;
        else if (answer.status >= 400) count.client++;
        else count.ok++;
        // MKT_FUZZ_TRACE=1: one line per exchange, to see why valid requests are refused
        if (process.env.MKT_FUZZ_TRACE) print(`${index} ${request.op} ${request.kind} ${request.auth} ${request.method} ${request.path.slice(0, 120)} -> ${answer.status} ${answer.body.slice(0, 160)}`);
        const problem = judge(request, answer);
        if (problem) failures.push({ index, problem, request, answer });
      } catch (err) {
        count.none++;
        // a request undici refuses to send is a generator bug, not a server failure: say so
        const refused = err instanceof errors.InvalidArgumentError;
        failures.push({ index, problem: refused ? `generator made an unsendable request: ${(err as Error).message}` : `no answer: ${(err as Error).message}`, request });
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await pool.close();
  }
  const distinct = new Map<string, string>();
  for (const f of failures.sort((a, b) => a.index - b.index)) {
    const key = failureKey(f);
    if (!distinct.has(key)) distinct.set(key, describeFailure(f, { service, seed: s.seed, secrets }));
  }
  const rows = [...perOp].map(([id, c]) => `  ${id.padEnd(32)} ${String(c.sent).padStart(6)} ${String(c.ok).padStart(6)} ${String(c.client).padStart(6)} ${String(c.server).padStart(6)} ${String(c.none).padStart(6)}`);
  const summary = [`fuzz ${service}: seed ${s.seed}, ${sent} requests, ${failures.length} failures (${distinct.size} distinct)`, `  ${'operation'.padEnd(32)} ${'sent'.padStart(6)} ${'2xx'.padStart(6)} ${'4xx'.padStart(6)} ${'5xx'.padStart(6)} ${'none'.padStart(6)}`, ...rows].join('\n');
  return { sent, perOp, failures, distinct, summary };
}

/** Test output goes to stdout (vitest shows it beside the test): the summary must be seen. */
function print(text: string): void {
  process.stdout.write(text + '\n');
}

/** Prints the per-operation summary, one reproducer per distinct failure, and the server's error log lines. */
export function printReport(report: FuzzReport, serverLog: string[]): void {
  print(report.summary);
  if (report.distinct.size) print(`distinct failures:\n\n${[...report.distinct.values()].join('\n\n')}`);
  const errors = serverLog.filter((l) => /"level":(50|60)/.test(l));
  if (errors.length) print(`server error log (${errors.length} lines), the first ones:\n${errors.slice(0, 10).map((l) => l.slice(0, 600)).join('\n')}`);
}
