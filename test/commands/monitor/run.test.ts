// `mkt monitor run TARGET -- COMMAND` against a real monitor (issue 31, "Heartbeat targets"): the
// command's status passed through, its output forwarded as it comes and its tail logged, a killed
// or missing command, signals passed on, and a monitor that is down or hangs never failing the job.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { run } from '../../../commands/root/run.js';
import { fakeIO, type FakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { freePort, waitFor } from '../../helpers/wait.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';

const KEY = 'abcdefghijklmnop1234';
const dir = tempDir();
let mon: MonitorNode;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mon = await startMonitor(dir.path, `name: run\ntoken: mon-token\nrate_limit: { requests: 100000 }\ntargets:\n  backup:\n    heartbeat: { period: 1h, grace: 5m, ping_key: "${KEY}" }\n`);
  // PATH: the wrapped commands are found as a shell finds them.
  env = { PATH: process.env.PATH, XDG_CONFIG_HOME: dir.path, MKT_CREDENTIAL_STORE: 'file', MKT_MONITOR_URL: mon.url, MKT_MONITOR_TOKEN: 'mon-token' };
});
afterAll(async () => {
  await mon.stop();
  dir.remove();
});

function start(args: string[], extraEnv: NodeJS.ProcessEnv = {}): { io: FakeIO; done: Promise<number> } {
  const io = fakeIO({ env: { ...env, ...extraEnv }, cwd: dir.path });
  return { io, done: run(['monitor', 'run', ...args], io) };
}

async function mkt(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  const { io, done } = start(args, extraEnv);
  const code = await done;
  return { code, out: io.out(), err: io.err() };
}

