// The license key format (issue 5 "Keys"): readable groups, a check part that rejects typos
// before any lookup, forgiving input, and a keyed hash (its secret in the data dir or an operator's
// file); and the signing keys in the database on both engines: tokens, rotation, the keyring file
// of earlier versions imported.
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { generateLicenseKey, hashLicenseKey, KEY_SECRET_FILE_ENV, loadKeyHashSecret, parseLicenseKey } from '../../../src/crypto/license-key.js';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { SigningKeyring, rotateSigningKey, KEYRING_FILE, IMPORTED_SUFFIX } from '../../../src/crypto/signing.js';
import { SqlLicenseStore } from '../../../src/store/license-sql.js';
import { describeEngines } from '../../helpers/engines.js';
import { tempDir } from '../../helpers/tmp.js';

describe('license key format', () => {
  it('keys look like MKT-XXXXX-XXXXX-XXXXX-XXXXX-CCCCC and parse back to themselves', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const k = generateLicenseKey();
      expect(k).toMatch(/^MKT(-[0-9A-HJKMNP-TV-Z]{5}){5}$/);
      expect(parseLicenseKey(k)).toEqual({ key: k, prefix: k.slice(4, 9) });
      seen.add(k);
    }
    expect(seen.size).toBe(200);
  });

  it('the check part rejects every single-character typo and every swap of neighbours', () => {
    const k = generateLicenseKey();
    const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    let rejected = 0;
    let tried = 0;
    for (let i = 4; i < k.length; i++) {
      if (k[i] === '-') continue;
      for (const c of alphabet) {
        if (c === k[i]) continue;
        tried++;
        if (parseLicenseKey(k.slice(0, i) + c + k.slice(i + 1)) === undefined) rejected++;
      }
    }
    expect(rejected / tried).toBeGreaterThan(0.999);
    const swapped = k.slice(0, 4) + k[5] + k[4] + k.slice(6);
    if (swapped !== k) expect(parseLicenseKey(swapped)).toBeUndefined();
  });

  it('input is forgiving: case, spaces, missing dashes and O/I/L look-alikes', () => {
    const k = generateLicenseKey();
    const messy = ` ${k.toLowerCase().replace(/-/g, ' ')} `.replace(/0/g, 'o').replace(/1/g, 'l');
    expect(parseLicenseKey(messy)?.key).toBe(k);
    expect(parseLicenseKey(k.slice(4))?.key).toBe(k);
    expect(parseLicenseKey('')).toBeUndefined();
    expect(parseLicenseKey('MKT-' + 'U'.repeat(25))).toBeUndefined();
  });

  it('the keyed hash depends on the secret; the secret file is created once, 0600', () => {
    const dir = tempDir();
    try {
      const a = loadKeyHashSecret(dir.path);
      expect(loadKeyHashSecret(dir.path).equals(a)).toBe(true);
      expect(statSync(join(dir.path, 'license-key-secret')).mode & 0o777).toBe(0o600);
      const k = generateLicenseKey();
      expect(hashLicenseKey(a, k)).toMatch(/^[0-9a-f]{64}$/);
      expect(hashLicenseKey(Buffer.alloc(32), k)).not.toBe(hashLicenseKey(a, k));
    } finally {
      dir.remove();
    }
  });
});

describe('the key-hash secret from an operator-provisioned file', () => {
  it('$MKT_LICENSE_KEY_SECRET_FILE is used instead of the data dir (raw, base64 or base64url); a missing, short or group-readable one is an error', () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'credential');
      const secret = randomBytes(32);
      writeFileSync(file, secret.toString('base64') + '\n', { mode: 0o600 });
      const env = { [KEY_SECRET_FILE_ENV]: file };
      expect(loadKeyHashSecret(join(dir.path, 'data'), env).equals(secret)).toBe(true);
      expect(existsSync(join(dir.path, 'data', 'license-key-secret'))).toBe(false);
      writeFileSync(file, secret.toString('base64url'));
      expect(loadKeyHashSecret(dir.path, env).equals(secret)).toBe(true);
      writeFileSync(file, secret);
      expect(loadKeyHashSecret(dir.path, env).equals(secret)).toBe(true);
      writeFileSync(file, 'c2hvcnQ=');
      expect(() => loadKeyHashSecret(dir.path, env)).toThrow(/32-byte secret/);
      writeFileSync(file, secret.toString('base64'));
      chmodSync(file, 0o644);
      expect(() => loadKeyHashSecret(dir.path, env)).toThrow(/open to group or others/);
      expect(() => loadKeyHashSecret(dir.path, { [KEY_SECRET_FILE_ENV]: join(dir.path, 'missing') })).toThrow(/ENOENT/);
    } finally {
      dir.remove();
    }
  });
});

const rings: SigningKeyring[] = [];
afterEach(() => {
  for (const r of rings.splice(0)) r.close();
});

