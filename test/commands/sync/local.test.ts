// `mkt sync` without a server (issue 7): input parsing (JSON lines, sizes, cursors), the local
// price formula, the 0600 state files, the keyring assembled from the server's envelopes, and
// the exit codes of usage errors and of commands run before login.
import { appendFileSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { newMasterKey, sealKeyring } from '../../../src/crypto/envelope.js';
import { keyFingerprint } from '../../../src/crypto/sync-keys.js';
import { parseChanges } from '../../../src/sync/changelog.js';
import { keysFromServer } from '../../../src/sync/keys.js';
import { capInRange, formatBytes, parseSize, quoteCents } from '../../../src/sync/pricing.js';
import { SyncState } from '../../../src/sync/state.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';

const home = tempDir('mkt-sync-local-');
const env = { XDG_CONFIG_HOME: join(home.path, 'config'), MKT_CREDENTIAL_STORE: 'file', MKT_MARKETPLACE_URL: 'http://127.0.0.1:9' };
afterAll(() => home.remove());

async function mkt(args: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env, stdin });
  const code = await run(['sync', ...args], io);
  return { code, out: io.out(), err: io.err() };
}

const FAST = { logN: 10, r: 8, p: 1 };

describe('push input: JSON lines {table, op, row_id, data}', () => {
  const now = () => new Date('2026-11-23T08:00:00.000Z');
  it('reads objects, skips blank lines, stamps a missing timestamp, keeps a given one', () => {
    const c = parseChanges('{"table":"notes","op":"upsert","row_id":"n1","data":{"t":"hi"}}\n\n{"table":"notes","op":"delete","row_id":"n2","timestamp":"2026-01-01T00:00:00Z"}\n', now);
    expect(c).toEqual([
      { table: 'notes', op: 'upsert', row_id: 'n1', timestamp: '2026-11-23T08:00:00.000Z', data: { t: 'hi' } },
      { table: 'notes', op: 'delete', row_id: 'n2', timestamp: '2026-01-01T00:00:00Z', data: null },
    ]);
  });
  it('a malformed line is a usage error naming the line', () => {
    expect(() => parseChanges('{"table":"t","op":"i","row_id":"1"}\n{nope', now)).toThrow(/line 2: not JSON/);
    expect(() => parseChanges('[1]', now)).toThrow(/line 1: expected an object/);
    expect(() => parseChanges('{"table":"t","op":"i","row_id":""}', now)).toThrow(/"row_id" must be a non-empty string/);
    expect(() => parseChanges('{"table":"t","op":"i","row_id":"1","timestamp":"yesterday"}', now)).toThrow(/timestamp/);
  });
});

describe('plan: sizes and the local quote', () => {
  const pricing = { app_name: 'A', min_charge_cents: 99, per_gb_tenths_of_cent_per_month: 25, annual_multiplier: 10, min_cap_bytes: 2 ** 30, max_cap_bytes: 2 ** 40 };
  it('parses binary and decimal units exactly, refuses fractions of a byte and junk', () => {
    expect(parseSize('50GiB')).toBe(50 * 2 ** 30);
    expect(parseSize('1.5TiB')).toBe(1.5 * 2 ** 40);
    expect(parseSize('500MB')).toBe(500e6);
    expect(parseSize('1073741824')).toBe(2 ** 30);
    expect(parseSize('0.5B')).toBeUndefined();
    expect(parseSize('12 parsecs')).toBeUndefined();
    expect(formatBytes(50 * 2 ** 30)).toBe('50 GiB');
  });
  it('monthly = max(floor, ceil(GiB × rate / 10)); annual = monthly × multiplier, same floor', () => {
    expect(quoteCents(pricing, 50 * 2 ** 30, 'month')).toBe(125);
    expect(quoteCents(pricing, 50 * 2 ** 30, 'year')).toBe(1250);
    expect(quoteCents(pricing, 2 ** 30, 'month')).toBe(99);
    expect(quoteCents(pricing, 2 ** 30, 'year')).toBe(990);
    expect(quoteCents(pricing, 2 ** 30 + 1, 'month')).toBe(99);
    expect(quoteCents(pricing, 41 * 2 ** 30, 'month')).toBe(103); // 102.5 rounds up
    expect(capInRange(pricing, 2 ** 30 - 1)).toBe(false);
    expect(capInRange(pricing, 2 ** 40)).toBe(true);
  });
});

