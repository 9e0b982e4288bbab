// The framework floor against bare node:http (issue 37's guard): bench/_floor-server.mjs (buildServer
// with every shared plugin, the request line at info, no work of its own) and plain fastify (one
// route with a response schema, no plugins, no logger) beside a bare node:http server answering the
// same bytes, for a GET and for a POST with a JSON body. Then the server rows of issue 37 on the
// built daemons (`npm run build` first; small seeds, so they take seconds to set up), each beside
// bare node:http and the floor answering its bytes. Every comparison runs in interleaved rounds
// (each round starting one server further on) and each ratio is the median of the rounds' ratios,
// so a machine whose speed drifts between windows moves all alike. Each server's CPU a request is
// printed beside its ratio, and for a row its own work (its CPU a request less the floor's): a
// change that adds a hook, a log field or a query shows its price there at once.
// `MKT_BENCH_FLOOR_ROUNDS` (default 6) and `MKT_BENCH_FLOOR_ROW_ROUNDS` (default 5; on a VM whose
// speed moves by ±30 % from one minute to the next, the median of 3 moved a row by 0.06) rounds of
// `MKT_BENCH_FLOOR_SECONDS` (default 3) a load; `MKT_BENCH_FLOOR_ROWS=0` skips the rows;
// `MKT_BENCH_FLOOR_ONLY=verify` runs only the rows whose name holds that text, without the floor's
// rounds (a row's own before and after). The notes rows need a hosted repository of 100,000 notes:
// `npm run bench -- notes`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LicenseAdmin } from '../daemon/services/marketplace/license/admin.js';
import { autocannon, bareServer, BENCH_NEW_TICKET, BENCH_TICKETS_TOKEN, cpuMicros, median, ratio, serveBuilt, serveFloor, spawnListening, type Load, type LoadResult, type ServerProcess } from './_util.js';
import { autocannonUnique, benchKey } from './license.js';
import { pushEntries, signedIn } from './sync.js';

const ROUNDS = Number(process.env.MKT_BENCH_FLOOR_ROUNDS ?? 6);
const SECONDS = Number(process.env.MKT_BENCH_FLOOR_SECONDS ?? 3);
/** A ticket-sized answer: what the rows answer is of this order. */
const BODY = JSON.stringify({ id: 'T-1', title: 'printer on floor 3 is offline', status: 'open', priority: 'normal', updated_at: '2026-11-29T00:00:00.000Z' });
const POST_BODY = JSON.stringify({ title: 'printer on floor 3 is offline', body: 'since this morning', priority: 'normal' });
const GOALS = { GET: 0.8, POST: 0.65 } as const;
const ONLY = process.env.MKT_BENCH_FLOOR_ONLY || undefined;

/** Plain fastify (bench/_fastify-server.mjs): what the framework costs before any plugin of ours. */
function servePlainFastify(body: string): Promise<ServerProcess> {
  return spawnListening('plain fastify', [join(import.meta.dirname, '_fastify-server.mjs')], { FLOOR_BODY: body });
}

const ROW_ROUNDS = Number(process.env.MKT_BENCH_FLOOR_ROW_ROUNDS ?? 5);

/**
 * One row: `url` of a running daemon (process `pid`) under `load`, beside bare node:http and the
 * floor answering its bytes, in ROW_ROUNDS interleaved rounds as the floor's are. Besides the
 * ratios it prints each server's CPU a request and the row's own work (its CPU a request less the
 * floor's): the figure a change to the row moves, and the one the machine's drift moves least.
 */
async function row(name: string, url: string, pid: number, load: Load, goal: number, token?: string): Promise<void> {
  if (ONLY !== undefined && !name.includes(ONLY)) return;
  const sample = await fetch(url, { method: load.method ?? 'GET', headers: load.headers, body: load.body });
  if (!sample.ok) throw new Error(`${name}: HTTP ${sample.status} ${await sample.text()}`);
  const answer = await sample.text();
  const bare = await bareServer(answer);
  const floor = await serveFloor(answer, token);
  try {
    const path = load.method === 'POST' ? '/floor' : '/floor/x';
    const urls = { bare: `${bare.url}${path}`, floor: `${floor.url}${path}`, row: url };
    const pids = { bare: undefined, floor: floor.pid, row: pid };
    const timed = { ...load, seconds: SECONDS };
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
    line(name, 'row', `  ratio ${rel('row').toFixed(2)} (goal >= ${goal.toFixed(2)}; ${median(rounds.map((r) => r.row.rps / r.floor.rps)).toFixed(2)} of floor; own work ${own.toFixed(0)} µs; rounds ${rounds.map((r) => ratio(r.row.rps, r.bare.rps)).join(', ')})`);
  } finally {
    bare.server.close();
    await floor.stop();
  }
}

/** A load's result with the CPU its server spent a request. */
type Measured = LoadResult & { us: number };

/**
 * `rounds` rounds of `run` against each URL, each round starting one further on: on this VM a
 * load's place in the round moves its figure (a CPU credit spent by the one before), and a
 * rotation spreads that over all. CPU is the process's (`undefined`: this one, where bare runs).
 */
