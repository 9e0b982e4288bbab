// The master-key envelope (issue 7 "Keys"): tweetnacl secretbox under an scrypt-derived key,
// a keyring that survives rotation, and refusal of wrong passwords and altered envelopes.
import { describe, expect, it } from 'vitest';
import nacl from 'tweetnacl';
import { scryptSync } from 'node:crypto';
import { decodeKeyring, encodeKeyring, EnvelopeError, newMasterKey, openKeyring, rotatedKeyring, sealKeyring } from '../../../src/crypto/envelope.js';
import { keyFingerprint } from '../../../src/crypto/sync-keys.js';

const FAST = { logN: 10, r: 8, p: 1 };

describe('sync key envelope', () => {
  it('round-trips a keyring with the password; a fresh salt and nonce every seal', async () => {
    const k = newMasterKey();
    const a = await sealKeyring({ keys: [k] }, 'correct horse', FAST);
    const b = await sealKeyring({ keys: [k] }, 'correct horse', FAST);
    expect(a).not.toBe(b);
    const ring = await openKeyring(a, 'correct horse');
    expect(Buffer.from(ring.keys[0]!).equals(Buffer.from(k))).toBe(true);
    expect(a).not.toContain(Buffer.from(k).toString('base64'));
  });

  it('is a documented format a browser can open with tweetnacl + scrypt (no mkt code needed)', async () => {
    const k = newMasterKey();
    const env = JSON.parse(await sealKeyring({ keys: [k] }, 'pw', FAST)) as Record<string, string | number>;
    expect(env).toMatchObject({ v: 1, kdf: 'scrypt', log_n: 10, r: 8, p: 1 });
    const kek = scryptSync('pw', Buffer.from(env.salt as string, 'base64'), 32, { N: 2 ** 10, r: 8, p: 1 });
    const plain = nacl.secretbox.open(Buffer.from(env.box as string, 'base64'), Buffer.from(env.nonce as string, 'base64'), new Uint8Array(kek));
    expect(plain && Buffer.from(plain).equals(Buffer.from(k))).toBe(true);
  });

  it('defaults to scrypt N=2^17, r=8, p=1', async () => {
    const env = JSON.parse(await sealKeyring({ keys: [newMasterKey()] }, 'pw')) as Record<string, number>;
    expect([env.log_n, env.r, env.p]).toEqual([17, 8, 1]);
  });

  it('a wrong password fails loudly', async () => {
    const env = await sealKeyring({ keys: [newMasterKey()] }, 'right', FAST);
    await expect(openKeyring(env, 'wrong')).rejects.toThrow(/wrong password/);
  });

  it('an altered box, a swapped nonce or a foreign text fails', async () => {
    const env = JSON.parse(await sealKeyring({ keys: [newMasterKey()] }, 'pw', FAST)) as Record<string, string>;
    const box = Buffer.from(env.box!, 'base64');
    box[3] ^= 1;
    await expect(openKeyring(JSON.stringify({ ...env, box: box.toString('base64') }), 'pw')).rejects.toThrow(EnvelopeError);
    const other = JSON.parse(await sealKeyring({ keys: [newMasterKey()] }, 'pw', FAST)) as Record<string, string>;
    await expect(openKeyring(JSON.stringify({ ...env, nonce: other.nonce }), 'pw')).rejects.toThrow(EnvelopeError);
    await expect(openKeyring('not json', 'pw')).rejects.toThrow(/not an mkt envelope/);
  });

  it('refuses scrypt parameters that would exhaust memory (a hostile server)', async () => {
    const env = JSON.parse(await sealKeyring({ keys: [newMasterKey()] }, 'pw', FAST)) as Record<string, unknown>;
    await expect(openKeyring(JSON.stringify({ ...env, log_n: 30 }), 'pw')).rejects.toThrow(/too large/);
  });

  it('rotation puts the new key first and keeps older keys for old blobs', async () => {
    const k1 = newMasterKey();
    const k2 = newMasterKey();
    const ring = rotatedKeyring({ keys: [k1] }, k2);
    expect(ring.keys.map(keyFingerprint)).toEqual([keyFingerprint(k2), keyFingerprint(k1)]);
    expect(rotatedKeyring(ring, k2).keys).toHaveLength(2);
    const opened = await openKeyring(await sealKeyring(ring, 'pw', FAST), 'pw');
    expect(opened.keys.map(keyFingerprint)).toEqual(ring.keys.map(keyFingerprint));
    expect(decodeKeyring(encodeKeyring(ring)).keys.map(keyFingerprint)).toEqual(ring.keys.map(keyFingerprint));
  });
});
