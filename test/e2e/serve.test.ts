// `mkt serve` as a daemon: prints `listening on`, answers, and exits 0 on SIGTERM after a
// graceful shutdown; a taken port is one error line and a hint (exit 3), before anything starts.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
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
    const records: { msg?: unknown }[] = [];
    for (const line of s.output().split('\n').filter(Boolean)) {
      if (line.startsWith('listening on')) continue;
      expect(() => records.push(JSON.parse(line) as { msg?: unknown }), line).not.toThrow();
    }
    // The plain line is also a record, for journald and JSON logs.
    expect(records.filter((r) => r.msg === `listening on ${url}`)).toHaveLength(1);
    expect(s.output()).not.toContain('test-token');
  });

  it('SIGINT also stops it with exit 0', async () => {
    const s = serve(['tickets', '--port', '0']);
    await s.url;
    s.child.kill('SIGINT');
    expect(await s.exit).toBe(0);
  });

  it('a port held by a running service: the error and the hint name the address, exit 3', async () => {
    const a = serve(['tickets', '--port', '0']);
    const port = new URL(await a.url).port;
    const b = serve(['tickets', '--port', port]);
    expect(await b.exit).toBe(3);
    expect(b.output().trim().split('\n')).toEqual([`mkt: cannot listen on 127.0.0.1:${port}: address in use`, 'hint: another process holds the port; pick one with --port N (or --port 0 for a free one)']);
  });
});

/** Holds a port on 127.0.0.1 (the one asked for, or a free one) until the test ends. */
async function holdPort(port = 0): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen({ host: '127.0.0.1', port }, resolve);
  });
  cleanups.push(() => srv.close());
  return (srv.address() as AddressInfo).port;
}

describe('issue 30, item 8: mkt serve on a busy port', () => {
  it('monitor: says nothing of being ready, opens nothing, prints one error line and its hint, exit 3', async () => {
    const port = await holdPort();
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const s = serve(['monitor', '--port', String(port)], {}, join(dir.path, 'data'));
    expect(await s.exit).toBe(3);
    expect(s.output().trim().split('\n')).toEqual([`mkt: cannot listen on 127.0.0.1:${port}: address in use`, 'hint: another process holds the port; pick one with --port N (or --port 0 for a free one)']);
    expect(existsSync(join(dir.path, 'data'))).toBe(false);
  });

  it('serve all with one port taken: no service starts, nothing is left listening', async () => {
    // 7071 is the monitor's default; if something else on this machine holds it, it is busy all the same.
    await holdPort(7071).catch(() => undefined);
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const s = serve(['all'], {}, join(dir.path, 'data'));
    expect(await s.exit).toBe(3);
    const lines = s.output().trim().split('\n');
    expect(lines).toHaveLength(2);
    // The first taken port of 7070, 7071, 7072 is named (7071 at the latest).
    expect(lines[0]).toMatch(/^mkt: cannot listen on 127\.0\.0\.1:707[01]: address in use$/);
    expect(lines[1]).toMatch(/^hint: another process holds the port; stop it, or start the services one by one with `mkt serve SERVICE --port N`$/);
    expect(s.output()).not.toMatch(/listening on|ready/);
    expect(existsSync(join(dir.path, 'data'))).toBe(false);
  });

  it('a --host that is not an address of this machine is the command line\'s mistake: exit 2, nothing opened', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    // 192.0.2.1 is TEST-NET-1 (RFC 5737), never a machine's own address.
    const s = serve(['tickets', '--host', '192.0.2.1', '--port', '0'], {}, join(dir.path, 'data'));
    expect(await s.exit).toBe(2);
    expect(s.output().trim().split('\n')).toEqual(['mkt: cannot listen on 192.0.2.1:0: address not available on this machine', 'hint: --host must name an address of this machine (127.0.0.1, ::1, 0.0.0.0, ...)']);
    expect(existsSync(join(dir.path, 'data'))).toBe(false);
  });

  it('on a terminal, `listening on` is printed once (the log record is not rendered beside the plain line)', async () => {
    // script(1) is util-linux's (Debian's bsdutils, always installed): a missing one fails here, not skips.
    expect(hasScript(), 'script(1) from util-linux is needed to give the server a terminal').toBe(true);
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    // script(1) runs the server on a pseudo-terminal; a ^C typed into it is SIGINT, a clean stop.
    // script runs the command through $SHELL, or /bin/sh when SHELL is unset (as under CI). dash
    // keeps itself as the parent, takes the same SIGINT and ends 130 whatever the server does;
    // `exec` makes the server the terminal's foreground process, so the status is the server's.
    const child = spawn('script', ['-qec', `exec ${shq(process.execPath)} ${shq(mkt)} serve monitor --port 0 --data-dir ${shq(dir.path)}`, '/dev/null'], { env: { ...process.env, MKT_LOG_LEVEL: 'info' }, stdio: ['pipe', 'pipe', 'pipe'] });
    cleanups.push(() => child.kill('SIGKILL'));
    let out = '';
    let typed = false;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (!typed && /listening on http/.test(out)) {
        typed = true;
        child.stdin.write('\x03');
      }
    });
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(code, out).toBe(0);
    expect(out).toMatch(/INFO +monitor ready/); // the log is rendered for a person: this is the TTY path
    expect(out.match(/listening on/g)).toHaveLength(1);
    expect(out).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+\r?$/m);
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

/** One word for sh, whatever characters the path holds. */
function shq(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function hasScript(): boolean {
  return spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;
}
