// Pre-signed object URLs (ARCHITECTURE "Storage": HMAC-signed, expiring, exact Content-Length,
// optional SHA-256 checksum): every bound field changes the signature; expiry and method hold.
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { signGrant, verifyGrant, type UrlGrant } from '../../../src/crypto/hmac-url.js';

const secret = randomBytes(32);
const grant: UrlGrant = { method: 'PUT', key: 'app/user/abc', expires: 1000, length: 42, checksum: 'x'.repeat(43) + '=' };
const query = (qs: string) => Object.fromEntries(new URLSearchParams(qs));

describe('HMAC pre-signed URL grants', () => {
  it('verifies its own grant until it expires', () => {
    const q = query(signGrant(secret, grant));
    expect(verifyGrant(secret, 'PUT', grant.key, q, 999)).toEqual({ ok: true, grant });
    expect(verifyGrant(secret, 'PUT', grant.key, q, 1000).ok).toBe(true);
    expect(verifyGrant(secret, 'PUT', grant.key, q, 1001)).toEqual({ ok: false, status: 403, reason: 'the signed URL has expired' });
  });

  it('refuses another key, method, length, checksum, expiry or secret', () => {
    const q = query(signGrant(secret, grant));
    expect(verifyGrant(secret, 'PUT', 'app/user/abd', q, 0).ok).toBe(false);
    expect(verifyGrant(secret, 'GET', grant.key, q, 0).ok).toBe(false);
    for (const [k, v] of [['X-Mkt-Length', '41'], ['X-Mkt-Checksum', 'y'.repeat(43) + '='], ['X-Mkt-Expires', '99999'], ['X-Mkt-Signature', '00'.repeat(32)]]) {
      expect(verifyGrant(secret, 'PUT', grant.key, { ...q, [k!]: v }, 0)).toMatchObject({ ok: false, status: 403 });
    }
    const { 'X-Mkt-Checksum': _dropped, ...withoutChecksum } = q;
    expect(verifyGrant(secret, 'PUT', grant.key, withoutChecksum, 0).ok).toBe(false);
    expect(verifyGrant(randomBytes(32), 'PUT', grant.key, q, 0).ok).toBe(false);
    expect(verifyGrant(secret, 'PUT', grant.key, {}, 0)).toEqual({ ok: false, status: 403, reason: 'missing or malformed signature' });
  });

  it('a GET grant carries no length or checksum', () => {
    const qs = signGrant(secret, { method: 'GET', key: 'a/b', expires: 5 });
    expect(qs).not.toMatch(/Length|Checksum/);
    expect(verifyGrant(secret, 'GET', 'a/b', query(qs), 5).ok).toBe(true);
  });
});
