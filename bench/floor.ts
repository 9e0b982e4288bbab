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
// `MKT_BENCH_FLOOR_ROUNDS` (default 10: one run's rounds of the floor's GET spread from 0.53 to 1.42,
// and the median of 6 moved by 0.17 between runs) and `MKT_BENCH_FLOOR_ROW_ROUNDS` (default 5; on a VM whose
// speed moves by ±30 % from one minute to the next, the median of 3 moved a row by 0.06) rounds of
// `MKT_BENCH_FLOOR_SECONDS` (default 3) a load; `MKT_BENCH_FLOOR_ROWS=0` skips the rows;
// `MKT_BENCH_FLOOR_ONLY=verify` runs only the rows whose name holds that text, without the floor's
// rounds (a row's own before and after). get_note runs here on a repository of one note; at
// 100,000 notes, and put_note, in `npm run bench -- notes`; blob put in `npm run bench -- sync-client`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LicenseAdmin } from '../daemon/services/marketplace/license/admin.js';
import { autocannon, bareServer, BENCH_NEW_TICKET, BENCH_TICKETS_TOKEN, median, ratio, serveBuilt, serveFloor, spawnListening, type Load, type ServerProcess } from './_util.js';
import { errorsOf, interleaved, measureRow, ROUND_SECONDS as SECONDS } from './_rounds.js';
import { autocannonUnique, benchKey } from './license.js';
import { pushEntries, signedIn } from './sync.js';
import { noteOwner, seedNote } from './_note-seed.js';

const ROUNDS = Number(process.env.MKT_BENCH_FLOOR_ROUNDS ?? 10);
/** A ticket-sized answer: what the rows answer is of this order. */
const BODY = JSON.stringify({ id: 'T-1', title: 'printer on floor 3 is offline', status: 'open', priority: 'normal', updated_at: '2026-11-29T00:00:00.000Z' });
const POST_BODY = JSON.stringify({ title: 'printer on floor 3 is offline', body: 'since this morning', priority: 'normal' });
const GOALS = { GET: 0.8, POST: 0.65 } as const;
const ONLY = process.env.MKT_BENCH_FLOOR_ONLY || undefined;

/** Plain fastify (bench/_fastify-server.mjs): what the framework costs before any plugin of ours. */
function servePlainFastify(body: string): Promise<ServerProcess> {
  return spawnListening('plain fastify', [join(import.meta.dirname, '_fastify-server.mjs')], { FLOOR_BODY: body });
}

/** A row of the guard, unless MKT_BENCH_FLOOR_ONLY names another. */
async function row(name: string, url: string, pid: number, load: Load, goal: number, token?: string): Promise<void> {
  if (ONLY !== undefined && !name.includes(ONLY)) return;
  await measureRow(name, url, pid, load, goal, token);
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
  const notes = await noteOwner(dir, 'reader');
  const svc = await serveBuilt('marketplace', dir);
  try {
    const json = { 'content-type': 'application/json' };
    // An anonymous read of a public repository's note, on a repository of one note (bench/notes.ts
    // reads it at 100,000): a note read before is answered from the index's cache either way.
    if (ONLY === undefined || 'get_note'.includes(ONLY)) await row('get_note', `${svc.url}${await seedNote(dir, svc.url, notes)}`, svc.pid, {}, 0.65);
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
        console.log(`${`${method} ${k === 'bare' ? 'bare node:http' : k === 'fastify' ? 'plain fastify' : 'floor'}`.padEnd(24)} ${rps.toFixed(0).padStart(7)} req/s${rel}${goal}${errorsOf(rounds.map((r) => r[k]))}`);
      }
    }
  } finally {
    bare.server.close();
    await fastify.stop();
    await floor.stop();
  }
}
