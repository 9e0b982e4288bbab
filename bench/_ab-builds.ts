// Two builds' server CPU a request on one row, side by side: the marketplace of another checkout
// (MKT_AB_BASE, built: `git worktree add /tmp/base <commit> && ln -s $PWD/node_modules /tmp/base/
// && (cd /tmp/base && npm run build)`) and this one's, each seeded alike, loaded in interleaved
// rounds of 3 s; CPU is read from /proc, so the machine's drift between rounds moves both alike.
//
//   node --import tsx bench/_ab-builds.ts status|verify|pull|floor|ticket-post|ticket-get [rounds=8] [connections=20]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LicenseAdmin } from '../daemon/services/marketplace/license/admin.js';
import { autocannon, BENCH_NEW_TICKET, BENCH_TICKETS_TOKEN, cpuMicros, median, spawnListening, type Load, type ServerProcess } from './_util.js';
import { benchKey } from './license.js';
import { pushEntries, signedIn } from './sync.js';
const base = process.env.MKT_AB_BASE;
if (!base) {
  console.error('MKT_AB_BASE: the path of the other checkout, built');
  process.exit(2);
}
const trees = { base, new: join(import.meta.dirname, '..') };
const which = process.argv[2] ?? 'status';
const rounds = Number(process.argv[3] ?? 8);
const connections = Number(process.argv[4] ?? 20);
const serve = (tree: string, dir: string, service = 'marketplace', env: NodeJS.ProcessEnv = {}) =>
  spawnListening(tree, [join(tree, 'bin/mkt'), 'serve', service, '--port', '0', '--data-dir', dir], { MKT_LOG_LEVEL: 'info', ...env });
async function setup(tree: string): Promise<{ s: ServerProcess; url: string; load: Load }> {
  const dir = mkdtempSync(join(tmpdir(), 'mkt-ab-'));
  const json = { 'content-type': 'application/json' };
  if (which === 'floor') {
    const s = await spawnListening(tree, [join(tree, 'bench/_floor-server.mjs')], { FLOOR_BODY: '{"id":"T-1","title":"printer on floor 3 is offline"}' });
    return { s, url: `${s.url}/floor/x`, load: {} };
  }
  if (which === 'ticket-post') {
    const s = await serve(tree, dir, 'tickets', { MKT_TICKETS_TOKEN: BENCH_TICKETS_TOKEN });
    return { s, url: `${s.url}/tickets`, load: { method: 'POST', headers: { ...json, authorization: `Bearer ${BENCH_TICKETS_TOKEN}` }, body: BENCH_NEW_TICKET } };
  }
  if (which === 'ticket-get') {
    const s = await serve(tree, dir, 'tickets', { MKT_TICKETS_TOKEN: BENCH_TICKETS_TOKEN });
    const headers = { authorization: `Bearer ${BENCH_TICKETS_TOKEN}` };
    const made = await fetch(`${s.url}/tickets`, { method: 'POST', headers: { ...json, ...headers }, body: BENCH_NEW_TICKET });
    const { id } = (await made.json()) as { id: string };
    return { s, url: `${s.url}/tickets/${id}`, load: { headers } };
  }
  if (which === 'status' || which === 'verify') {
    const admin = await LicenseAdmin.open({ dataDir: dir });
    const { key } = await benchKey(admin);
    await admin.close();
    const s = await serve(tree, dir);
    if (which === 'status') return { s, url: `${s.url}/api/v1/keys/status`, load: { method: 'POST', headers: json, body: JSON.stringify({ key: key }) } };
    return { s, url: `${s.url}/api/v1/license/verify`, load: { method: 'POST', headers: json, body: JSON.stringify({ key: key, machine_fingerprint: 'bench-machine' }) } };
  }
  const s = await serve(tree, dir);
  const api = await signedIn(s, dir);
  await pushEntries(api, 1000);
  return { s, url: `${s.url}/api/v1/sync/pull`, load: { method: 'POST', headers: { ...json, authorization: `Bearer ${api.token}` }, body: JSON.stringify({ cursor: 990, limit: 10 }) } };
}
const a = await setup(trees.base), b = await setup(trees.new);
for (const x of [a, b]) await autocannon(x.url, { ...x.load, seconds: 2 });
const us: Record<string, number[]> = { base: [], new: [] };
for (let r = 0; r < rounds; r++) {
  for (const [k, x] of (r % 2 ? [['new', b], ['base', a]] : [['base', a], ['new', b]]) as [string, typeof a][]) {
    const c0 = cpuMicros(x.s.pid);
    const res = await autocannon(x.url, { ...x.load, seconds: 3, connections });
    us[k]!.push((cpuMicros(x.s.pid) - c0) / res.total);
  }
}
console.log(which, connections, 'base', us.base!.map((v) => v.toFixed(0)).join(' '), 'median', median(us.base!).toFixed(1));
console.log(which, 'new ', us.new!.map((v) => v.toFixed(0)).join(' '), 'median', median(us.new!).toFixed(1));
console.log(which, 'new/base per round', us.new!.map((v, i) => (v / us.base![i]!).toFixed(2)).join(' '), 'median', median(us.new!.map((v, i) => v / us.base![i]!)).toFixed(3));
await a.s.stop(); await b.s.stop();
process.exit(0);
