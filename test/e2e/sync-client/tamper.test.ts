// Issue 7 "tampered ciphertext, reordered chunks, a chunk moved between blobs, and a wrong key
// each fail loudly", through a real marketplace: the stored bytes are altered behind the server's
// back (the database row, the object file), and the client refuses them with exit 1 — for blobs
// without writing (or overwriting) the output file.
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CHUNK_SIZE, HEADER_BYTES, TAG_BYTES, ciphertextSize } from '../../../src/crypto/sync-blob.js';
import { startSyncWorld, type Device, type SyncWorld } from './harness.js';

let w: SyncWorld;
let a: Device;
const SEALED = DEFAULT_CHUNK_SIZE + TAG_BYTES;

beforeAll(async () => {
  w = await startSyncWorld();
  a = w.device('a');
  expect((await a.mkt(['login', '--app-key', w.appKey, '--email', w.email], `${w.password}\n`)).code).toBe(0);
  expect((await a.mkt(['key', 'init'], `${w.password}\n`)).code).toBe(0);
});
afterAll(async () => w?.close());

/** The stored object of a blob: the one file under objects/blobs with its ciphertext size (not the `.put` staging copy). */
function objectFile(plainSize: number, exclude: string[] = []): string {
  const want = ciphertextSize(plainSize);
  const found: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (!e.name.endsWith('.put') && statSync(p).size === want && !exclude.includes(p)) found.push(p);
    }
  };
  walk(join(w.dataDir, 'objects', 'blobs'));
  expect(found).toHaveLength(1);
  return found[0]!;
}

async function put(name: string, plain: Buffer): Promise<string> {
  writeFileSync(join(a.home, name), plain);
  const r = await a.mkt(['blob', 'put', name]);
  expect(r.code, r.err).toBe(0);
  const hash = r.out.trim();
  expect(hash).toBe(createHash('sha256').update(plain).digest('hex'));
  return hash;
}

/** `blob get` into a file that already holds something: it must be left as it was. */
async function refused(hash: string, pattern: RegExp): Promise<void> {
  const out = join(a.home, 'restore.bin');
  writeFileSync(out, 'previous content');
  const r = await a.mkt(['blob', 'get', hash, '-o', 'restore.bin']);
  expect(r.code).toBe(1);
  expect(r.err).toMatch(pattern);
  expect(readFileSync(out, 'utf8')).toBe('previous content');
  expect(readdirSync(a.home).filter((n) => n.endsWith('.mkt-partial'))).toEqual([]);
}

describe('altered data on the server fails loudly on the client', () => {
  it('a changelog ciphertext altered, or moved to another row, fails to open (exit 1, naming the entry)', async () => {
    expect((await a.mkt(['push'], '{"table":"notes","op":"upsert","row_id":"n1","data":{"x":1}}\n{"table":"notes","op":"upsert","row_id":"n2","data":{"x":2}}\n')).code).toBe(0);
    const db = await w.database();
    try {
      const rows = await db.all<{ seq: number; data: string }>('SELECT seq, data FROM sync_entries ORDER BY seq');
      // Moved: row n2's ciphertext under row n1.
      await db.run('UPDATE sync_entries SET data = ? WHERE seq = 1', [rows[1]!.data]);
      let r = await a.mkt(['pull', '--since', '0']);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/entry notes\/n1 \(key 1\) failed to open/);
      // Altered: one bit of the ciphertext flipped.
      const sealed = JSON.parse(rows[0]!.data) as string;
      const raw = Buffer.from(sealed.slice(3), 'base64');
      raw[20]! ^= 1;
      await db.run('UPDATE sync_entries SET data = ? WHERE seq = 1', [JSON.stringify('m1.' + raw.toString('base64'))]);
      r = await a.mkt(['pull', '--since', '0']);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/failed to open/);
      await db.run('UPDATE sync_entries SET data = ? WHERE seq = 1', [rows[0]!.data]);
      expect((await a.mkt(['pull', '--since', '0'])).code).toBe(0);
    } finally {
      await db.close();
    }
  });

  it('a flipped byte, swapped chunks, a chunk from another blob and a stranger key each make blob get refuse', async () => {
    const p1 = randomBytes(3 * DEFAULT_CHUNK_SIZE + 100);
    const p2 = randomBytes(3 * DEFAULT_CHUNK_SIZE + 100);
    const h1 = await put('one.bin', p1);
    const f1 = objectFile(p1.length);
    const h2 = await put('two.bin', p2);
    const f2 = objectFile(p2.length, [f1]);
    const good1 = readFileSync(f1);
    const good2 = readFileSync(f2);
    const chunk = (buf: Buffer, i: number): Buffer => buf.subarray(HEADER_BYTES + i * SEALED, HEADER_BYTES + (i + 1) * SEALED);

    const flipped = Buffer.from(good1);
    flipped[HEADER_BYTES + SEALED + 5]! ^= 0x80;
    writeFileSync(f1, flipped);
    await refused(h1, /chunk 1 of 4 failed to open/);

    writeFileSync(f1, Buffer.concat([good1.subarray(0, HEADER_BYTES), chunk(good1, 1), chunk(good1, 0), good1.subarray(HEADER_BYTES + 2 * SEALED)]));
    await refused(h1, /chunk 0 of 4 failed to open/);

    writeFileSync(f1, Buffer.concat([good1.subarray(0, HEADER_BYTES + SEALED), chunk(good2, 1), good1.subarray(HEADER_BYTES + 2 * SEALED)]));
    await refused(h1, /chunk 1 of 4 failed to open/);

    // Blob two's object under blob one's name: another key (salted by the other hash) entirely.
    writeFileSync(f1, good2);
    await refused(h1, /failed to open/);

    // Sealed by a key this account never had: the header names a fingerprint not in the keyring.
    const stranger = Buffer.from(good1);
    stranger.fill(0xab, 4, 12);
    writeFileSync(f1, stranger);
    await refused(h1, /not in this keyring/);

    writeFileSync(f1, good1);
    const ok = await a.mkt(['blob', 'get', h1, '-o', 'restore.bin']);
    expect(ok.code, ok.err).toBe(0);
    expect(readFileSync(join(a.home, 'restore.bin')).equals(p1)).toBe(true);
    expect((await a.mkt(['blob', 'get', h2, '-o', 'two-back.bin'])).code).toBe(0);
  });

  it('a device holding another account key cannot open the blob (wrong key)', async () => {
    const p = randomBytes(1000);
    const h = await put('mine.bin', p);
    // Replace this device's keyring with a stranger's key (same key id mapping, different key).
    const s = await a.session();
    const { newMasterKey } = await import('../../../src/crypto/envelope.js');
    const stranger = newMasterKey();
    await s.saveKeyring({ keys: [stranger] }, { 1: stranger });
    await refused(h, /not in this keyring/);
    const pull = await a.mkt(['pull', '--since', '0']);
    expect(pull.code).toBe(1);
    expect(pull.err).toMatch(/failed to open: wrong key/);
    expect((await a.mkt(['key', 'unlock'], `${w.password}\n`)).code).toBe(0);
    expect((await a.mkt(['blob', 'get', h, '-o', 'mine-back.bin'])).code).toBe(0);
  });
});
