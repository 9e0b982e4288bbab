// The framework floor against bare node:http (issue 37's guard): bench/_floor-server.mjs (buildServer
// with every shared plugin, the request line at info, no work of its own) and plain fastify (one
// route with a response schema, no plugins, no logger) beside a bare node:http server answering the
// same bytes, for a GET and for a POST with a JSON body. Rounds are interleaved (bare, fastify,
// floor, then again, each round starting one further on) and each ratio is the median of the
// rounds' ratios, so a machine whose speed drifts between windows moves all three alike. A change that adds a hook or a log field shows its
// price here at once. `MKT_BENCH_FLOOR_ROUNDS` (default 6), `MKT_BENCH_FLOOR_SECONDS` (default 3).
// The floor itself runs on the build, as the rows do (`npm run build` first). Then the server
// rows of issue 37 on the built daemons (small seeds, so
// they take seconds to set up), each beside bare node:http and the floor answering its bytes:
// `MKT_BENCH_FLOOR_ROWS=0` skips them; `MKT_BENCH_FLOOR_ONLY=verify` runs only the rows whose name
// holds that text, without the floor's rounds (a row's own before and after). The notes rows need a hosted repository of 100,000 notes:
// `npm run bench -- notes`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LicenseAdmin } from '../daemon/services/marketplace/license/admin.js';
import { autocannon, bareServer, printRow, ratio, references, serveBuilt, serveFloor, spawnListening, warmLoad, type Load, type LoadResult, type ServerProcess } from './_util.js';
import { autocannonUnique } from './license.js';
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

/** CPU time (user + system) in µs a process has used so far; this process's own for `undefined`. */
function cpuMicros(pid: number | undefined): number {
  if (pid === undefined) {
    const u = process.cpuUsage();
    return u.user + u.system;
  }
  // Fields 14 and 15 of /proc/PID/stat (after the command's closing parenthesis), in clock ticks of 10 ms.
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

/** One row: `path` of a running daemon under `load`, beside bare node:http and the floor answering its bytes. */
async function row(name: string, url: string, load: Load, goal: number, token?: string): Promise<void> {
  if (ONLY !== undefined && !name.includes(ONLY)) return;
  const sample = await fetch(url, { method: load.method ?? 'GET', headers: load.headers, body: load.body });
  if (!sample.ok) throw new Error(`${name}: HTTP ${sample.status} ${await sample.text()}`);
  const refs = await references(name, await sample.text(), load, token);
  printRow(name, await warmLoad(url, load), refs, goal);
}

async function ticketRows(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-floor-tickets-'));
  const token = 'bench-token-0123456789abcdef';
  const node = await serveBuilt('tickets', dir, { MKT_TICKETS_TOKEN: token });
  try {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ title: 'printer error after update', description: 'the office printer shows an error when printing duplex', priority: 'high', channel: 'email', tags: ['hardware'] });
    const created = (await (await fetch(`${node.url}/tickets`, { method: 'POST', headers, body })).json()) as { id: string };
    await row('GET /tickets/{id}', `${node.url}/tickets/${created.id}`, { headers: { authorization: headers.authorization } }, 0.75, token);
    await row('POST /tickets', `${node.url}/tickets`, { method: 'POST', headers, body }, 0.5, token);
  } finally {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function marketplaceRows(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-floor-marketplace-'));
  const admin = await LicenseAdmin.open({ dataDir: dir });
  await admin.createItem({ id: 'bench', name: 'Bench', licenseTemplate: null, maxActivations: null, verification: true });
  const [k] = await admin.issueKeys({ itemId: 'bench', count: 1, expiresAt: null, licensee: null });
  await admin.close();
  const svc = await serveBuilt('marketplace', dir);
  try {
    const json = { 'content-type': 'application/json' };
    await row('POST /api/v1/keys/status', `${svc.url}/api/v1/keys/status`, { method: 'POST', headers: json, body: JSON.stringify({ key: k!.key }) }, 0.6);
    const verify: Load = { method: 'POST', headers: json, body: JSON.stringify({ key: k!.key, machine_fingerprint: 'bench-machine' }) };
    await row('verify, known machine', `${svc.url}/api/v1/license/verify`, verify, 0.5);
    await row('verify, each a new machine', `${svc.url}/api/v1/license/verify`, { ...verify, run: (u) => autocannonUnique(u, k!.key) }, 0.3);
    if (ONLY !== undefined && !'sync_pull (10 entries)'.includes(ONLY)) return;
    const api = await signedIn(svc, dir);
    await pushEntries(api, 1000);
    const pull: Load = { method: 'POST', headers: { ...json, authorization: `Bearer ${api.token}` }, body: JSON.stringify({ cursor: 990, limit: 10 }) };
    await row('sync_pull (10 entries)', `${svc.url}/api/v1/sync/pull`, pull, 0.5, api.token);
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
      const rounds: Record<keyof typeof urls, LoadResult & { us: number }>[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const r = {} as Record<keyof typeof urls, LoadResult & { us: number }>;
        // Each round starts with a different server: on this VM a load's place in the round moves
        // its figure (a CPU credit spent by the one before), and a rotation spreads that over all.
        const keys = Object.keys(urls) as (keyof typeof urls)[];
        for (const k of [...keys.slice(i % keys.length), ...keys.slice(0, i % keys.length)]) {
          const before = cpuMicros(pids[k]);
          const result = await autocannon(`${urls[k]}${path}`, load);
          r[k] = { ...result, us: (cpuMicros(pids[k]) - before) / (result.rps * SECONDS) };
        }
        rounds.push(r);
      }
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
