// Issue 7 "Tests that must exist": two devices (two config dirs, file credential store) round-trip
// changelog entries and blobs through a real marketplace; the server only ever holds ciphertext.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSyncWorld, type Device, type SyncWorld } from './harness.js';

let w: SyncWorld;
let a: Device;
let b: Device;

beforeAll(async () => {
  w = await startSyncWorld();
  a = w.device('laptop');
  b = w.device('phone');
});
afterAll(async () => w?.close());

const lines = (out: string): Record<string, unknown>[] =>
  out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('mkt sync: two devices, one account', () => {
  it('device A logs in (password on stdin), creates the key; the token and keyring sit in a 0600 file', async () => {
    const login = await a.mkt(['login', '--app-key', w.appKey, '--email', w.email, '--device', 'laptop', '--json'], `${w.password}\n`);
    expect(login.code, login.err).toBe(0);
    expect(JSON.parse(login.out)).toMatchObject({ email: w.email, device_name: 'laptop', key_unlocked: false, credentials: 'file' });
    const init = await a.mkt(['key', 'init', '--json'], `${w.password}\n`);
    expect(init.code, init.err).toBe(0);
    expect(JSON.parse(init.out)).toMatchObject({ key_id: 1, key_version: 1, keys_held: 1 });
    const creds = join(a.env.XDG_CONFIG_HOME!, 'mkt', 'credentials.json');
    expect(statSync(creds).mode & 0o777).toBe(0o600);
    expect(Object.keys(JSON.parse(readFileSync(creds, 'utf8')) as object).sort()).toEqual([`sync-keyring@${w.url}`, `sync-token@${w.url}`]);
    // A second init is refused: the account already has a key.
    expect((await a.mkt(['key', 'init'], `${w.password}\n`)).code).toBe(1);
  });

  it('a wrong password is an auth failure (exit 4) and stores nothing', async () => {
    const r = await b.mkt(['login', '--app-key', w.appKey, '--email', w.email], 'not the password\n');
    expect(r.code).toBe(4);
    expect(existsSync(join(b.env.XDG_CONFIG_HOME!, 'mkt', 'credentials.json'))).toBe(false);
  });

  it('A pushes JSON lines; B logs in (which unlocks the key) and pulls them decrypted', async () => {
    const input = [
      { table: 'notes', op: 'upsert', row_id: 'n1', data: { title: 'Groceries', body: 'secret-plaintext-marker' } },
      { table: 'notes', op: 'upsert', row_id: 'n2', data: { title: 'Ideas', tags: ['a', 'b'] } },
      { table: 'notes', op: 'delete', row_id: 'n1' },
    ];
    const push = await a.mkt(['push', '--json'], input.map((l) => JSON.stringify(l)).join('\n') + '\n');
    expect(push.code, push.err).toBe(0);
    expect(JSON.parse(push.out)).toMatchObject({ pushed: 3, cursor: 3, key_id: 1 });

    const login = await b.mkt(['login', '--app-key', w.appKey, '--email', w.email, '--device', 'phone', '--json'], `${w.password}\n`);
    expect(login.code, login.err).toBe(0);
    expect(JSON.parse(login.out)).toMatchObject({ key_unlocked: true });
    const pull = await b.mkt(['pull']);
    expect(pull.code, pull.err).toBe(0);
    expect(lines(pull.out)).toEqual(input.map((e, i) => ({ seq: i + 1, table: e.table, op: e.op, row_id: e.row_id, timestamp: expect.any(String), device_id: expect.any(String), data: e.data ?? null })));
    expect(pull.err).toMatch(/3 entries; cursor 3/);
    // The saved cursor: nothing new the second time.
    expect((await b.mkt(['pull'])).out).toBe('');
  });

  it('B pushes from a file; A pulls only what is new; --since 0 replays all and keeps the cursor', async () => {
    writeFileSync(join(b.home, 'changes.jsonl'), '{"table":"todos","op":"insert","row_id":"t1","data":{"text":"call mum"}}\n');
    expect((await b.mkt(['push', 'changes.jsonl'])).code).toBe(0);
    const first = await a.mkt(['pull']);
    expect(lines(first.out).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    const again = await a.mkt(['pull']);
    expect(again.out).toBe('');
    const replay = await a.mkt(['pull', '--since', '2']);
    expect(lines(replay.out).map((e) => e.row_id)).toEqual(['n1', 't1']);
    expect((await a.mkt(['pull'])).out).toBe('');
  });

  it('blobs: one-shot and multipart (several parts) uploads are read back identical on the other device', async () => {
    const small = randomBytes(100_000);
    const large = randomBytes(20 * 1024 * 1024 + 12345); // > 16 MiB: multipart, 3 parts of 8 MiB
    writeFileSync(join(a.home, 'small.bin'), small);
    writeFileSync(join(a.home, 'large.bin'), large);
    for (const [file, plain, mode] of [
      ['small.bin', small, 'one-shot'],
      ['large.bin', large, 'multipart'],
    ] as const) {
      const put = await a.mkt(['blob', 'put', file, '--json']);
      expect(put.code, put.err).toBe(0);
      const r = JSON.parse(put.out) as { hash: string; mode: string; already_exists: boolean; size_bytes: number };
      expect(r).toMatchObject({ hash: createHash('sha256').update(plain).digest('hex'), mode, already_exists: false });
      const get = await b.mkt(['blob', 'get', r.hash, '-o', `got-${file}`]);
      expect(get.code, get.err).toBe(0);
      expect(readFileSync(join(b.home, `got-${file}`)).equals(plain)).toBe(true);
      // Uploading the same content again sends nothing.
      const again = await b.mkt(['blob', 'put', `got-${file}`, '--json']);
      expect(JSON.parse(again.out)).toMatchObject({ hash: r.hash, already_exists: true });
    }
    // In a pipe, `blob put` prints just the hash.
    writeFileSync(join(a.home, 'note.txt'), 'hello, secret-blob-marker');
    const piped = await a.mkt(['blob', 'put', 'note.txt']);
    expect(piped.out).toBe(createHash('sha256').update('hello, secret-blob-marker').digest('hex') + '\n');
    expect(piped.err).toBe('');
    const missing = await b.mkt(['blob', 'get', 'f'.repeat(64), '-o', 'nothing.bin']);
    expect(missing.code).toBe(1);
    expect(existsSync(join(b.home, 'nothing.bin'))).toBe(false);
    // A bad output path is the caller's mistake (exit 2), named in the message.
    const nowhere = await b.mkt(['blob', 'get', createHash('sha256').update('hello, secret-blob-marker').digest('hex'), '-o', 'no/such/dir/f.txt']);
    expect(nowhere.code).toBe(2);
    expect(nowhere.err).toMatch(/cannot open .*no\/such\/dir.*ENOENT/);
  });

  it('devices ls shows both devices (this one marked); account and status answer', async () => {
    const ls = await a.mkt(['devices', 'ls', '--json']);
    expect((JSON.parse(ls.out) as { name: string }[]).map((d) => d.name).sort()).toEqual(['laptop', 'phone']);
    const table = await a.mkt(['devices', 'ls']);
    expect(table.out).toMatch(/laptop.*\*/);
    const acct = await b.mkt(['account', '--json']);
    expect(JSON.parse(acct.out)).toMatchObject({ email: w.email, username: 'ada', app_name: 'Notes' });
    // B's own push did not move its pull cursor (entries of other devices may lie before it).
    const st = await b.mkt(['status', '--json']);
    expect(JSON.parse(st.out)).toMatchObject({ server: { entry_count: 4, device_count: 2, key_id: 1, rotation_in_progress: false }, local: { cursor: 3, keys_held: 1 } });
  });

  it('devices rename gives this device a new name; rm removes it (404 -> exit 1)', async () => {
    const renamed = await b.mkt(['devices', 'rename', 'tablet', '--json']);
    expect(renamed.code, renamed.err).toBe(0);
    const id = (JSON.parse(renamed.out) as { id: string }).id;
    expect((await b.mkt(['devices', 'rm', id])).code).toBe(0);
    expect((await b.mkt(['devices', 'rm', id])).code).toBe(1);
    // B's current device was the one removed: pushing now asks to register again.
    const push = await b.mkt(['push'], '{"table":"t","op":"i","row_id":"x"}\n');
    expect(push.code).toBe(1);
    expect(push.err).toMatch(/devices rename NAME/);
    expect((await b.mkt(['devices', 'rename', 'phone'])).code).toBe(0);
  });

  it('the server never saw a password, a key or a plaintext', async () => {
    const log = w.log();
    expect(log).not.toContain(w.password);
    expect(log).not.toContain('secret-plaintext-marker');
    const db = await w.storedBytes();
    expect(db.includes(Buffer.from(w.email))).toBe(true);
    expect(db.includes(Buffer.from('secret-plaintext-marker'))).toBe(false);
    expect(db.includes(Buffer.from('Groceries'))).toBe(false);
    const objects = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? objects(join(dir, e.name)) : [join(dir, e.name)]));
    const stored = objects(join(w.dataDir, 'objects'));
    expect(stored.length).toBeGreaterThan(0);
    for (const f of stored) expect(readFileSync(f).includes(Buffer.from('secret-blob-marker'))).toBe(false);
  });

  it('logout forgets the token, keys and profile; commands then ask to log in (exit 4)', async () => {
    expect((await b.mkt(['logout'])).code).toBe(0);
    const r = await b.mkt(['pull']);
    expect(r.code).toBe(4);
    expect(r.err).toMatch(/mkt sync login/);
    expect((await b.mkt(['logout'])).code).toBe(1);
  });
});