/**
 * The snapshots pings recorded (each names its signal), most recent first: the target's own turns
 * record snapshots too, on their schedule, and may come between.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- snapshots, read field by field
async function recent(): Promise<any[]> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
  return ((await mon.get('/api/status/backup')).body.recent as any[]).filter((s) => typeof s.details?.signal === 'string');
}

const WARNING = /^mkt: warning: could not reach the monitor at 127\.0\.0\.1:\d+: .*; the job ran anyway$/;

describe('mkt monitor run', () => {
  it('passes the exit status through (0, 3, 42) and signals start, then that status', async () => {
    for (const status of [0, 3, 42]) {
      const r = await mkt(['backup', '--', 'sh', '-c', `echo out-${status}; echo err-${status} >&2; exit ${status}`]);
      expect(r).toEqual({ code: status, out: `out-${status}\n`, err: `err-${status}\n` });
      const [end, begin] = await recent();
      expect(begin.details.signal).toBe('start');
      expect(end).toMatchObject({ status: status === 0 ? 'operational' : 'down', details: { signal: String(status), log: `out-${status}\nerr-${status}\n` } });
      // A success after a start is timed: the run's duration is its response time.
      if (status === 0) expect(end.response_time_ms).toBeGreaterThan(0);
      else expect(end.error).toContain(String(status));
    }
  });

  it('forwards output as it comes, not at the end; the log keeps the last 10 KiB of both streams', async () => {
    const go = join(dir.path, 'go');
    // Prints, then waits for the test to have seen that line before it goes on.
    const script = `echo first; while [ ! -f ${go} ]; do sleep 0.05; done; i=0; while [ $i -lt 2000 ]; do echo "line $i of the output" >&2; i=$((i+1)); done; echo last`;
    const { io, done } = start(['backup', '--', 'sh', '-c', script]);
    await waitFor(async () => io.out() === 'first\n', 'the first line, while the command runs');
    writeFileSync(go, '');
    expect(await done).toBe(0);
    expect(io.out()).toBe('first\nlast\n');
    expect(io.err().split('\n')).toHaveLength(2001);
    const log: string = (await recent())[0].details.log;
    expect(Buffer.byteLength(log)).toBeLessThanOrEqual(10 * 1024);
    expect(Buffer.byteLength(log)).toBeGreaterThan(10 * 1024 - 100);
    expect(log.endsWith('line 1999 of the output\nlast\n')).toBe(true);
    expect(log).not.toContain('first');
  });

  it('a command killed by a signal: 128 + its number, and the log says which signal', async () => {
    const r = await mkt(['backup', '--', 'sh', '-c', 'echo before; kill -KILL $$']);
    expect(r.code).toBe(137);
    expect(r.out).toBe('before\n');
    expect((await recent())[0]).toMatchObject({ status: 'down', details: { signal: '137', log: 'before\n\nmkt: the command was killed by SIGKILL\n' } });
  });

  it('a command that cannot be found: exit 127 as a shell, and a failure signal naming why', async () => {
    const r = await mkt(['backup', '--', 'mkt-no-such-command', '--flag']);
    expect(r.code).toBe(127);
    expect(r.err).toBe('mkt: cannot run "mkt-no-such-command": command not found (ENOENT)\n');
    const [end, begin] = await recent();
    expect(begin.details.signal).toBe('start');
    expect(end).toMatchObject({ status: 'down', details: { signal: '127', log: 'mkt: cannot run "mkt-no-such-command": command not found (ENOENT)\n' } });
  });

  it('a monitor that is down (refused port): the job runs, one warning line, its status wins', async () => {
    const port = await freePort();
    const r = await mkt(['backup', '--ping-url', `http://127.0.0.1:${port}/ping/${KEY}`, '--', 'sh', '-c', 'echo backed up; exit 3']);
    expect(r.code).toBe(3);
    expect(r.out).toBe('backed up\n');
    const lines = r.err.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(WARNING);
    expect(lines[0]).toContain(`127.0.0.1:${port}: start ping failed: ECONNREFUSED; exit status 3 ping failed: ECONNREFUSED`);
    expect(r.err).not.toContain(KEY);
  });

  it('no --ping-url and the server is down: the job runs, one warning, its status', async () => {
    const port = await freePort();
    const r = await mkt(['backup', '--server', `http://127.0.0.1:${port}`, '--', 'sh', '-c', 'echo ran']);
    expect(r.code).toBe(0);
    expect(r.out).toBe('ran\n');
    const lines = r.err.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(WARNING);
    expect(lines[0]).toMatch(/status lookup of backup failed: cannot reach/);
  });

  it('an unknown key or a target without heartbeat: the job still runs, one warning', async () => {
    let r = await mkt(['backup', '--ping-url', `${mon.url}/ping/zzzzzzzzzzzzzzzzzzzz`, '--', 'sh', '-c', 'exit 0']);
    expect(r.code).toBe(0);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/start ping refused: no heartbeat target has this ping URL .*\(HTTP 404\)/);
    expect(r.err).not.toContain('zzzzzzzzzzzzzzzzzzzz');
    r = await mkt(['ghost', '--', 'sh', '-c', 'exit 4']);
    expect(r.code).toBe(4);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/status lookup of ghost refused:/);
  });

  it('a monitor that accepts connections and never answers: the job runs and ends with its status, one warning', { timeout: 30_000 }, async () => {
    // Bounded by the test's timeout, not by a measured time: each request gets 3 s, each side of
    // the command at most 5 s, so the job ends long before the hanging server lets go.
    const sockets: Socket[] = [];
    const hang: Server = createServer((s) => {
      sockets.push(s);
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', () => r()));
    const port = (hang.address() as { port: number }).port;
    try {
      const r = await mkt(['backup', '--ping-url', `http://127.0.0.1:${port}/ping/${KEY}`, '--', 'sh', '-c', 'echo done; exit 42']);
      expect(r.code).toBe(42);
      expect(r.out).toBe('done\n');
      const lines = r.err.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(WARNING);
      expect(lines[0]).toMatch(/start ping failed: no answer within \d+(\.\d+)? s; exit status 42 ping failed: no answer within/);
      // Both signals were tried (each connection stays open on the server's side, unanswered).
      expect(sockets.length).toBeGreaterThanOrEqual(2);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => hang.close(() => r()));
    }
  });

  it('a status lookup that hangs: the job runs anyway, one warning', { timeout: 30_000 }, async () => {
    const sockets: Socket[] = [];
    const hang: Server = createServer((s) => void sockets.push(s.on('error', () => undefined)));
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', () => r()));
    const port = (hang.address() as { port: number }).port;
    try {
      const r = await mkt(['backup', '--server', `http://127.0.0.1:${port}`, '--', 'sh', '-c', 'echo done']);
      expect(r).toMatchObject({ code: 0, out: 'done\n' });
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(/status lookup of backup failed: timed out/);
      expect(sockets.length).toBeGreaterThanOrEqual(1);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => hang.close(() => r()));
    }
  });

  it('a malformed --ping-url or no command is a usage error, and nothing runs', async () => {
    const marker = join(dir.path, 'ran');
    const r = await mkt(['backup', '--ping-url', 'http://h/not-a-ping', '--', 'touch', marker]);
    expect(r.code).toBe(2);
    expect(r.err).toBe('mkt: --ping-url is not a ping URL: it must be an http(s) URL ending in /ping/KEY\n');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('mkt monitor run, the real binary', () => {
  const bin = join(import.meta.dirname, '../../../bin/mkt');

  it('passes SIGTERM on to the command and exits with the status the command chose', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, [bin, 'monitor', 'run', 'backup', '--', 'sh', '-c', 'trap "echo got TERM; exit 7" TERM; echo ready; while :; do sleep 0.05; done'], {
      env: { PATH: process.env.PATH, MKT_MONITOR_PING_URL: `${mon.url}/ping/${KEY}`, XDG_CONFIG_HOME: dir.path, MKT_CREDENTIAL_STORE: 'file' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await waitFor(async () => out.includes('ready'), 'the command to be running', 30_000);
    child.kill('SIGTERM');
    expect(await exited).toBe(7);
    expect(out).toBe('ready\ngot TERM\n');
    expect(err).toBe('');
    expect((await recent())[0]).toMatchObject({ status: 'down', details: { signal: '7', log: 'ready\ngot TERM\n' } });
  });

  it('a reader that closes our stdout early (| head) stops the output, not the job: it finishes and its status is signalled', { timeout: 60_000 }, async () => {
    const script = 'echo first; sleep 0.3; i=0; while [ $i -lt 200 ]; do echo line $i; i=$((i+1)); done; echo done-writing >&2; exit 5';
    const child = spawn(process.execPath, [bin, 'monitor', 'run', 'backup', '--', 'sh', '-c', script], {
      env: { PATH: process.env.PATH, MKT_MONITOR_PING_URL: `${mon.url}/ping/${KEY}`, XDG_CONFIG_HOME: dir.path, MKT_CREDENTIAL_STORE: 'file' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    // Read the first line, then close the pipe as `head -1` would.
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdout.destroy();
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(5);
    expect(err).toContain('done-writing');
    const last = (await recent())[0];
    expect(last).toMatchObject({ status: 'down', details: { signal: '5' } });
    expect(last.details.log).toContain('line 199');
  });
});
