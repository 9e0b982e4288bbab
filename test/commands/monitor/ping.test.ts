// `mkt monitor ping-url|ping|detail` against a real monitor with heartbeat targets (issue 31,
// "Heartbeat targets"): each signal recorded, logs from a file and stdin, the exit codes of the
// README table, and the ping key shown whole by ping-url only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { freePort } from '../../helpers/wait.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';
import { healthServer, type HealthServer } from '../../helpers/monitor-fixtures.js';

const KEY = 'abcdefghijklmnop1234';
const dir = tempDir();
let mon: MonitorNode;
let up: HealthServer;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  up = await healthServer();
  mon = await startMonitor(
    dir.path,
    `name: hb\ntoken: mon-token\nrate_limit: { requests: 100000 }\ntargets:\n  backup:\n    heartbeat: { period: 1h, grace: 5m, ping_key: "${KEY}" }\n  nightly:\n    heartbeat: { schedule: "0 3 * * *", timezone: Europe/Berlin, grace: 30m }\n  api:\n    url: ${up.url}\n    interval: 1h\n`,
  );
  env = { XDG_CONFIG_HOME: dir.path, MKT_CREDENTIAL_STORE: 'file', MKT_MONITOR_URL: mon.url, MKT_MONITOR_TOKEN: 'mon-token' };
});
afterAll(async () => {
  await mon.stop();
  await up.close();
  dir.remove();
});

async function mkt(args: string[], opts: { env?: NodeJS.ProcessEnv; stdin?: string } = {}): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env: { ...env, ...opts.env }, stdin: opts.stdin, cwd: dir.path });
  const code = await run(['monitor', ...args], io);
  return { code, out: io.out(), err: io.err() };
}

