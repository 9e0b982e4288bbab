// `mkt serve` as a daemon: prints `listening on`, answers, and exits 0 on SIGTERM after a
// graceful shutdown; a taken port is a clear error.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

const mkt = join(import.meta.dirname, '../../bin/mkt');
const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

function serve(args: string[], env: NodeJS.ProcessEnv = {}, dataDir?: string): { child: ChildProcess; url: Promise<string>; output: () => string; exit: Promise<number | null> } {
  const dir = dataDir ? { path: dataDir, remove: () => undefined } : tempDir();
  cleanups.push(() => dir.remove());
  const child = spawn(process.execPath, [mkt, 'serve', ...args, '--data-dir', dir.path], {
    env: { ...process.env, MKT_TICKETS_TOKEN: 'test-token', MKT_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(() => child.kill('SIGKILL'));
  let out = '';
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /^listening on (http:\/\/\S+)$/m.exec(out);
      if (m) resolve(m[1]!);
    });
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', () => reject(new Error(`exited before listening:\n${out}`)));
  });
  url.catch(() => undefined); // a test that expects start-up to fail never awaits url
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, url, output: () => out, exit };
}

describe('mkt serve', () => {
  it('prints `listening on http://HOST:PORT`, serves, and shuts down cleanly on SIGTERM', async () => {
    const s = serve(['tickets', '--port', '0']);
    const url = await s.url;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${url}/openapi.json`, { headers: { authorization: 'Bearer test-token' } });
    expect(res.status).toBe(200);
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);
    // logs are JSON lines apart from the one `listening on` line, and carry no token
    for (const line of s.output().split('\n').filter(Boolean)) {
      if (line.startsWith('listening on')) continue;
      expect(() => JSON.parse(line), line).not.toThrow();
    }
    expect(s.output()).not.toContain('test-token');
  });

  it('SIGINT also stops it with exit 0', async () => {
    const s = serve(['tickets', '--port', '0']);
    await s.url;
    s.child.kill('SIGINT');
    expect(await s.exit).toBe(0);
  });

  it('a port in use is a one-line usage error', async () => {
    const a = serve(['tickets', '--port', '0']);
    const port = new URL(await a.url).port;
    const b = serve(['tickets', '--port', port]);
    expect(await b.exit).toBe(2);
    expect(b.output()).toMatch(/address in use/);
  });
});

describe('mkt serve monitor and SIGHUP', () => {
  it('SIGHUP applies a good config file and keeps the running one, logging why, when the new file is bad', async () => {
    const { writeFileSync } = await import('node:fs');
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const cfg = join(dir.path, 'monitor.yaml');
    const base = 'token: t0k\ntargets:\n  one:\n    url: http://127.0.0.1:9/health\n    interval: 1h\n';
    writeFileSync(cfg, base);
    const s = serve(['monitor', '--port', '0', '--config', cfg], {}, dir.path);
    const url = await s.url;
    const targets = async (): Promise<string[]> => Object.keys(((await (await fetch(`${url}/api/status`, { headers: { authorization: 'Bearer t0k' } })).json()) as { targets: object }).targets).sort();
    expect(await targets()).toEqual(['one']);
    writeFileSync(cfg, base + '  two:\n    url: nope\n');
    s.child.kill('SIGHUP');
    await waitFor(async () => s.output().includes('reload failed; keeping the running configuration'), 'the reload failure log');
    expect(s.output()).toMatch(/monitor.yaml:\d+: targets.two.url must be an http\(s\) URL/);
    expect(await targets()).toEqual(['one']);
    writeFileSync(cfg, base + '  two:\n    url: http://127.0.0.1:9/other\n    interval: 1h\n');
    s.child.kill('SIGHUP');
    await waitFor(async () => (await targets()).length === 2, 'the reloaded config');
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);
  });
});
