// Issue 11 defect 10, unsafe defaults: off loopback the marketplace needs a public URL and an
// explicitly chosen payment provider (the local one confirms any cap for free), and signed blob
// and checkout URLs come from the public URL (or the socket's own address), never from Host.
import { afterEach, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { request } from 'undici';
import { run } from '../../../commands/root/run.js';
import { startService, type RunningService } from '../../../daemon/start.js';
import { captureLog } from '../../helpers/log-capture.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { blobEnv, randomHash, type BlobEnv } from './blob-helpers.js';
import type { MarketplaceOptions } from '../../../daemon/services/marketplace/options.js';

const sink = () => new Writable({ write: (_c, _e, cb) => cb() });
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

async function serveCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; err: string }> {
  const dir = tempDir('mkt-exposure-');
  cleanup.push(() => dir.remove());
  const io = fakeIO({ env });
  const code = await run(['serve', 'marketplace', '--port', '0', '--data-dir', dir.path, ...args], io);
  return { code, err: io.err() };
}

async function start(host: string, flags: MarketplaceOptions): Promise<RunningService> {
  const dir = tempDir('mkt-exposure-');
  const svc = await startService('marketplace', { host, port: 0, dataDir: dir.path, options: flags, env: {}, logger: captureLog().logger, out: sink() }).catch((err: unknown) => {
    dir.remove();
    throw err;
  });
  cleanup.push(async () => {
    await svc.close();
    dir.remove();
  });
  return svc;
}

describe('mkt serve marketplace off loopback', () => {
  it('refuses to start without a public URL: one clear line, usage exit code', async () => {
    const r = await serveCli(['--host', '0.0.0.0', '--payments', 'stripe']);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^mkt: the marketplace listens on 0\.0\.0\.0, beyond this machine: pass --public-url \(or set MKT_PUBLIC_URL\)/);
  });

  it('refuses the local payment provider unless it is chosen explicitly', async () => {
    const r = await serveCli(['--host', '0.0.0.0', '--public-url', 'https://market.example.com']);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/choose the payment provider with --payments stripe .* explicit --payments local/);
    // The environment counts as an explicit choice too; a public URL that is not http(s) does not.
    expect((await serveCli(['--host', '0.0.0.0', '--public-url', 'ftp://x.example'], { MKT_SYNC_PAYMENTS: 'local' })).err).toMatch(/must be http or https/);
  });

  it('starts with an explicit --payments local and a public URL', async () => {
    const svc = await start('0.0.0.0', { syncPayments: 'local', publicUrl: 'https://market.example.com/' });
    expect(svc.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
  });
});

describe('signed URLs on loopback never follow the Host header', () => {
  let env: BlobEnv;
  afterEach(async () => env?.srv.close());

  /** undici's request sends the Host header given (fetch would not). */
  async function post<T>(path: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; body: T }> {
    const res = await request(env.srv.url + path, { method: 'POST', headers: { ...headers, authorization: `Bearer ${env.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.statusCode, body: (await res.body.json()) as T };
  }

  it('upload, download and checkout URLs are built from the listen address when no public URL is set', async () => {
    env = await blobEnv();
    const forged = { host: 'attacker.example:8443', 'x-forwarded-host': 'attacker.example' };
    const hash = randomHash();
    const u = await post<{ upload_url: string }>('/api/v1/sync/blobs/upload', { hash, size_bytes: 10 }, forged);
    expect(u.status).toBe(200);
    expect(u.body.upload_url.startsWith(`${env.srv.url}/api/v1/sync/objects/`)).toBe(true);
    const co = await post<{ checkout_url: string }>('/api/v1/sync/subscription/checkout', { cap_bytes: 2 * 1024 ** 3, interval: 'month' }, forged);
    expect(co.status).toBe(200);
    expect(co.body.checkout_url.startsWith(`${env.srv.url}/api/v1/sync/checkout/`)).toBe(true);
  });

  it('with a public URL, every signed URL starts with it', async () => {
    env = await blobEnv({ flags: { publicUrl: 'https://market.example.com' } });
    const u = await post<{ upload_url: string }>('/api/v1/sync/blobs/upload', { hash: randomHash(), size_bytes: 10 }, { host: 'attacker.example' });
    expect(u.body.upload_url.startsWith('https://market.example.com/api/v1/sync/objects/')).toBe(true);
  });
});