/**
 * The latest snapshot a ping recorded (it names its signal): the target's own turns record
 * snapshots too, on their schedule, and may come between a ping and this read.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the status document, read field by field
async function latest(target: string): Promise<any> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
  return ((await mon.get(`/api/status/${target}`)).body.recent as any[]).find((s) => typeof s.details?.signal === 'string');
}

describe('mkt monitor ping-url', () => {
  it('prints the ping URL of a heartbeat target; --json gives {target, ping_url}', async () => {
    const r = await mkt(['ping-url', 'backup']);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toBe(`${mon.url}/ping/${KEY}\n`);
    const j = await mkt(['ping-url', 'backup', '--json']);
    expect(JSON.parse(j.out)).toEqual({ target: 'backup', ping_url: `${mon.url}/ping/${KEY}` });
    // A generated key: at least 16 URL-safe characters.
    expect((await mkt(['ping-url', 'nightly'])).out).toMatch(new RegExp(`^${mon.url}/ping/[A-Za-z0-9_-]{16,}\\n$`));
  });

  it('a target that is not a heartbeat target exits 1 saying so; an unknown one exits 1; a wrong token 4', async () => {
    const r = await mkt(['ping-url', 'api']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^mkt: api is not a heartbeat target: its status has no ping_url\n/);
    expect((await mkt(['ping-url', 'ghost'])).code).toBe(1);
    expect((await mkt(['ping-url', 'backup'], { env: { MKT_MONITOR_TOKEN: 'wrong' } })).code).toBe(4);
  });
});

describe('mkt monitor ping', () => {
  it('each signal flag sends its signal; the status lookup finds the URL with the token', async () => {
    let r = await mkt(['ping', 'backup', '--start', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ ok: true, target: 'backup', signal: 'start' });
    expect((await latest('backup')).details.signal).toBe('start');

    r = await mkt(['ping', 'backup']);
    expect(r).toEqual({ code: 0, out: '', err: '' });
    expect(await latest('backup')).toMatchObject({ status: 'operational', details: { signal: 'success' } });

    r = await mkt(['ping', 'backup', '--fail']);
    expect(r.code).toBe(0);
    expect(await latest('backup')).toMatchObject({ status: 'down', details: { signal: 'fail' } });

    r = await mkt(['ping', 'backup', '--exit-code', '42']);
    expect(r.code).toBe(0);
    expect(await latest('backup')).toMatchObject({ status: 'down', error: expect.stringContaining('42'), details: { exit_code: 42 } });

    r = await mkt(['ping', 'backup', '--exit-code', '0']);
    expect(r.code).toBe(0);
    expect(await latest('backup')).toMatchObject({ status: 'operational', details: { exit_code: 0 } });
  });

  it('--log - sends stdin as the run log; --log FILE a file, its last 100 KiB when longer', async () => {
    let r = await mkt(['ping', 'backup', '--exit-code', '3', '--log', '-', '--ping-url', `${mon.url}/ping/${KEY}`], { stdin: 'dumped 12 tables\nerror: disk full\n' });
    expect(r.code).toBe(0);
    expect(await latest('backup')).toMatchObject({ status: 'down', details: { exit_code: 3, log: 'dumped 12 tables\nerror: disk full\n' } });

    const file = join(dir.path, 'backup.log');
    // 150 KiB of lines, then the end that matters: over the monitor's 100 KiB body limit.
    writeFileSync(file, 'x'.repeat(63) + '\n'.repeat(1) + ('line of the log\n'.repeat(150 * 64)) + 'THE END\n');
    r = await mkt(['ping', 'backup', '--log', 'backup.log']);
    expect(r).toMatchObject({ code: 0, err: '' });
    const snap = await latest('backup');
    expect(snap.details.log.endsWith('line of the log\nTHE END\n')).toBe(true);
    expect(snap.details.log_truncated).toBe(true);

    r = await mkt(['ping', 'backup', '--log', 'missing.log']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^mkt: --log: cannot read missing\.log: ENOENT\n/);
  });

  it('MKT_MONITOR_PING_URL stands for --ping-url, so the key stays out of the process list', async () => {
    const r = await mkt(['ping', 'backup', '--start', '--json'], { env: { MKT_MONITOR_TOKEN: 'wrong', MKT_MONITOR_PING_URL: `${mon.url}/ping/${KEY}` } });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ target: 'backup', signal: 'start' });
    expect(r.err).toBe('');
    // The URL names the target it belongs to: a ping meant for another one says so.
    const other = await mkt(['ping', 'nightly', '--start'], { env: { MKT_MONITOR_PING_URL: `${mon.url}/ping/${KEY}` } });
    expect(other).toEqual({ code: 0, out: '', err: 'mkt: warning: that ping URL belongs to backup, not nightly: backup got the signal\n' });
  });

  it('an unknown key exits 1; an unreachable monitor 3; a malformed URL 2; the key is never printed', async () => {
    const wrong = 'zzzzzzzzzzzzzzzzzzzz';
    let r = await mkt(['ping', 'backup', '--ping-url', `${mon.url}/ping/${wrong}`]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^mkt: monitor ping: success ping of backup at 127\.0\.0\.1:\d+: no heartbeat target has this ping URL .*\(HTTP 404\)\n$/);
    expect(r.err).not.toContain(wrong);

    const port = await freePort();
    r = await mkt(['ping', 'backup', '--fail', '--ping-url', `http://127.0.0.1:${port}/ping/${KEY}`]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(new RegExp(`^mkt: monitor ping: fail ping of backup at 127\\.0\\.0\\.1:${port}: ECONNREFUSED\\n$`));
    expect(r.err).not.toContain(KEY);

    r = await mkt(['ping', 'backup', '--server', `http://127.0.0.1:${port}`]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/^mkt: monitor ping: status of backup at 127\.0\.0\.1:\d+: cannot reach/);

    r = await mkt(['ping', 'backup', '--ping-url', `ftp://h/ping/${KEY}`]);
    expect(r.code).toBe(2);
    expect(r.err).toBe('mkt: --ping-url is not a ping URL: it must be an http(s) URL ending in /ping/KEY\n');

    r = await mkt(['ping', 'api']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/api is not a heartbeat target/);
  });
});

describe('mkt monitor detail, and status TARGET of a heartbeat target', () => {
  it('status shows the heartbeat fields and the ping URL with its key hidden; --json is the API document', async () => {
    await mkt(['ping', 'backup', '--exit-code', '0']);
    const r = await mkt(['status', 'backup']);
    expect(r.code).toBe(0);
    const fields = Object.fromEntries(r.out.trim().split('\n').map((l) => l.split('\t') as [string, string]));
    expect(fields).toMatchObject({ target: 'backup', status: 'operational', heartbeat: 'every 1h, grace 5m' });
    expect(fields['last ping']).toMatch(/^\d{4}-\d\d-\d\dT.* \(ok\)$/);
    expect(fields['ping url']).toBe(`${mon.url}/ping/<key> (\`mkt monitor ping-url backup\` prints it)`);
    expect(r.out).not.toContain(KEY);
    const nightly = Object.fromEntries((await mkt(['status', 'nightly'])).out.trim().split('\n').map((l) => l.split('\t') as [string, string]));
    expect(nightly).toMatchObject({ heartbeat: 'schedule "0 3 * * *" (Europe/Berlin), grace 30m', 'last ping': 'none yet' });
    expect(JSON.parse((await mkt(['status', 'backup', '--json'])).out).ping_url).toBe(`${mon.url}/ping/${KEY}`);
  });

  it('detail lists the latest snapshots with error and response time, and the log of the latest run that sent one', async () => {
    await mkt(['ping', 'backup', '--exit-code', '5', '--log', '-'], { stdin: 'copying\n\u001b[2Jrsync: connection reset\n' });
    await mkt(['ping', 'backup', '--start']);
    const r = await mkt(['detail', 'backup']);
    expect(r.code).toBe(0);
    const [head, table, log] = r.out.split('\n\n');
    expect(head).toMatch(/^target\tbackup\n/);
    expect(head).not.toContain(KEY);
    // The rows of the pings (a turn of the target's own, without a signal, may come between them).
    const rows = table!.trim().split('\n').map((l) => l.split('\t')).filter((r) => r[3] !== '');
    // checked, status, ms, signal, error: most recent first.
    expect(rows[0]!.slice(3)).toEqual(['start', 'the job exited with status 5']);
    expect(rows[1]!.slice(1)).toEqual(['down', '0', '5', 'the job exited with status 5']);
    // The escape sequence is shown, not sent to the terminal.
    expect(log).toMatch(/^log of the run at \S+ \(signal 5\):\ncopying\n\\x1b\[2Jrsync: connection reset\n$/);

    const j = JSON.parse((await mkt(['detail', 'backup', '--json'])).out);
    expect(j).toMatchObject({ target: 'backup', heartbeat: { period_s: 3600, grace_s: 300 }, log: { signal: '5', text: 'copying\n\u001b[2Jrsync: connection reset\n', truncated: false } });
    expect(j.recent.find((r: { details?: { signal?: string } }) => r.details?.signal).details.signal).toBe('start');
    expect(JSON.stringify(j)).not.toContain(KEY);
    expect((await mkt(['detail', 'ghost'])).code).toBe(1);
  });

  it('detail of a polled target has no signal column and no log', async () => {
    const r = await mkt(['detail', 'api']);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('log of the run');
    const j = JSON.parse((await mkt(['detail', 'api', '--json'])).out);
    expect(j.log).toBeNull();
  });
});