describeEngines('signing keys in the database', (open) => {
  const week = 7 * 24 * 3600 * 1000;

  it('tokens verify with jose; alg none, an unknown kid, tampering and expiry do not; keeps retired keys for their lifetime', async () => {
    const store = await SqlLicenseStore.open(await open());
    let now = Date.parse('2026-03-01T00:00:00Z');
    const ring = await SigningKeyring.open({ store, now: () => now, keepMs: week });
    rings.push(ring);
    const token = await ring.signJwt({ iss: 't', exp: now / 1000 + 60 });
    const jwks = ring.publicJwks();
    expect(jwks.keys).toHaveLength(1);
    const check = (t: string, keys: typeof jwks, at: number) => jwtVerify(t, createLocalJWKSet(keys as JSONWebKeySet), { algorithms: ['EdDSA'], currentDate: new Date(at) });
    await expect(check(token, jwks, now)).resolves.toMatchObject({ payload: { iss: 't' } });
    await expect(check(token, jwks, now + 61_000)).rejects.toMatchObject({ code: 'ERR_JWT_EXPIRED' });
    await expect(check(token, { keys: [] }, now)).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    const [, p] = token.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', kid: jwks.keys[0]!.kid })).toString('base64url')}.${p}.`;
    await expect(check(none, jwks, now)).rejects.toThrow();
    const flipped = token.slice(0, -2) + (token.at(-2) === 'A' ? 'B' : 'A') + token.at(-1);
    await expect(check(flipped, jwks, now)).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });

    const first = jwks.keys[0]!.kid;
    const r = await rotateSigningKey(store, now + 1000, week);
    expect(r.retired).toEqual([first]);
    await ring.refresh();
    expect(ring.currentKid()).toBe(r.kid);
    expect(ring.publicJwks().keys.map((k) => k.kid)).toEqual([first, r.kid]);
    await expect(check(token, ring.publicJwks(), now)).resolves.toBeTruthy();
    // The retired key leaves the JWKS one token lifetime after its retirement…
    now += week + 1000;
    expect(ring.publicJwks().keys.map((k) => k.kid)).toEqual([r.kid]);
    // …and the database at the next rotation; its private half was dropped at retirement.
    await rotateSigningKey(store, now + 1000, week);
    const rows = await store.signingKeys();
    expect(rows.map((k) => k.kid)).not.toContain(first);
    expect(rows.filter((k) => k.private_key !== null)).toHaveLength(1);
  });

  it('two keyrings on one store agree; opening again keeps the current key', async () => {
    const store = await SqlLicenseStore.open(await open());
    const a = await SigningKeyring.open({ store, now: Date.now, keepMs: week });
    const b = await SigningKeyring.open({ store, now: Date.now, keepMs: week });
    rings.push(a, b);
    expect(b.currentKid()).toBe(a.currentKid());
    expect(await store.signingKeys()).toHaveLength(1);
  });

  it("an earlier version's keyring file is imported on first open (then renamed .imported): its keys are published and its current key keeps signing", async () => {
    const dir = tempDir();
    try {
      // The file as earlier versions wrote it: one retired key, one current.
      const { generateKeyPairSync } = await import('node:crypto');
      const make = (kid: string, retired: string | null) => {
        const { privateKey, publicKey } = generateKeyPairSync('ed25519');
        const x = (publicKey.export({ format: 'jwk' }) as { x: string }).x;
        return { kid, created_at: '2026-02-01T00:00:00.000Z', retired_at: retired, private_key: retired ? null : privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url'), public_jwk: { kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig' } };
      };
      const old = make('20260201-aaaaaaaa', '2026-02-27T00:00:00.000Z');
      const cur = make('20260227-bbbbbbbb', null);
      const file = join(dir.path, KEYRING_FILE);
      writeFileSync(file, JSON.stringify({ keys: [old, cur] }), { mode: 0o600 });
      const store = await SqlLicenseStore.open(await open());
      const ring = await SigningKeyring.open({ store, now: () => Date.parse('2026-03-01T00:00:00Z'), keepMs: week, dataDir: dir.path });
      rings.push(ring);
      expect(ring.currentKid()).toBe(cur.kid);
      expect(ring.publicJwks().keys.map((k) => k.kid)).toEqual([old.kid, cur.kid]);
      expect(existsSync(file)).toBe(false);
      expect(statSync(file + IMPORTED_SUFFIX).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(file + IMPORTED_SUFFIX, 'utf8')).keys).toHaveLength(2);
      // A second open (another instance) finds the keys in the database and imports nothing.
      writeFileSync(file, JSON.stringify({ keys: [make('20260301-cccccccc', null)] }), { mode: 0o600 });
      chmodSync(file, 0o600);
      const again = await SigningKeyring.open({ store, now: Date.now, keepMs: week, dataDir: dir.path });
      rings.push(again);
      expect(again.currentKid()).toBe(cur.kid);
      expect(existsSync(file)).toBe(true);
    } finally {
      dir.remove();
    }
  });
});
