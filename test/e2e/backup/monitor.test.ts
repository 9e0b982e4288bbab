// Backup of a monitor while it takes writes, on the real binary: silences are created and a
// heartbeat target pinged in a loop, `mkt backup create monitor` runs in the middle, and every
// silence acknowledged before the backup started is on the monitor restored from it; the
// configuration in the data dir (with its token, 0600) comes back as it was, and the restored
// monitor.db passes integrity_check.
import { readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serveBinary, type Served } from '../../helpers/serve-binary.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { integrity, mkt, stopServed, writeLoop } from './rig.js';

const TOKEN = 'monitor-backup-token-0123456789';
const PING_KEY = 'backup-test-ping-key-0123';
const CONFIG = `token: ${TOKEN}
rate_limit:
  requests: 1000000
  window: 60s
targets:
  job:
    heartbeat:
      period: 1h
      grace: 1h
      ping_key: ${PING_KEY}
`;

const tmp = tempDir('mkt-backup-monitor-');
const servers: Served[] = [];
afterAll(async () => {
  for (const s of servers) await stopServed(s);
  tmp.remove();
});

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

async function silence(url: string, reason: string): Promise<string> {
  const res = await fetch(`${url}/api/silences`, { method: 'POST', headers: auth, body: JSON.stringify({ all: true, duration: '1h', reason }) });
  if (res.status !== 201) throw new Error(`silence answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

async function ping(url: string): Promise<void> {
  const res = await fetch(`${url}/ping/${PING_KEY}`, { method: 'POST' });
  if (res.status !== 200) throw new Error(`ping answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

describe('mkt backup: monitor, online', () => {
  it('every silence acknowledged before the backup started is on the restored monitor, with its configuration', async () => {
    const data = join(tmp.path, 'data');
    mkdirSync(data, { mode: 0o700 });
    writeFileSync(join(data, 'monitor.yaml'), CONFIG, { mode: 0o600 });
    const live = await serveBinary('monitor', data);
    servers.push(live);
    // Pings (snapshots written by the engine) and silences, both writing monitor.db meanwhile.
    const loop = writeLoop(async (i) => {
      await ping(live.url);
      return silence(live.url, `silence ${i}`);
    });
    await waitFor(async () => loop.acked().length >= 30, 'thirty acknowledged silences');
    const before = loop.acked();
    const file = join(tmp.path, 'monitor.tar');
    const made = await mkt(['backup', 'create', 'monitor', '--data-dir', data, '--out', file]);
    await loop.stop();
    expect(made.code, made.err).toBe(0);
    expect(made.out).toMatch(/^wrote .*monitor\.tar: monitor, /);

    expect((await mkt(['backup', 'verify', file])).code).toBe(0);
    const target = join(tmp.path, 'restored');
    const restored = await mkt(['backup', 'restore', 'monitor', '--from', file, '--data-dir', target]);
    expect(restored.code, restored.err).toBe(0);
    expect(readFileSync(join(target, 'monitor.yaml'), 'utf8')).toBe(CONFIG);
    expect(statSync(join(target, 'monitor.yaml')).mode & 0o777).toBe(0o600);
    expect(statSync(target).mode & 0o777).toBe(0o700);

    const back = await serveBinary('monitor', target);
    servers.push(back);
    const res = await fetch(`${back.url}/api/silences`, { headers: auth });
    expect(res.status).toBe(200);
    const ids = new Set(((await res.json()) as { silences: { id: string }[] }).silences.map((s) => s.id));
    for (const id of before) expect(ids.has(id), `silence ${id}`).toBe(true);
    await ping(back.url); // the heartbeat target and its key came back
    await stopServed(back);
    expect(integrity(join(target, 'monitor.db'))).toBe('ok');
  });
});
