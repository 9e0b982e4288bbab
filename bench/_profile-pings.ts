// Profiles the real monitor under heartbeat pings: `npm run build`, then
// `node --import tsx bench/_profile-pings.ts`. The server runs with --cpu-prof under 20 keep-alive
// connections of GET /ping/{key}; its hottest functions by self time, and by file, are printed.
// PROFILE_ROW=heartbeat profiles the marketplace under license heartbeats of a held floating seat.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autocannon, frameName, serveBuilt, shortUrl, topShares, type Load, type ProfileFrame, type ServerProcess } from './_util.js';

interface Node {
  id: number;
  callFrame: ProfileFrame;
}
const dir = mkdtempSync(join(tmpdir(), 'prof-pings-'));
const profDir = mkdtempSync(join(tmpdir(), 'cpuprof-pings-'));
const profiled = ['--cpu-prof', `--cpu-prof-dir=${profDir}`];
let mon: ServerProcess;
let url: string;
let load: Partial<Load>;
if (process.env.PROFILE_ROW === 'heartbeat') {
  const admin = (args: string[]): string => {
    const r = spawnSync(process.execPath, [join(import.meta.dirname, '..', 'bin', 'mkt'), 'admin', '--data-dir', dir, ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`mkt admin ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  admin(['migrate']);
  admin(['item', 'create', 'seats', '--name', 'Seats', '--max-activations', '1000', '--activation', 'floating', '--lease', '15m']);
  const key = (JSON.parse(admin(['key', 'issue', 'seats', '--json'])) as { key: string }[])[0]!.key;
  mon = await serveBuilt('marketplace', dir, {}, profiled);
  const json = { 'content-type': 'application/json' };
  await fetch(`${mon.url}/api/v1/keys/validate`, { method: 'POST', headers: json, body: JSON.stringify({ key, machine_id: 'bench-machine', activate: true }) });
  url = `${mon.url}/api/v1/license/heartbeat`;
  load = { method: 'POST', headers: json, body: JSON.stringify({ key, machine_fingerprint: 'bench-machine' }) };
} else {
  const key = 'bench-ping-key-0123456789';
  writeFileSync(join(dir, 'monitor.yaml'), `token: t\ntargets:\n  job:\n    interval: 10m\n    heartbeat: { period: 1h, ping_key: ${key} }\n`);
  mon = await serveBuilt('monitor', dir, {}, profiled);
  // PING_POST=1 profiles POST /ping/{key}/0 with a small log, as `mkt monitor run` sends it.
  const post = process.env.PING_POST === '1';
  url = post ? `${mon.url}/ping/${key}/0` : `${mon.url}/ping/${key}`;
  load = post ? { method: 'POST' as const, body: 'rsync: 1,204 files, 38 MiB sent\nbackup finished in 41 s\n'.repeat(3), headers: { 'content-type': 'text/plain' } } : {};
}
await autocannon(url, { ...load, seconds: 3 });
const r = await autocannon(url, { ...load, seconds: Number(process.env.SECONDS ?? 5) });
console.log(`${Math.round(r.rps)} req/s under the profiler`);
await mon.stop();
const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'))!;
const prof = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as { nodes: Node[]; samples: number[] };
const counts = new Map<number, number>();
for (const s of prof.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
const self = new Map<string, number>();
const byFile = new Map<string, number>();
for (const n of prof.nodes) {
  const c = counts.get(n.id) ?? 0;
  self.set(frameName(n.callFrame), (self.get(frameName(n.callFrame)) ?? 0) + c);
  byFile.set(shortUrl(n.callFrame.url), (byFile.get(shortUrl(n.callFrame.url)) ?? 0) + c);
}
const total = prof.samples.length;
console.log(`profile: ${join(profDir, file)} (${total} samples)\n\nby function (self):\n${topShares(self, total, 30)}\n\nby file (self):\n${topShares(byFile, total, 25)}`);
