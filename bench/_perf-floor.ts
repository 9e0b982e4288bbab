// Where the floor's time goes beside plain fastify's: each (bench/_floor-server.mjs and
// bench/_fastify-server.mjs, started with --perf-basic-prof) runs under a GET or POST load while
// `perf record` samples it, and the recordings are split by part (bench/_perf-split.ts) in µs a
// request. `node --import tsx bench/_perf-floor.ts GET|POST` (needs perf).
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autocannon, serveFloor, spawnListening, type ServerProcess } from './_util.js';
import { splitRecording } from './_perf-split.js';

const method = (process.argv[2] ?? 'GET') as 'GET' | 'POST';
const BODY = JSON.stringify({ id: 'T-1', title: 'printer on floor 3 is offline', status: 'open', priority: 'normal', updated_at: '2026-11-29T00:00:00.000Z' });
const load = method === 'GET' ? { method, seconds: 7 } : { method, seconds: 7, body: JSON.stringify({ title: 'printer on floor 3 is offline', body: 'since this morning', priority: 'normal' }), headers: { 'content-type': 'application/json' } };
const path = method === 'GET' ? '/floor/x' : '/floor';
const dir = mkdtempSync(join(tmpdir(), 'mkt-perf-floor-'));

async function record(server: ServerProcess, name: string): Promise<{ rps: number; parts: Map<string, number>; total: number }> {
  await autocannon(`${server.url}${path}`, { ...load, seconds: 2 });
  const data = join(dir, `${name}.data`);
  const running = autocannon(`${server.url}${path}`, load);
  await new Promise((r) => setTimeout(r, 1000));
  await new Promise<void>((resolve, reject) => {
    const p = spawn('perf', ['record', '-F', '999', '-g', '-p', String(server.pid), '-o', data, '--', 'sleep', '5'], { stdio: 'ignore' });
    p.on('error', reject);
    p.on('exit', () => resolve());
  });
  const r = await running;
  return { rps: r.rps, ...splitRecording(data, server.pid) };
}

const servers: [string, () => Promise<ServerProcess>][] = [
  ['fastify', () => spawnListening('plain fastify', ['--perf-basic-prof', join(import.meta.dirname, '_fastify-server.mjs')], { FLOOR_BODY: BODY })],
  ['floor', () => serveFloor(BODY, undefined, ['--perf-basic-prof'])],
];
const results = new Map<string, Awaited<ReturnType<typeof record>>>();
for (const [name, start] of servers) {
  const s = await start();
  try {
    results.set(name, await record(s, name));
  } finally {
    await s.stop();
  }
}
const a = results.get('fastify')!;
const b = results.get('floor')!;
const us = (r: typeof a, n: string): number => ((r.parts.get(n) ?? 0) / r.total) * (1e6 / r.rps);
const names = [...new Set([...a.parts.keys(), ...b.parts.keys()])].sort((x, y) => us(b, y) - us(a, y) - (us(b, x) - us(a, x)));
console.log(`${method}: plain fastify ${a.rps.toFixed(0)} req/s, floor ${b.rps.toFixed(0)} req/s (µs of server CPU a request, under perf)`);
console.log(`${'part'.padEnd(34)} ${'fastify'.padStart(8)} ${'floor'.padStart(8)} ${'excess'.padStart(8)}`);
for (const n of names) console.log(`${n.padEnd(34)} ${us(a, n).toFixed(1).padStart(8)} ${us(b, n).toFixed(1).padStart(8)} ${(us(b, n) - us(a, n)).toFixed(1).padStart(8)}`);
console.log(`${'total'.padEnd(34)} ${(1e6 / a.rps).toFixed(1).padStart(8)} ${(1e6 / b.rps).toFixed(1).padStart(8)} ${(1e6 / b.rps - 1e6 / a.rps).toFixed(1).padStart(8)}`);
console.log(`recordings in ${dir}`);
