// Issue 7 "killed at any point and run again, it resumes": `mkt sync key rotate` runs in a child
// process whose every request goes through a proxy; the proxy SIGKILLs the child right after the
// server has applied begin, the second re-sealed batch, or complete (before the child hears the
// answer). The next run finishes, and every entry still opens, there and on another device.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSyncWorld, type Device, type SyncWorld } from './harness.js';

const N = 1100; // three re-seal batches of at most 500
let w: SyncWorld;
let a: Device;
let c: Device;
let proxy: { url: string; server: Server; killOn?: { path: string; nth: number; seen: number; child?: ChildProcess; fired: boolean } };

/** Forwards everything to the marketplace; kills the armed child once the armed request was applied. */
async function startProxy(target: string): Promise<typeof proxy> {
  const p: typeof proxy = { url: '', server: createServer() };
  p.server.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      void (async () => {
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>;
        const up = await fetch(target + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
        const body = Buffer.from(await up.arrayBuffer());
        const k = p.killOn;
        if (k && !k.fired && req.method === 'POST' && req.url === k.path && ++k.seen === k.nth) {
          k.fired = true;
          k.child?.kill('SIGKILL');
          res.destroy();
          return;
        }
        res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' });
        res.end(body);
      })();
    });
  });
  await new Promise<void>((r) => p.server.listen(0, '127.0.0.1', r));
  p.url = `http://127.0.0.1:${(p.server.address() as AddressInfo).port}`;
  return p;
}

beforeAll(async () => {
  w = await startSyncWorld();
  a = w.device('a');
  expect((await a.mkt(['login', '--app-key', w.appKey, '--email', w.email, '--device', 'a'], `${w.password}\n`)).code).toBe(0);
  expect((await a.mkt(['key', 'init'], `${w.password}\n`)).code).toBe(0);
  const lines = Array.from({ length: N }, (_, i) => JSON.stringify({ table: 'notes', op: 'upsert', row_id: `n${i}`, data: { i } })).join('\n');
  expect((await a.mkt(['push'], lines)).code).toBe(0);
  proxy = await startProxy(w.url);
  // Device C talks to the marketplace only through the proxy.
  c = w.device('c');
  c.env.MKT_MARKETPLACE_URL = proxy.url;
  const login = await c.mkt(['login', '--app-key', w.appKey, '--email', w.email, '--device', 'c'], `${w.password}\n`);
  expect(login.code, login.err).toBe(0);
});
afterAll(async () => {
  proxy?.server.close();
  await w?.close();
});

/** `mkt sync key rotate` in a child process on device C, killed by the proxy as armed. */
function rotateInChild(path: string, nth: number): Promise<{ signal: NodeJS.Signals | null; code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../../../commands/root/main.ts'), 'sync', 'key', 'rotate'], {
    cwd: join(import.meta.dirname, '../../..'),
    env: { PATH: process.env.PATH, ...c.env },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  proxy.killOn = { path, nth, seen: 0, child, fired: false };
  child.stdin!.end(`${w.password}\n`);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })));
}

async function serverKey(): Promise<{ key_id: number; rotation_in_progress: boolean }> {
  return (JSON.parse((await a.mkt(['status', '--json'])).out) as { server: { key_id: number; rotation_in_progress: boolean } }).server;
}

/** Every entry opens on `d` (which must hold the current key), none lost. */
async function everyEntryOpens(d: Device): Promise<void> {
  const r = await d.mkt(['pull', '--since', '0']);
  expect(r.code, r.err).toBe(0);
  const seen = r.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { seq: number; data: { i: number } });
  expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
  expect(seen.map((e) => e.data.i)).toEqual(Array.from({ length: N }, (_, i) => i));
}

describe('mkt sync key rotate survives SIGKILL', () => {
  it('killed right after the server applied begin: the rerun resumes that rotation', async () => {
    const killed = await rotateInChild('/api/v1/sync/keys/rotate', 1);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(await serverKey()).toMatchObject({ key_id: 1, rotation_in_progress: true });
    const again = await c.mkt(['key', 'rotate', '--json'], `${w.password}\n`);
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ new_key_id: 2, resumed: true, resealed: N });
    expect(await serverKey()).toMatchObject({ key_id: 2, rotation_in_progress: false });
    await everyEntryOpens(c);
  });

  it('killed right after the second re-sealed batch was applied: the rerun re-seals only the rest', async () => {
    const killed = await rotateInChild('/api/v1/sync/keys/rotate/batch', 2);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const again = await c.mkt(['key', 'rotate', '--json'], `${w.password}\n`);
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ new_key_id: 3, resumed: true, resealed: N - 1000 });
    await everyEntryOpens(c);
  });

  it('killed right after the server applied complete: the rerun only tidies up', async () => {
    const killed = await rotateInChild('/api/v1/sync/keys/rotate/complete', 1);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(await serverKey()).toMatchObject({ key_id: 4, rotation_in_progress: false });
    const again = await c.mkt(['key', 'rotate', '--json'], `${w.password}\n`);
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ new_key_id: 4, already_complete: true });
    await everyEntryOpens(c);
    // And on the other device, once it fetched the new key.
    expect((await a.mkt(['key', 'unlock'], `${w.password}\n`)).code).toBe(0);
    await everyEntryOpens(a);
  });
});