async function interleaved<K extends string>(urls: Record<K, string>, pids: Record<K, number | undefined>, run: (url: string) => Promise<LoadResult>, rounds: number): Promise<Record<K, Measured>[]> {
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

function errorsOf(results: LoadResult[]): string {
  const n = results.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
  return n ? `  errors ${n}` : '';
}

async function ticketRows(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-floor-tickets-'));
  const token = BENCH_TICKETS_TOKEN;
  const node = await serveBuilt('tickets', dir, { MKT_TICKETS_TOKEN: token });
  try {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const body = BENCH_NEW_TICKET;
    const created = (await (await fetch(`${node.url}/tickets`, { method: 'POST', headers, body })).json()) as { id: string };
    await row('GET /tickets/{id}', `${node.url}/tickets/${created.id}`, node.pid, { headers: { authorization: headers.authorization } }, 0.75, token);
    await row('POST /tickets', `${node.url}/tickets`, node.pid, { method: 'POST', headers, body }, 0.5, token);
  } finally {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function marketplaceRows(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-floor-marketplace-'));
  const admin = await LicenseAdmin.open({ dataDir: dir });
  const { key } = await benchKey(admin);
  await admin.close();
  const svc = await serveBuilt('marketplace', dir);
  try {
    const json = { 'content-type': 'application/json' };
    await row('POST /api/v1/keys/status', `${svc.url}/api/v1/keys/status`, svc.pid, { method: 'POST', headers: json, body: JSON.stringify({ key: key }) }, 0.6);
    const verify: Load = { method: 'POST', headers: json, body: JSON.stringify({ key: key, machine_fingerprint: 'bench-machine' }) };
    await row('verify, known machine', `${svc.url}/api/v1/license/verify`, svc.pid, verify, 0.5);
    await row('verify, each a new machine', `${svc.url}/api/v1/license/verify`, svc.pid, { ...verify, run: (u) => autocannonUnique(u, key, SECONDS) }, 0.3);
    if (ONLY !== undefined && !'sync_pull (10 entries)'.includes(ONLY)) return;
    const api = await signedIn(svc, dir);
    await pushEntries(api, 1000);
    const pull: Load = { method: 'POST', headers: { ...json, authorization: `Bearer ${api.token}` }, body: JSON.stringify({ cursor: 990, limit: 10 }) };
    await row('sync_pull (10 entries)', `${svc.url}/api/v1/sync/pull`, svc.pid, pull, 0.5, api.token);
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  if (ONLY === undefined) await floorRounds();
  if (process.env.MKT_BENCH_FLOOR_ROWS === '0') return;
  console.log('\n-- the rows beside the floor (each: bare node:http and the floor answering its bytes, then the row) --');
  await ticketRows();
  await marketplaceRows();
}

async function floorRounds(): Promise<void> {
  const bare = await bareServer(BODY);
  const fastify = await servePlainFastify(BODY);
  const floor = await serveFloor(BODY);
  try {
    for (const method of ['GET', 'POST'] as const) {
      const load = method === 'GET' ? { method, seconds: SECONDS } : { method, seconds: SECONDS, body: POST_BODY, headers: { 'content-type': 'application/json' } };
      const path = method === 'GET' ? '/floor/x' : '/floor';
      const urls = { bare: bare.url, fastify: fastify.url, floor: floor.url };
      // Warm each once: a server just started is still compiling its hot paths.
      for (const u of Object.values(urls)) await autocannon(`${u}${path}`, { ...load, seconds: 1 });
      const pids = { bare: undefined, fastify: fastify.pid, floor: floor.pid };
      const rounds = await interleaved(urls, pids, (u) => autocannon(`${u}${path}`, load), ROUNDS);
      for (const k of ['bare', 'fastify', 'floor'] as const) {
        const rps = median(rounds.map((r) => r[k].rps));
        const us = `  ${median(rounds.map((r) => r[k].us)).toFixed(0).padStart(3)} µs CPU a request`;
        const rel = k === 'bare' ? `${us} (baseline)` : `${us}  ratio ${median(rounds.map((r) => r[k].rps / r.bare.rps)).toFixed(2)}, by CPU ${median(rounds.map((r) => r.bare.us / r[k].us)).toFixed(2)}`;
        const goal = k === 'floor' ? ` (goal >= ${GOALS[method].toFixed(2)}; rounds ${rounds.map((r) => ratio(r.floor.rps, r.bare.rps)).join(', ')})` : '';
        const errs = rounds.reduce((n, r) => n + r[k].errors + r[k].non2xx, 0);
        console.log(`${`${method} ${k === 'bare' ? 'bare node:http' : k === 'fastify' ? 'plain fastify' : 'floor'}`.padEnd(24)} ${rps.toFixed(0).padStart(7)} req/s${rel}${goal}${errs ? `  errors ${errs}` : ''}`);
      }
    }
  } finally {
    bare.server.close();
    await fastify.stop();
    await floor.stop();
  }
}
