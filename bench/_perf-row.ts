// Where one server row's own time goes: the row (the built daemon) and its framework floor
// (bench/_floor-server.mjs, answering the same bytes) each run under the bench's load while
// `perf record` samples them, and bench/_perf-split.ts charges every sample to a part. Printed side
// by side in µs per request, with the row's excess over the floor: that excess is the row's own work.
//
//   npm run build && node --import tsx bench/_perf-row.ts status|verify|verify-new|heartbeat|pull|ping-get|ping-post|note|ticket
//
// verify-new names a new machine in every request (an activation and an Ed25519 signature each).
//
// MKT_PERF_AGAINST=bare compares the row with bare node:http in a process of its own (bench/_bare-server.ts,
// answering the same bytes) instead of the floor: the whole gap the ratio measures.
//
// MKT_PERF_KEEP=1 keeps the recordings (row.data, floor.data) for `perf report` or a closer split;
// MKT_PERF_WARM=S warms each server S seconds first (default 2; the ping path compiles for ~6); a row
// with a load of its own (verify-new) is warmed by one run of that load.
//
// Needs `perf` (linux-perf) and permission to record another process of the same user.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LicenseAdmin } from '../daemon/services/marketplace/license/admin.js';
import { autocannon, BENCH_NEW_TICKET, BENCH_TICKETS_TOKEN, serveBuilt, serveFloor, spawnListening, type Load, type ServerProcess } from './_util.js';
import { splitRecording } from './_perf-split.js';
import { noteOwner, seedNote } from './_note-seed.js';
import { pushEntries, signedIn } from './sync.js';
import { autocannonUnique, benchKey } from './license.js';

const json = { 'content-type': 'application/json' };
const SECONDS = 5;

interface Row {
  path: string;
  load: Load;
  token?: string;
  /** The service that serves the row (marketplace unless named). */
  service?: 'marketplace' | 'monitor' | 'tickets';
  /** The service's environment (the tickets token). */
  env?: Record<string, string>;
  /** A request made once before the row's load (a seat taken for the heartbeats). */
  setup?: { path: string; body: string };
  /** The floor's load, where the row's own cannot be sent to the floor (a ping's text log). */
  floorLoad?: Load;
}

type LicenseRowName = 'status' | 'verify' | 'verify-new' | 'heartbeat';

async function licenseRow(dir: string, which: LicenseRowName): Promise<Row> {
  const admin = await LicenseAdmin.open({ dataDir: dir });
  if (which === 'heartbeat') {
    // A held seat of a floating key, renewed by every request (as bench/license.ts's row).
    await admin.createItem({ id: 'seats', name: 'Seats', licenseTemplate: null, maxActivations: 1000, verification: true, activation: 'floating', leaseSeconds: 900 });
    const [f] = await admin.issueKeys({ itemId: 'seats', count: 1, expiresAt: null, licensee: null });
    const seat: Load = { method: 'POST', headers: json, body: JSON.stringify({ key: f!.key, machine_fingerprint: 'bench-machine' }) };
    return { path: '/api/v1/license/heartbeat', load: seat, setup: { path: '/api/v1/keys/validate', body: JSON.stringify({ key: f!.key, machine_id: 'bench-machine', activate: true }) } };
  }
  const { key } = await benchKey(admin);
  if (which === 'status') return { path: '/api/v1/keys/status', load: { method: 'POST', headers: json, body: JSON.stringify({ key: key }) } };
  const verify: Load = { method: 'POST', headers: json, body: JSON.stringify({ key: key, machine_fingerprint: 'bench-machine' }) };
  return { path: '/api/v1/license/verify', load: which === 'verify' ? verify : { ...verify, run: (url) => autocannonUnique(url, key) } };
}

async function pullRow(dir: string): Promise<Row> {
  // Seeding runs on a server of its own, so the recording holds only the load.
  const seeder = await serveBuilt('marketplace', dir);
  try {
    const api = await signedIn(seeder, dir);
    await pushEntries(api, 20_000);
    const headers = { ...json, authorization: `Bearer ${api.token}` };
    return { path: '/api/v1/sync/pull', load: { method: 'POST', headers, body: JSON.stringify({ cursor: 19_990, limit: 10 }) }, token: api.token };
  } finally {
    await seeder.stop();
  }
}

/** An anonymous get_note of a public repository's note (as bench/notes.ts reads, on a small repository). */
async function noteRow(dir: string): Promise<Row> {
  const owner = await noteOwner(dir, 'bench');
  const seeder = await serveBuilt('marketplace', dir);
  try {
    return { path: await seedNote(dir, seeder.url, owner), load: {} };
  } finally {
    await seeder.stop();
  }
}

/** A heartbeat target's ping, GET or POST with a small run log (as bench/monitor-heartbeat.ts sends). */
function pingRow(dir: string, post: boolean): Row {
  const key = 'bench-ping-key-0123456789';
  writeFileSync(join(dir, 'monitor.yaml'), `token: t\ntargets:\n  job:\n    interval: 10m\n    heartbeat: { period: 1h, grace: 1h, ping_key: ${key} }\n`);
  if (!post) return { service: 'monitor', path: `/ping/${key}`, load: {} };
  const log = 'rsync: 1,204 files, 38 MiB sent\nbackup finished in 41 s\n'.repeat(3);
  return {
    service: 'monitor',
    path: `/ping/${key}/0`,
    load: { method: 'POST', headers: { 'content-type': 'text/plain' }, body: log },
    // The floor takes JSON bodies only: a JSON body of the same length.
    floorLoad: { method: 'POST', headers: json, body: JSON.stringify({ log: log.slice(0, log.length - 11) }) },
  };
}

