// Sync access tokens (docs/sync-server.md "Sign-in and tokens"): HS256 JWTs with sub and app,
// refused when expired, re-signed with another key, altered, or switched to another algorithm.
import { describe, expect, it } from 'vitest';
import { createHmac, randomBytes } from 'node:crypto';
import { signSyncToken, verifySyncToken } from '../../../src/crypto/sync-token.js';

const key = randomBytes(32);
const T0 = Date.parse('2026-03-01T12:00:00Z');
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe('sync tokens', () => {
  it('carry user and app id with a lifetime, and verify until exp (exclusive)', () => {
    const { token, claims } = signSyncToken(key, { userId: 'u1', appId: 'a1', nowMs: T0, lifetimeSeconds: 3600 });
    expect(claims).toMatchObject({ sub: 'u1', app: 'a1', iss: 'mkt-marketplace', aud: 'mkt-sync', iat: T0 / 1000, exp: T0 / 1000 + 3600 });
    expect(verifySyncToken(key, token, T0)).toEqual(claims);
    expect(verifySyncToken(key, token, T0 + 3599_999)).toEqual(claims);
    expect(verifySyncToken(key, token, T0 + 3600_000)).toBeUndefined();
  });

  it('refuse another key, altered claims, alg none and a re-signed header', () => {
    const { token, claims } = signSyncToken(key, { userId: 'u1', appId: 'a1', nowMs: T0, lifetimeSeconds: 3600 });
    const [h, p, sig] = token.split('.') as [string, string, string];
    expect(verifySyncToken(randomBytes(32), token, T0)).toBeUndefined();
    expect(verifySyncToken(key, `${h}.${b64({ ...claims, app: 'a2' })}.${sig}`, T0)).toBeUndefined();
    expect(verifySyncToken(key, `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`, T0)).toBeUndefined();
    const other = b64({ alg: 'HS512', typ: 'JWT' });
    expect(verifySyncToken(key, `${other}.${p}.${createHmac('sha256', key).update(`${other}.${p}`).digest('base64url')}`, T0)).toBeUndefined();
    expect(verifySyncToken(key, `${h}.${p}`, T0)).toBeUndefined();
    expect(verifySyncToken(key, '', T0)).toBeUndefined();
  });

  it('accept the signature only as it was written: not padded, not re-encoded, no character standing for another', () => {
    const { token } = signSyncToken(key, { userId: 'u1', appId: 'a1', nowMs: T0, lifetimeSeconds: 3600 });
    const [h, p, sig] = token.split('.') as [string, string, string];
    expect(verifySyncToken(key, `${h}.${p}.${sig}`, T0)).toMatchObject({ sub: 'u1' });
    // The same bytes in base64 (with + and /, and padding), as a lenient decoder would take them.
    const std = Buffer.from(sig, 'base64url').toString('base64');
    expect(verifySyncToken(key, `${h}.${p}.${std}`, T0)).toBeUndefined();
    expect(verifySyncToken(key, `${h}.${p}.${sig}=`, T0)).toBeUndefined();
    // Each character swapped for the one past U+00FF whose low byte is the same ASCII code (latin1 would read them alike).
    const lookalike = [...sig].map((c) => String.fromCharCode(c.charCodeAt(0) + 0x100)).join('');
    expect(verifySyncToken(key, `${h}.${p}.${lookalike}`, T0)).toBeUndefined();
    // One character changed anywhere is refused.
    for (let i = 0; i < sig.length; i++) {
      const c = sig[i] === 'A' ? 'B' : 'A';
      expect(verifySyncToken(key, `${h}.${p}.${sig.slice(0, i)}${c}${sig.slice(i + 1)}`, T0)).toBeUndefined();
    }
  });

  it('refuse well-signed tokens of another audience or without a user', () => {
    const sign = (claims: Record<string, unknown>) => {
      const h = b64({ alg: 'HS256', typ: 'JWT' });
      const body = `${h}.${b64(claims)}`;
      return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
    };
    const base = { iss: 'mkt-marketplace', aud: 'mkt-sync', sub: 'u', app: 'a', iat: T0 / 1000, exp: T0 / 1000 + 60, jti: 'j' };
    expect(verifySyncToken(key, sign(base), T0)).toMatchObject({ sub: 'u' });
    expect(verifySyncToken(key, sign({ ...base, aud: 'other' }), T0)).toBeUndefined();
    expect(verifySyncToken(key, sign({ ...base, sub: undefined }), T0)).toBeUndefined();
    expect(verifySyncToken(key, sign({ ...base, exp: undefined }), T0)).toBeUndefined();
  });
});
