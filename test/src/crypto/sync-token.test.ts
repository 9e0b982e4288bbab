// Sync access tokens (docs/sync-server.md "Sign-in and tokens"): HS256 JWTs with sub and app,
// refused when expired, re-signed with another key, altered, or switched to another algorithm;
// and the same refusals from a SyncTokenVerifier that already accepted the genuine token.
import { describe, expect, it } from 'vitest';
import { createHmac, randomBytes } from 'node:crypto';
import { signSyncToken, SyncTokenVerifier, verifySyncToken } from '../../../src/crypto/sync-token.js';

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

describe('SyncTokenVerifier', () => {
  /** A verifier that has accepted `token` once, so the next call of the same signed part takes the remembered path. */
  function warm(token: string, at = T0): SyncTokenVerifier {
    const v = new SyncTokenVerifier(key);
    expect(v.verify(token, at)).toBeDefined();
    expect(v.size).toBe(1);
    return v;
  }

  it('answers a known token from memory with the same claims, until exp (exclusive), then forgets it', () => {
    const { token, claims } = signSyncToken(key, { userId: 'u1', appId: 'a1', nowMs: T0, lifetimeSeconds: 3600 });
    const v = warm(token);
    expect(v.verify(token, T0)).toEqual(claims);
    expect(v.verify(token, T0 + 3599_999)).toEqual(claims);
    expect(v.verify(token, T0 + 3600_000)).toBeUndefined();
    expect(v.size).toBe(0);
    // Once forgotten it is verified from scratch, and still refused.
    expect(v.verify(token, T0 + 3600_000)).toBeUndefined();
  });

  it('refuses the claims of a remembered token under any other signature: altered, padded, re-encoded, look-alike, extended', () => {
    const { token } = signSyncToken(key, { userId: 'u1', appId: 'a1', nowMs: T0, lifetimeSeconds: 3600 });
    const [h, p, sig] = token.split('.') as [string, string, string];
    const v = warm(token);
    for (let i = 0; i < sig.length; i++) {
      const c = sig[i] === 'A' ? 'B' : 'A';
      expect(v.verify(`${h}.${p}.${sig.slice(0, i)}${c}${sig.slice(i + 1)}`, T0)).toBeUndefined();
    }
    expect(v.verify(`${h}.${p}.${Buffer.from(sig, 'base64url').toString('base64')}`, T0)).toBeUndefined();
    expect(v.verify(`${h}.${p}.${sig}=`, T0)).toBeUndefined();
    expect(v.verify(`${h}.${p}.${[...sig].map((c) => String.fromCharCode(c.charCodeAt(0) + 0x100)).join('')}`, T0)).toBeUndefined();
    expect(v.verify(`${h}.${p}.`, T0)).toBeUndefined();
    expect(v.verify(`${h}.${p}`, T0)).toBeUndefined();
    expect(v.verify(`${token}.${sig}`, T0)).toBeUndefined();
    expect(v.verify(`x${token}`, T0)).toBeUndefined();
    // The genuine one is still accepted, and no refused token was remembered.
    expect(v.verify(token, T0)).toMatchObject({ sub: 'u1' });
    expect(v.size).toBe(1);
  });

  it('keeps only accepted tokens, at most `max`, the oldest going first', () => {
    const v = new SyncTokenVerifier(key, 2);
    const tokens = ['u1', 'u2', 'u3'].map((userId) => signSyncToken(key, { userId, appId: 'a1', nowMs: T0, lifetimeSeconds: 60 }).token);
    for (let i = 0; i < 50; i++) expect(v.verify(`${tokens[0]!.slice(0, -2)}${i}`, T0)).toBeUndefined();
    expect(v.size).toBe(0);
    for (const t of tokens) expect(v.verify(t, T0)).toBeDefined();
    expect(v.size).toBe(2);
    // The first, pushed out, is verified again and still accepted.
    expect(v.verify(tokens[0]!, T0)).toMatchObject({ sub: 'u1' });
    // A verifier with another key accepts none of them.
    expect(new SyncTokenVerifier(randomBytes(32)).verify(tokens[1]!, T0)).toBeUndefined();
  });
});