describe('local state', () => {
  it('profiles and upload sessions are 0600 files in a 0700 directory', () => {
    const st = new SyncState({ XDG_CONFIG_HOME: join(home.path, 'state') });
    st.saveProfile({ server: 'http://x', api_key: 'k', email: 'a@b', cursor: 0 });
    st.saveUpload({ server: 'http://x', hash: 'a'.repeat(64), file: '/f', plain_size: 1, size_bytes: 41, upload_id: 'u', key_fingerprint: 'ff', part_size: 8, part_count: 6, etags: {}, started_at: '' });
    expect(statSync(join(st.dir, 'profiles.json')).mode & 0o777).toBe(0o600);
    expect(statSync(st.dir).mode & 0o777).toBe(0o700);
    expect(st.uploads('http://x').map((u) => u.upload_id)).toEqual(['u']);
    expect(st.uploads('http://y')).toEqual([]);
    st.removeUpload('http://x', 'a'.repeat(64));
    expect(st.uploads('http://x')).toEqual([]);
  });

  it("a stored part is one line appended to the session's log, read back with the session; torn lines and another upload's lines are left out", () => {
    const st = new SyncState({ XDG_CONFIG_HOME: join(home.path, 'parts') });
    const hash = 'b'.repeat(64);
    const session = { server: 'http://x', hash, file: '/f', plain_size: 1, size_bytes: 41, upload_id: 'u1', key_fingerprint: 'ff', part_size: 8, part_count: 6, etags: { '1': '"e1"' }, started_at: '' };
    st.saveUpload(session);
    st.recordPart(session, 2, '"e2"');
    st.recordPart(session, 3, '"e3"');
    expect(session.etags).toEqual({ '1': '"e1"', '2': '"e2"', '3': '"e3"' });
    const dir = join(st.dir, 'uploads');
    const log = readdirSync(dir).find((n) => n.endsWith('.parts'))!;
    expect(statSync(join(dir, log)).mode & 0o777).toBe(0o600);
    // A line of an earlier session under the same name, and a line torn by a crash mid-write.
    appendFileSync(join(dir, log), '\n{"upload_id":"u0","part":4,"etag":"\\"old\\""}\n{"upload_id":"u1","part":5,"et');
    expect(st.upload('http://x', hash)?.etags).toEqual({ '1': '"e1"', '2': '"e2"', '3': '"e3"' });
    expect(st.uploads('http://x').map((u) => Object.keys(u.etags).length)).toEqual([3]);
    // The run that resumes after the crash: its first part is read back whole, not joined to the torn line.
    const resumed = st.upload('http://x', hash)!;
    st.recordPart(resumed, 6, '"e6"');
    expect(st.upload('http://x', hash)?.etags).toEqual({ '1': '"e1"', '2': '"e2"', '3': '"e3"', '6': '"e6"' });
    // A session written whole again (a new start) holds its ETags itself: the log goes.
    st.saveUpload({ ...session, upload_id: 'u2', etags: {} });
    expect(existsSync(join(dir, log))).toBe(false);
    expect(st.upload('http://x', hash)?.etags).toEqual({});
    st.recordPart({ ...session, upload_id: 'u2', etags: {} }, 1, '"n1"');
    st.removeUpload('http://x', hash);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('keyring from the server envelopes', () => {
  it('maps every key id (current, pending, retired) to its key; the pending key comes first', async () => {
    const [k1, k2, k3] = [newMasterKey(), newMasterKey(), newMasterKey()];
    const info = {
      encrypted_key: await sealKeyring({ keys: [k1] }, 'pw', FAST),
      key_version: 1,
      key_id: 1,
      pending_key: { encrypted_key: await sealKeyring({ keys: [k3, k1] }, 'pw', FAST), key_id: 3, rotation_id: 'r', target_seq: 5 },
      retired_keys: [{ encrypted_key: await sealKeyring({ keys: [k2, k1] }, 'pw', FAST), key_id: 2 }],
    };
    const { ring, ids } = await keysFromServer(info, 'pw');
    expect(ring.keys.map(keyFingerprint)).toEqual([k3, k1, k2].map(keyFingerprint));
    expect(Object.fromEntries(Object.entries(ids).map(([id, k]) => [id, keyFingerprint(k)]))).toEqual({ 1: keyFingerprint(k1), 2: keyFingerprint(k2), 3: keyFingerprint(k3) });
    await expect(keysFromServer(info, 'wrong')).rejects.toThrow(/wrong password/);
  });
});

describe('exit codes without a server', () => {
  it('usage errors exit 2 before any network call', async () => {
    const push = await mkt(['push'], '{"table":"t","op":"i","row_id":"1"}\nnot json\n');
    expect(push.code).toBe(2);
    expect(push.err).toMatch(/line 2: not JSON/);
    expect((await mkt(['pull', '--since', 'yesterday'])).code).toBe(2);
    expect((await mkt(['plan', 'quote', '--cap', '12parsecs'])).code).toBe(2);
    expect((await mkt(['blob', 'get', 'a'.repeat(64)])).code).toBe(2);
    expect((await mkt(['login', '--email', 'ada@example.com'], 'pw\n')).err).toMatch(/no app key/);
    expect((await mkt(['login', '--app-key', 'k', '--email', 'ada@example.com'], '')).code).toBe(2);
  });
  it('a command that needs a session exits 4 with the login hint when not logged in', async () => {
    const r = await mkt(['status']);
    expect(r.code).toBe(4);
    expect(r.err).toMatch(/not logged in to sync/);
    expect(r.err).toMatch(/mkt sync login/);
  });
  it('login to a server that is not there exits 3', async () => {
    const r = await mkt(['login', '--app-key', 'k', '--email', 'ada@example.com'], 'hunter2-secret\n');
    expect(r.code).toBe(3);
    expect(r.err).not.toContain('hunter2');
  });
});
