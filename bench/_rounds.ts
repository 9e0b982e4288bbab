// A server row measured in interleaved rounds beside bare node:http and the framework floor
// answering its bytes: on this VM a machine's speed moves by ±30 % from one minute to the next, so
// one window of each (bench/_util.ts `references`) can put a row anywhere; rounds that each start
// one server further on, and the median of the rounds' ratios, move all three alike. Used by the
// guard (bench/floor.ts) and by get_note at 100,000 notes (bench/notes.ts).
import { autocannon, bareServer, cpuMicros, median, ratio, serveFloor, type Load, type LoadResult } from './_util.js';

/** A load's result with the CPU its server spent a request. */
export type Measured = LoadResult & { us: number };

/** Rounds of a row (`MKT_BENCH_FLOOR_ROW_ROUNDS`, default 5: the median of 3 moved a row by 0.06 between runs). */
export const ROW_ROUNDS = Number(process.env.MKT_BENCH_FLOOR_ROW_ROUNDS ?? 5);
/** Seconds of each load (`MKT_BENCH_FLOOR_SECONDS`, default 3). */
export const ROUND_SECONDS = Number(process.env.MKT_BENCH_FLOOR_SECONDS ?? 3);

/**
 * `rounds` rounds of `run` against each URL, each round starting one further on: on this VM a
 * load's place in the round moves its figure (a CPU credit spent by the one before), and a
 * rotation spreads that over all. CPU is the process's (`undefined`: this one, where bare runs).
 */
export async function interleaved<K extends string>(urls: Record<K, string>, pids: Record<K, number | undefined>, run: (url: string) => Promise<LoadResult>, rounds: number): Promise<Record<K, Measured>[]> {
  const keys = Object.keys(urls) as K[];
  const out: Record<K, Measured>[] = [];
  for (let i = 0; i < rounds; i++) {
    const r = {} as Record<K, Measured>;
    for (const k of [...keys.slice(i % keys.length), ...keys.slice(0, i % keys.length)]) {
      const before = cpuMicros(pids[k]);
      const result = await run(urls[k]);
      r[k] = { ...result, us: (cpuMicros(pids[k]) - before) / Math.max(1, result.total) };
    }
    out.push(r);
  }
  return out;
}

/** `  errors N` for the loads' failed and non-2xx answers together, or nothing when there were none. */
export function errorsOf(results: LoadResult[]): string {
  const n = results.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
  return n ? `  errors ${n}` : '';
}

/**
 * One row: `url` of a running daemon (process `pid`) under `load`, beside bare node:http and the
 * floor answering its bytes, in ROW_ROUNDS interleaved rounds of ROUND_SECONDS. Besides the
 * ratios it prints each server's CPU a request and the row's own work (its CPU a request less the
 * floor's): the figure a change to the row moves, and the one the machine's drift moves least.
 * Returns the median ratio to bare node:http.
 */
export async function measureRow(name: string, url: string, pid: number, load: Load, goal: number, token?: string): Promise<number> {
  const sample = await fetch(url, { method: load.method ?? 'GET', headers: load.headers, body: load.body });
  if (!sample.ok) throw new Error(`${name}: HTTP ${sample.status} ${await sample.text()}`);
  const answer = await sample.text();
  const bare = await bareServer(answer);
  const floor = await serveFloor(answer, token);
  try {
    const path = load.method === 'POST' ? '/floor' : '/floor/x';
    const urls = { bare: `${bare.url}${path}`, floor: `${floor.url}${path}`, row: url };
    const pids = { bare: undefined, floor: floor.pid, row: pid };
    const timed = { ...load, seconds: ROUND_SECONDS };
    const run = load.run ?? ((u: string) => autocannon(u, timed));
    // Each warmed by the load it is measured under: a custom run (each request a new machine)
    // takes paths the plain load never does, and V8 was still optimizing them 10-15 s into the
    // load, which the first round paid alone (its ratio the lowest of the three in every run).
    for (const u of Object.values(urls)) await (load.run ? load.run(u) : autocannon(u, { ...load, seconds: 1 }));
    const rounds = await interleaved(urls, pids, run, ROW_ROUNDS);
    const med = (k: keyof typeof urls, f: (r: Measured) => number) => median(rounds.map((r) => f(r[k])));
    const rel = (k: 'floor' | 'row') => median(rounds.map((r) => r[k].rps / r.bare.rps));
    const line = (label: string, k: keyof typeof urls, rest: string) =>
      console.log(`${label.padEnd(30)} ${med(k, (r) => r.rps).toFixed(0).padStart(7)} req/s  p99 ${String(med(k, (r) => r.p99)).padStart(4)} ms  ${med(k, (r) => r.us).toFixed(0).padStart(3)} µs CPU a request${rest}${errorsOf(rounds.map((r) => r[k]))}`);
    line(`bare node:http (${name})`, 'bare', ' (baseline)');
    line(`floor (${name})`, 'floor', `  ratio ${rel('floor').toFixed(2)}`);
    const own = median(rounds.map((r) => r.row.us - r.floor.us));
    const mark = rel('row') >= goal ? '' : '  MISSED';
    line(name, 'row', `  ratio ${rel('row').toFixed(2)} (goal >= ${goal.toFixed(2)}; ${median(rounds.map((r) => r.row.rps / r.floor.rps)).toFixed(2)} of floor; own work ${own.toFixed(0)} µs; rounds ${rounds.map((r) => ratio(r.row.rps, r.bare.rps)).join(', ')})${mark}`);
    return rel('row');
  } finally {
    bare.server.close();
    await floor.stop();
  }
}
