// A pull that names its device (as a real client's does) against one that does not, in
// interleaved rounds on one server: req/s and server CPU a request each.
//   npm run build && node --import tsx bench/_pull-device.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autocannon, procStats, serveBuilt } from './_util.js';
import { pushEntries, signedIn } from './sync.js';

const dir = mkdtempSync(join(tmpdir(), 'mkt-pull-device-'));
const svc = await serveBuilt('marketplace', dir);
try {
  const api = await signedIn(svc, dir);
  await pushEntries(api, 1000);
  const [device] = await api.call<{ id: string }[]>('/api/v1/sync/devices', undefined, 'GET');
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${api.token}` };
  const loads = {
    anonymous: JSON.stringify({ cursor: 990, limit: 10 }),
    device: JSON.stringify({ cursor: 990, limit: 10, device_id: device!.id }),
  };
  const url = `${svc.url}/api/v1/sync/pull`;
  for (const body of Object.values(loads)) await autocannon(url, { method: 'POST', headers, body, seconds: 2 });
  for (let round = 0; round < Number(process.env.ROUNDS ?? 4); round++) {
    const out: string[] = [];
    for (const [name, body] of Object.entries(loads)) {
      const c0 = procStats(svc.pid).cpuMs;
      const r = await autocannon(url, { method: 'POST', headers, body, seconds: 3 });
      const us = ((procStats(svc.pid).cpuMs - c0) * 1000) / Math.max(1, r.total);
      out.push(`${name} ${r.rps.toFixed(0)} req/s ${us.toFixed(0)} µs${r.non2xx ? ` non2xx ${r.non2xx}` : ''}`);
    }
    console.log(out.join('  |  '));
  }
} finally {
  await svc.stop();
  rmSync(dir, { recursive: true, force: true });
}
