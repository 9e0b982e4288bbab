// The license key format (issue 5 "Keys"): readable groups, a check part that rejects typos
// before any lookup, forgiving input, and a keyed hash; and the offline JWT verifier.
import { describe, expect, it } from 'vitest';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { generateLicenseKey, hashLicenseKey, loadKeyHashSecret, parseLicenseKey } from '../../../src/crypto/license-key.js';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { SigningKeyring, rotateSigningKey, KEYRING_FILE } from '../../../src/crypto/signing.js';
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

describe('offline token verification', () => {
  it('its tokens verify with jose; alg none, an unknown kid, tampering and expiry do not; keeps retired keys for their lifetime', async () => {
    const dir = tempDir();
    try {
      const now = Date.parse('2026-03-01T00:00:00Z');
      const week = 7 * 24 * 3600 * 1000;
      const ring = new SigningKeyring(dir.path, () => now, week);
      expect(statSync(join(dir.path, KEYRING_FILE)).mode & 0o777).toBe(0o600);
      const token = ring.signJwt({ iss: 't', exp: now / 1000 + 60 });
      const jwks = ring.publicJwks();
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
      rotateSigningKey(dir.path, now + 1000, week);
      ring.reload();
      expect(ring.publicJwks().keys.map((k) => k.kid)).toContain(first);
      expect(ring.currentKid()).not.toBe(first);
      // A rotation more than a token lifetime later drops the long-retired key.
      rotateSigningKey(dir.path, now + week + 2000, week);
      ring.reload();
      expect(ring.publicJwks().keys.map((k) => k.kid)).not.toContain(first);
    } finally {
      dir.remove();
    }
  });
});
