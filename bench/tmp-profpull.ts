// Temporary: cpu-prof of the marketplace under sync_pull (10 entries), or keys/status with ROW=status.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LicenseAdmin } from '../daemon/services/marketplace/license/admin.js';
import { autocannon, serveBuilt } from './_util.js';
import { pushEntries, signedIn } from './sync.js';
const dir = mkdtempSync(join(tmpdir(), 'tmp-pull-'));
const prof = mkdtempSync(join(tmpdir(), 'tmp-pull-prof-'));
const admin = await LicenseAdmin.open({ dataDir: dir });
await admin.createItem({ id: 'bench', name: 'Bench', licenseTemplate: null, maxActivations: null, verification: true });
const [k] = await admin.issueKeys({ itemId: 'bench', count: 1, expiresAt: null, licensee: null });
await admin.close();
const svc = await serveBuilt('marketplace', dir, {}, ['--cpu-prof', `--cpu-prof-dir=${prof}`]);
const json = { 'content-type': 'application/json' };
let url: string; let load: Parameters<typeof autocannon>[1];
if (process.env.ROW === 'status') { url = `${svc.url}/api/v1/keys/status`; load = { method: 'POST', headers: json, body: JSON.stringify({ key: k!.key }) }; }
else { const api = await signedIn(svc, dir); await pushEntries(api, 1000); url = `${svc.url}/api/v1/sync/pull`; load = { method: 'POST', headers: { ...json, authorization: `Bearer ${api.token}` }, body: JSON.stringify({ cursor: 990, limit: 10 }) }; }
await autocannon(url, { ...load, seconds: 2 });
const r = await autocannon(url, { ...load, seconds: 6 });
await svc.stop();
const f = readdirSync(prof)[0]!;
const p = JSON.parse(readFileSync(join(prof, f), 'utf8')) as { nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[]; samples: number[]; timeDeltas: number[]; endTime: number; startTime: number };
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>(); let t = p.startTime; const from = p.endTime - 6e6;
for (let i = 0; i < p.samples.length; i++) { t += p.timeDeltas[i]!; if (t < from) continue; const cf = byId.get(p.samples[i]!)!.callFrame; const key = `${cf.functionName || '(anon)'} ${cf.url.replace(/^.*node_modules\//, '').replace(/^.*\/(dist|bench)\//, '$1/')}:${cf.lineNumber + 1}`; self.set(key, (self.get(key) ?? 0) + p.timeDeltas[i]!); }
const total = r.rps * 6;
console.log(join(prof, f), Math.round(r.rps), 'req/s', r.non2xx, 'non2xx');
for (const [key, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 45)) console.log((v / total).toFixed(2).padStart(7), key);
