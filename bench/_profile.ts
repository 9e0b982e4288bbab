// Profiles the real marketplace server under one scale-benchmark path: `npm run build`, then
// `MKT_BENCH_ONLY=push node --import tsx bench/_profile.ts [sqlite|postgres]`. The server runs
// with --cpu-prof; its hottest functions by self time are printed, and the profile is kept.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startOwnPostgres } from '../test/helpers/pg-global.js';
import { load, seedForTrace } from './scale.js';
import { frameName, shortUrl, topShares, type ProfileFrame } from './_util.js';

const engine = process.argv[2] === 'sqlite' ? 'sqlite' : 'postgres';
const only = (process.env.MKT_BENCH_ONLY ?? 'push').split(',');
const own = engine === 'postgres' ? await startOwnPostgres() : undefined;
const env: Record<string, string> = {};
if (own) {
  const c = new pg.Client({ connectionString: own.url });
  await c.connect();
  await c.query('CREATE DATABASE prof');
  await c.end();
  env.MKT_DATABASE_URL = own.url.replace(/\/postgres$/, '/prof');
}
const dir = mkdtempSync(join(tmpdir(), 'prof-'));
const profDir = mkdtempSync(join(tmpdir(), 'cpuprof-'));
const seeded = await seedForTrace(dir, env);
/** The server, listening; with --cpu-prof when `profiled`. */
async function serve(profiled: boolean): Promise<{ child: ReturnType<typeof spawn>; base: string }> {
  const child = spawn(process.execPath, [...(profiled ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []), join(import.meta.dirname, '../bin/mkt'), 'serve', 'marketplace', '--port', '0', '--data-dir', dir], {
    env: { ...process.env, ...env, MKT_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const base = await new Promise<string>((r) => child.stdout!.on('data', (b: Buffer) => { out += b.toString(); const m = /listening on (\S+)/.exec(out); if (m) r(m[1]!); }));
  return { child, base };
}
// Seeding (git, sign-ins) runs on a server of its own, so the profile holds only the load.
const seeder = await serve(false);
const paths = (await seeded.paths(seeder.base)).filter((p) => only.some((o) => p.name.includes(o)));
seeder.child.kill('SIGKILL');
const { child, base } = await serve(true);
for (const p of paths) {
  const r = await load([base], p, Number(process.env.MKT_BENCH_SECONDS ?? 5));
  console.log(`${p.name}: ${r.rps.toFixed(0)} req/s`);
}
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
await own?.close();

interface Node { id: number; callFrame: ProfileFrame; hitCount?: number }
const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error('no profile written');
const prof = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as { nodes: Node[]; samples: number[] };
const total = prof.samples.length;
const self = new Map<string, number>();
const byFile = new Map<string, number>();
for (const n of prof.nodes) {
  const k = frameName(n.callFrame);
  self.set(k, (self.get(k) ?? 0) + (n.hitCount ?? 0));
  const f = shortUrl(n.callFrame.url).split(':')[0] || '(native)';
  byFile.set(f, (byFile.get(f) ?? 0) + (n.hitCount ?? 0));
}
console.log(`\nprofile: ${join(profDir, file)} (${total} samples)\n\nby function (self):\n${topShares(self, total, 30)}\n\nby file (self):\n${topShares(byFile, total, 20)}`);
process.exit(0);
