// Profiles the real monitor under heartbeat pings: `npm run build`, then
// `node --import tsx bench/_profile-pings.ts`. The server runs with --cpu-prof under 20 keep-alive
// connections of GET /ping/{key}; its hottest functions by self time, and by file, are printed.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autocannon, frameName, serveBuilt, shortUrl, topShares, type ProfileFrame } from './_util.js';

interface Node {
  id: number;
  callFrame: ProfileFrame;
}
const dir = mkdtempSync(join(tmpdir(), 'prof-pings-'));
const profDir = mkdtempSync(join(tmpdir(), 'cpuprof-pings-'));
const key = 'bench-ping-key-0123456789';
writeFileSync(join(dir, 'monitor.yaml'), `token: t\ntargets:\n  job:\n    interval: 10m\n    heartbeat: { period: 1h, ping_key: ${key} }\n`);
const mon = await serveBuilt('monitor', dir, {}, ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
// PING_POST=1 profiles POST /ping/{key}/0 with a small log, as `mkt monitor run` sends it.
const post = process.env.PING_POST === '1';
const url = post ? `${mon.url}/ping/${key}/0` : `${mon.url}/ping/${key}`;
const load = post ? { method: 'POST' as const, body: 'rsync: 1,204 files, 38 MiB sent\nbackup finished in 41 s\n'.repeat(3), headers: { 'content-type': 'text/plain' } } : {};
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
