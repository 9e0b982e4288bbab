// `mkt license run -- COMMAND` against a real license server (issue 33, "Leased seats"): the
// command's status passed through and its seat released, `--wait 0` on a full key, a wait that
// ends when a seat frees, heartbeats that keep a seat past its lease, a lost seat taken again,
// a node-locked key left activated, and usage errors. Signals: test/e2e/license-run.test.ts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO, type FakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { startLicenseServer, type LicenseServer } from '../../helpers/license-server.js';

const home = tempDir('mkt-license-run-');
let s: LicenseServer;
let env: NodeJS.ProcessEnv;
let n = 0;

/** A floating item (`seats` held at once, `lease` seconds each) and one key for it. */
async function floatingKey(seats: number, lease: number): Promise<string> {
  const id = `pool-${++n}`;
  await s.admin.createItem({ id, name: id, licenseTemplate: null, maxActivations: seats, verification: true, activation: 'floating', leaseSeconds: lease });
  return (await s.admin.issueKeys({ itemId: id, count: 1, expiresAt: null, licensee: null }))[0]!.key;
}

async function post<T = Record<string, unknown>>(path: string, body: object): Promise<T> {
  const res = await fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

/** Seats in use now, as the key's status tells (a floating key counts live leases). */
async function inUse(key: string): Promise<number> {
  return (await post<{ license: { activation_count: number } }>('/api/v1/keys/status', { key })).license.activation_count;
}

function start(args: string[], key: string): { io: FakeIO; done: Promise<number> } {
  const io = fakeIO({ env: { ...env, MKT_LICENSE_KEY: key }, cwd: home.path });
  return { io, done: run(['license', 'run', ...args], io) };
}

async function mkt(args: string[], key: string): Promise<{ code: number; out: string; err: string }> {
  const { io, done } = start(args, key);
  const code = await done;
  return { code, out: io.out(), err: io.err() };
}

beforeAll(async () => {
  s = await startLicenseServer();
  // PATH: the wrapped commands are found as a shell finds them.
  env = { PATH: process.env.PATH, XDG_CONFIG_HOME: join(home.path, 'config'), XDG_CACHE_HOME: join(home.path, 'cache'), MKT_CREDENTIAL_STORE: 'file', MKT_MARKETPLACE_URL: s.url };
});
afterAll(async () => {
  await s?.close();
  home.remove();
});

describe('mkt license run: a seat for the life of the command', () => {
  it("passes the command's status and output through (0, 3, 42) and releases the seat at once (a 1 h lease cannot have lapsed)", async () => {
    const key = await floatingKey(1, 3600);
    for (const status of [0, 3, 42]) {
      const r = await mkt(['--', 'sh', '-c', `echo out-${status}; echo err-${status} >&2; exit ${status}`], key);
      expect(r).toEqual({ code: status, out: `out-${status}\n`, err: `err-${status}\n` });
      expect(await inUse(key)).toBe(0);
    }
  });

  it('a command that cannot be found exits 127 as a shell, and its seat is released', async () => {
    const key = await floatingKey(1, 3600);
    const r = await mkt(['--', 'mkt-no-such-command'], key);
    expect(r.code).toBe(127);
    expect(r.err).toBe('mkt: cannot run "mkt-no-such-command": command not found (ENOENT)\n');
    expect(await inUse(key)).toBe(0);
  });

  it('--wait 0 on a full key exits 1 with one line, and the command never runs', async () => {
    const key = await floatingKey(1, 3600);
    expect(await post('/api/v1/keys/validate', { key, machine_id: 'holder', activate: true })).toMatchObject({ valid: true });
    const marker = join(home.path, 'never-ran');
    const r = await mkt(['--wait', '0', '--', 'touch', marker], key);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^mkt: TOO_MANY_ACTIVATIONS: all 1 seat is taken \(the next frees in \d+ s\); --wait 0 does not wait\n$/);
    expect(existsSync(marker)).toBe(false);
    expect(await inUse(key)).toBe(1);
  });

  it('waits while the key is full, saying so once, and runs the command when the holder releases its seat', async () => {
    const key = await floatingKey(1, 3600);
    await post('/api/v1/keys/validate', { key, machine_id: 'holder', activate: true });
    const job = start(['--wait', '1m', '--', 'sh', '-c', 'echo ran'], key);
    await waitFor(async () => job.io.err().includes('waiting'), 'the job to wait for a seat');
    expect(job.io.err()).toMatch(/^mkt: all 1 seat is taken; waiting up to 1m \(next frees in \d+ s\)\n$/);
    expect(await post('/api/v1/keys/deactivate', { key, machine_id: 'holder' })).toMatchObject({ success: true, code: 'RELEASED' });
    expect(await job.done).toBe(0);
    expect(job.io.out()).toBe('ran\n');
    expect(job.io.err()).toMatch(/\nmkt: took a seat after waiting \d+s\n$/);
    expect(job.io.err().match(/waiting up to/g)).toHaveLength(1);
    expect(await inUse(key)).toBe(0);
  });

  it('a wait that runs out exits 1 after --wait, saying why, and the command never runs', async () => {
    const key = await floatingKey(1, 3600);
    await post('/api/v1/keys/validate', { key, machine_id: 'holder', activate: true });
    const marker = join(home.path, 'timed-out-ran');
    const t0 = Date.now();
    const r = await mkt(['--wait', '2s', '--', 'touch', marker], key);
    const took = Date.now() - t0;
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^mkt: all 1 seat is taken; waiting up to 2s \(next frees in \d+ s\)\nmkt: TOO_MANY_ACTIVATIONS: all 1 seat is taken still, after waiting 2s; raise --wait or the key's seats\n$/);
    expect(took).toBeGreaterThanOrEqual(2000);
    expect(existsSync(marker)).toBe(false);
  });

  it('a lease its holder stops renewing lapses, and the waiting job takes the seat with no release at all', async () => {
    const key = await floatingKey(1, 1);
    await post('/api/v1/keys/validate', { key, machine_id: 'vanished-runner', activate: true });
    const r = await mkt(['--wait', '30s', '--', 'sh', '-c', 'echo ran'], key);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('ran\n');
    expect(r.err).toMatch(/^mkt: all 1 seat is taken; waiting up to 30s \(next frees in 1 s\)\nmkt: took a seat after waiting \d+s\n$/);
  });

  it('heartbeats keep the seat well past its 2 s lease: another machine is refused all along', async () => {
    // 2 s, renewed every 667 ms: a loaded machine's stall must pass 1.3 s to lapse it.
    const key = await floatingKey(1, 2);
    const started = join(home.path, 'hb-started');
    const job = start(['--', 'sh', '-c', `touch ${started}; sleep 5`], key);
    let finished = false;
    void job.done.then(() => (finished = true));
    await waitFor(async () => existsSync(started), 'the command to start');
    let refusals = 0;
    while (!finished) {
      const v = await post<{ valid: boolean; code: string; retry_after: number | null }>('/api/v1/keys/validate', { key, machine_id: 'intruder', activate: true });
      if (finished) break;
      expect(v).toMatchObject({ valid: false, code: 'TOO_MANY_ACTIVATIONS' });
      expect(v.retry_after).toBeGreaterThanOrEqual(1);
      refusals++;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await job.done).toBe(0);
    // Two and a half leases went by with the seat held all along.
    expect(refusals).toBeGreaterThan(5);
    expect(job.io.err()).toBe('');
    expect(await inUse(key)).toBe(0);
  });

  it('a seat lost while the command runs is taken again, with one warning, and released at the end', async () => {
    // A 2 s lease, renewed every 667 ms: only the release below loses it, not a loaded machine's stall.
    const key = await floatingKey(1, 2);
    const started = join(home.path, 'lost-started');
    const job = start(['--machine', 'ci-job-lost', '--', 'sh', '-c', `touch ${started}; sleep 3.5`], key);
    await waitFor(async () => existsSync(started), 'the command to start');
    // Someone frees the job's seat under it (as a lapse during a network cut would).
    expect(await post('/api/v1/keys/deactivate', { key, machine_id: 'ci-job-lost' })).toMatchObject({ success: true });
    await waitFor(async () => job.io.err().includes('took the seat again'), 'the seat to be taken again');
    expect(await inUse(key)).toBe(1);
    expect(await job.done).toBe(0);
    expect(job.io.err()).toBe('mkt: warning: the seat lapsed before it was renewed; taking it again\nmkt: took the seat again\n');
    expect(await inUse(key)).toBe(0);
  });

  it('a node-locked key: the machine is activated and stays so; a full one is refused at once, whatever --wait says', async () => {
    await s.admin.createItem({ id: 'desktop', name: 'Desktop', licenseTemplate: null, maxActivations: 1, verification: true });
    const [k] = await s.admin.issueKeys({ itemId: 'desktop', count: 1, expiresAt: null, licensee: null });
    const r = await mkt(['--machine', 'build-host', '--', 'true'], k!.key);
    expect(r.code, r.err).toBe(0);
    expect(await inUse(k!.key)).toBe(1);
    expect(await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'build-host' })).toMatchObject({ valid: true });
    const other = await mkt(['--machine', 'other-host', '--wait', '10m', '--', 'true'], k!.key);
    expect(other.code).toBe(1);
    expect(other.err).toBe('mkt: TOO_MANY_ACTIVATIONS: all 1 seat is taken and node-locked activations do not lapse: free one with `mkt license deactivate --machine ID`\n');
  });

  it('a key suspended while the command runs: one warning, the command runs on, and the release still works', async () => {
    const key = await floatingKey(1, 2);
    const started = join(home.path, 'suspended-started');
    const job = start(['--', 'sh', '-c', `touch ${started}; sleep 1.5; echo done`], key);
    await waitFor(async () => existsSync(started), 'the command to start');
    await s.admin.suspend(key);
    expect(await job.done).toBe(0);
    expect(job.io.out()).toBe('done\n');
    expect(job.io.err()).toMatch(/^mkt: warning: the seat was not renewed: SUSPENDED: [^\n]+; the command runs on\n$/);
    await s.admin.reinstate(key);
    expect(await inUse(key)).toBe(0);
  });

  it('a suspended key exits 1 with SUSPENDED before anything runs', async () => {
    const key = await floatingKey(1, 60);
    await s.admin.suspend(key);
    const marker = join(home.path, 'suspended-ran');
    const r = await mkt(['--', 'touch', marker], key);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^mkt: SUSPENDED: [^\n]+\n$/);
    expect(existsSync(marker)).toBe(false);
  });

  it('a revoked key exits 1 with its code, and nothing runs', async () => {
    const key = await floatingKey(2, 60);
    await s.admin.revoke(key);
    const marker = join(home.path, 'revoked-ran');
    const r = await mkt(['--', 'touch', marker], key);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^mkt: REVOKED: /);
    expect(existsSync(marker)).toBe(false);
  });

  it('usage errors exit 2 before anything is asked: no command, a malformed --wait', async () => {
    const key = await floatingKey(1, 60);
    const none = await mkt(['--', ''], key);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/^mkt: license run: no command given\n/);
    const wait = await mkt(['--wait', 'soon', '--', 'true'], key);
    expect(wait).toMatchObject({ code: 2, err: 'mkt: --wait must be a duration such as 30s, 10m or 1h (0 = do not wait), not "soon"\n' });
    expect(await inUse(key)).toBe(0);
  });
});