/** GET /tickets/{id} of one ticket, with the node's shared token (as bench/floor.ts's row). */
async function ticketRow(dir: string): Promise<Row> {
  const token = BENCH_TICKETS_TOKEN;
  const env = { MKT_TICKETS_TOKEN: token };
  const seeder = await serveBuilt('tickets', dir, env);
  try {
    const created = (await (await fetch(`${seeder.url}/tickets`, { method: 'POST', headers: { ...json, authorization: `Bearer ${token}` }, body: BENCH_NEW_TICKET })).json()) as { id: string };
    return { service: 'tickets', env, path: `/tickets/${created.id}`, load: { headers: { authorization: `Bearer ${token}` } }, token };
  } finally {
    await seeder.stop();
  }
}

/** Samples `server` for SECONDS under the load (after a warm-up) and splits the recording. */
async function record(server: ServerProcess, url: string, load: Load, file: string): Promise<{ rps: number; parts: Map<string, number>; total: number }> {
  const run = load.run ?? ((u: string) => autocannon(u, { ...load, seconds: SECONDS }));
  // Warmed by the load recorded: a custom run (each request a new machine) takes paths the plain
  // load does not, which V8 went on optimizing for 10-15 s (bench/README.md, sixteenth session).
  if (load.run) await load.run(url);
  else await autocannon(url, { ...load, seconds: Number(process.env.MKT_PERF_WARM ?? 2) });
  const perf = spawn('perf', ['record', '-F', '999', '-g', '-p', String(server.pid), '-o', file, '--', 'sleep', String(SECONDS)], { stdio: 'ignore' });
  const done = new Promise<void>((resolve, reject) => {
    perf.on('error', reject);
    perf.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`perf record exited ${code}`))));
  });
  const r = await run(url);
  await done;
  return { rps: r.rps, ...splitRecording(file, server.pid) };
}

/** bench/_util.ts bareServer in a process of its own (bench/_bare-server.ts), so perf samples it alone. */
function serveBare(body: string): Promise<ServerProcess> {
  return spawnListening('bare node:http', ['--perf-basic-prof', '--import', 'tsx', join(import.meta.dirname, '_bare-server.ts')], { BARE_BODY: body });
}

const ROWS = ['status', 'verify', 'verify-new', 'heartbeat', 'pull', 'ping-get', 'ping-post', 'note', 'ticket'] as const;
const which = ROWS.find((r) => r === process.argv[2]);
if (which === undefined) {
  console.error(`usage: bench/_perf-row.ts ${ROWS.join('|')}`);
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'mkt-perf-row-'));
try {
  const row = which === 'ticket' ? await ticketRow(dir) : which === 'note' ? await noteRow(dir) : which === 'pull' ? await pullRow(dir) : which === 'ping-get' || which === 'ping-post' ? pingRow(dir, which === 'ping-post') : await licenseRow(dir, which);
  const ours = await serveBuilt(row.service ?? 'marketplace', dir, row.env ?? {}, ['--perf-basic-prof']);
  let answer: string;
  let mine: Awaited<ReturnType<typeof record>>;
  try {
    if (row.setup) await (await fetch(`${ours.url}${row.setup.path}`, { method: 'POST', headers: json, body: row.setup.body })).text();
    answer = await (await fetch(`${ours.url}${row.path}`, { method: row.load.method, headers: row.load.headers, body: row.load.body })).text();
    mine = await record(ours, `${ours.url}${row.path}`, row.load, join(dir, 'row.data'));
  } finally {
    await ours.stop();
  }
  const bare = process.env.MKT_PERF_AGAINST === 'bare';
  const floorServer = bare ? await serveBare(answer) : await serveFloor(answer, row.token, ['--perf-basic-prof']);
  let floor: Awaited<ReturnType<typeof record>>;
  try {
    floor = await record(floorServer, bare ? `${floorServer.url}${row.path}` : `${floorServer.url}/floor${row.load.method === 'POST' ? '' : '/1'}`, row.floorLoad ?? row.load, join(dir, 'floor.data'));
  } finally {
    await floorServer.stop();
  }
  const us = (r: typeof mine, part: string): number => ((r.parts.get(part) ?? 0) / r.total) * (1e6 / r.rps);
  const names = [...new Set([...mine.parts.keys(), ...floor.parts.keys()])].sort((a, b) => us(mine, b) - us(floor, b) - (us(mine, a) - us(floor, a)));
  const against = bare ? 'bare' : 'floor';
  console.log(`${which}: ${mine.rps.toFixed(0)} req/s; ${against} ${floor.rps.toFixed(0)} req/s (µs of server CPU per request, under perf)`);
  console.log(`${'part'.padEnd(34)} ${'row'.padStart(7)} ${against.padStart(7)} ${'own'.padStart(7)}`);
  for (const n of names) console.log(`${n.padEnd(34)} ${us(mine, n).toFixed(1).padStart(7)} ${us(floor, n).toFixed(1).padStart(7)} ${(us(mine, n) - us(floor, n)).toFixed(1).padStart(7)}`);
  console.log(`${'total'.padEnd(34)} ${(1e6 / mine.rps).toFixed(1).padStart(7)} ${(1e6 / floor.rps).toFixed(1).padStart(7)} ${(1e6 / mine.rps - 1e6 / floor.rps).toFixed(1).padStart(7)}`);
} finally {
  if (process.env.MKT_PERF_KEEP === '1') console.log(`recordings kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
