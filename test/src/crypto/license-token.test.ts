// The offline license-token verifier (src/crypto/license-token.ts) against jose, whose jwtVerify
// it replaced in `mkt license check`: the same verdict for every token a property run draws
// (alg, typ, each claim present or not, times around every boundary, the right key or another,
// a tampered payload), and by example the refusals a forger tries: another key, a changed
// payload, alg none or HS256, critical extensions, broken encodings.
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { errors, jwtVerify, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { tokenHeader, verifyLicenseToken, type TokenFailure, type TokenRules, type TokenVerdict } from '../../../src/crypto/license-token.js';

const ISSUER = 'mkt-marketplace';
const CLAIMS = ['iss', 'sub', 'license', 'item', 'fph', 'iat', 'exp'];
const MAX_AGE = 7 * 86400;
const TOLERANCE = 60;
const NOW_MS = Date.UTC(2026, 10, 24, 12, 0, 0, 500);
const NOW = Math.floor(NOW_MS / 1000);
const rules: TokenRules = { typ: 'JWT', issuer: ISSUER, requiredClaims: CLAIMS, maxTokenAgeSeconds: MAX_AGE, clockToleranceSeconds: TOLERANCE, nowMs: NOW_MS };

const signer = generateKeyPairSync('ed25519');
const stranger = generateKeyPairSync('ed25519');
const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** A compact JWS over any header and claims (jose's SignJWT refuses the odd ones a forger makes). */
function compact(header: Record<string, unknown>, claims: unknown, key: KeyObject = signer.privateKey): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString('base64url')}`;
}

function validClaims(): Record<string, unknown> {
  return { iss: ISSUER, sub: 'lic-1', license: 'lic-1', item: 'font-pro', fph: 'abc', iat: NOW - 3600, exp: NOW + 6 * 86400 };
}

/** jose's verdict on the same token, in the verifier's terms. */
async function joseVerdict(token: string, key: KeyObject): Promise<TokenVerdict> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['EdDSA'],
      typ: 'JWT',
      issuer: ISSUER,
      requiredClaims: CLAIMS,
      maxTokenAge: MAX_AGE,
      clockTolerance: TOLERANCE,
      currentDate: new Date(NOW_MS),
    });
    return { ok: true, claims: payload as Record<string, unknown> };
  } catch (err) {
    let failure: TokenFailure;
    if (err instanceof errors.JWSSignatureVerificationFailed) failure = { kind: 'bad-signature' };
    else if (err instanceof errors.JOSEAlgNotAllowed) failure = { kind: 'alg-not-allowed' };
    else if (err instanceof errors.JWTExpired) failure = { kind: 'claim', claim: err.claim, reason: err.reason as 'check_failed', expired: true };
    else if (err instanceof errors.JWTClaimValidationFailed) failure = { kind: 'claim', claim: err.claim, reason: err.reason as 'check_failed', expired: false };
    else if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) failure = { kind: 'malformed', detail: '' };
    else throw err;
    return { ok: false, failure };
  }
}

/** The verdict without the free-text detail of a malformed token, which only we give. */
function shape(v: TokenVerdict): unknown {
  if (v.ok) return v;
  return v.failure.kind === 'malformed' ? { ok: false, failure: { kind: 'malformed' } } : v;
}

describe('license token verifier: the same verdict as jose jwtVerify', () => {
  // Times around every boundary: the clock tolerance, the 7-day age limit, now itself.
  const offset = fc.constantFrom(0, 1, -1, 59, 60, 61, -59, -60, -61, 3600, -3600, MAX_AGE, MAX_AGE + 60, MAX_AGE + 61, -MAX_AGE + 3600, -MAX_AGE - 60, -MAX_AGE - 61, 30 * 86400);
  const time = fc.oneof({ weight: 8, arbitrary: offset.map((o) => NOW + o) }, { weight: 1, arbitrary: fc.constantFrom('soon', null, true) });
  // Mostly a license token's claims, each drawn around its boundaries, sometimes one dropped.
  const claimsArb = fc
    .record({
      iss: fc.constantFrom<unknown>(ISSUER, ISSUER, ISSUER, 'evil', 5),
      iat: time,
      exp: time,
      nbf: fc.option(time, { freq: 2 }),
      drop: fc.option(fc.constantFrom(...CLAIMS), { freq: 4 }),
    })
    .map(({ iss, iat, exp, nbf, drop }) => {
      const claims: Record<string, unknown> = { ...validClaims(), iss, iat, exp };
      if (nbf !== null) claims.nbf = nbf;
      if (drop !== null) delete claims[drop];
      return claims;
    });
  const headerArb = fc.record(
    {
      alg: fc.constantFrom<unknown>('EdDSA', 'EdDSA', 'EdDSA', 'EdDSA', 'EdDSA', 'EdDSA', 'none', 'HS256', 'ES256', '', 7),
      typ: fc.constantFrom<unknown>('JWT', 'JWT', 'JWT', 'JWT', 'jwt', 'application/jwt', 'application/JWT', 'at+jwt', 'JOSE', 5),
      kid: fc.constantFrom('k1'),
    },
    { requiredKeys: ['kid'] },
  );
  const payloadArb = fc.oneof({ weight: 12, arbitrary: claimsArb }, { weight: 1, arbitrary: fc.constantFrom<unknown>([], 'text', 42, null) });
  const signing = fc.constantFrom('right key', 'right key', 'right key', 'another key', 'tampered payload');

  it('for every drawn token', async () => {
    await fc.assert(
      fc.asyncProperty(headerArb, payloadArb, signing, async (header, payload, how) => {
        let token = compact(header, payload, how === 'another key' ? stranger.privateKey : signer.privateKey);
        if (how === 'tampered payload') {
          const [h, , s] = token.split('.');
          token = `${h}.${b64({ ...validClaims(), item: 'font-max' })}.${s}`;
        }
        const ours = verifyLicenseToken(token, signer.publicKey, rules);
        expect(shape(ours)).toEqual(shape(await joseVerdict(token, signer.publicKey)));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('license token verifier: what a forger tries', () => {
  const verify = (token: string): TokenVerdict => verifyLicenseToken(token, signer.publicKey, rules);

  it('a token jose signs for the real key is valid, and its claims come back', async () => {
    const token = await new SignJWT(validClaims()).setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: 'k1' }).sign(signer.privateKey);
    expect(verify(token)).toEqual({ ok: true, claims: validClaims() });
    expect(tokenHeader(token)).toEqual({ alg: 'EdDSA', typ: 'JWT', kid: 'k1' });
  });

  it('a token signed with another key, or with its payload changed after signing, is a bad signature', () => {
    expect(verify(compact({ alg: 'EdDSA', typ: 'JWT' }, validClaims(), stranger.privateKey))).toEqual({ ok: false, failure: { kind: 'bad-signature' } });
    const [h, , s] = compact({ alg: 'EdDSA', typ: 'JWT' }, validClaims()).split('.');
    expect(verify(`${h}.${b64({ ...validClaims(), exp: NOW + 365 * 86400 })}.${s}`)).toEqual({ ok: false, failure: { kind: 'bad-signature' } });
    // A changed header is signed too.
    const [, p, s2] = compact({ alg: 'EdDSA', typ: 'JWT' }, validClaims()).split('.');
    expect(verify(`${b64({ alg: 'EdDSA', typ: 'JWT', kid: 'other' })}.${p}.${s2}`)).toEqual({ ok: false, failure: { kind: 'bad-signature' } });
  });

  it('alg none (no signature) and HS256 (the public key as an HMAC secret) are refused before any signature check', () => {
    const claims = b64(validClaims());
    expect(verify(`${b64({ alg: 'none', typ: 'JWT' })}.${claims}.`)).toEqual({ ok: false, failure: { kind: 'alg-not-allowed' } });
    const hsInput = `${b64({ alg: 'HS256', typ: 'JWT' })}.${claims}`;
    const secret = signer.publicKey.export({ format: 'jwk' }).x!;
    const hs = `${hsInput}.${createHmac('sha256', secret).update(hsInput).digest('base64url')}`;
    expect(verify(hs)).toEqual({ ok: false, failure: { kind: 'alg-not-allowed' } });
    expect(verify(compact({ typ: 'JWT' }, validClaims())).ok).toBe(false);
  });

  it('a key that is not an Ed25519 public key verifies nothing', () => {
    const token = compact({ alg: 'EdDSA', typ: 'JWT' }, validClaims());
    expect(verifyLicenseToken(token, signer.privateKey, rules)).toEqual({ ok: false, failure: { kind: 'bad-signature' } });
    expect(verifyLicenseToken(token, generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey, rules)).toEqual({ ok: false, failure: { kind: 'bad-signature' } });
  });

  it('stricter than jose: critical extensions, non-base64url characters, invalid UTF-8 and infinite times are malformed', () => {
    const kind = (v: TokenVerdict): string => (v.ok ? 'ok' : v.failure.kind);
    expect(kind(verify(compact({ alg: 'EdDSA', typ: 'JWT', crit: ['b64'], b64: true }, validClaims())))).toBe('malformed');
    const good = compact({ alg: 'EdDSA', typ: 'JWT' }, validClaims());
    const [h, p, s] = good.split('.') as [string, string, string];
    // Buffer would skip the stray characters and decode the rest as if they were not there.
    expect(kind(verify(`${h}.${p}.${s.slice(0, 10)}!${s.slice(10)}`))).toBe('malformed');
    expect(kind(verify(`${h}.${p}.${s}=`))).toBe('malformed');
    expect(kind(verify(`${h}.${p}.${s}.`))).toBe('malformed');
    expect(kind(verify(`${h}.${p}`))).toBe('malformed');
    const badUtf8 = Buffer.concat([Buffer.from('{"alg":"EdDSA","typ":"JWT","x":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]).toString('base64url');
    expect(tokenHeader(`${badUtf8}.${p}.${s}`)).toBeUndefined();
    const inf = verify(compact({ alg: 'EdDSA', typ: 'JWT' }, `{"iss":"${ISSUER}","sub":"l","license":"l","item":"i","fph":"f","iat":${NOW},"exp":1e999}`));
    expect(inf).toEqual({ ok: false, failure: { kind: 'claim', claim: 'exp', reason: 'invalid', expired: false } });
  });

  it('expiry: exp passed beyond the tolerance, or iat older than 7 days, is expired; the tolerance itself is forgiven', () => {
    const at = (claims: Record<string, unknown>): TokenVerdict => verify(compact({ alg: 'EdDSA', typ: 'JWT' }, { ...validClaims(), ...claims }));
    expect(at({ exp: NOW - 61 })).toEqual({ ok: false, failure: { kind: 'claim', claim: 'exp', reason: 'check_failed', expired: true } });
    expect(at({ exp: NOW - 60 })).toEqual({ ok: false, failure: { kind: 'claim', claim: 'exp', reason: 'check_failed', expired: true } });
    expect(at({ exp: NOW - 59 }).ok).toBe(true);
    expect(at({ iat: NOW - MAX_AGE - 61 })).toEqual({ ok: false, failure: { kind: 'claim', claim: 'iat', reason: 'check_failed', expired: true } });
    expect(at({ iat: NOW - MAX_AGE - 60 }).ok).toBe(true);
    expect(at({ iat: NOW + 61 })).toEqual({ ok: false, failure: { kind: 'claim', claim: 'iat', reason: 'check_failed', expired: false } });
    expect(at({ nbf: NOW + 61 })).toEqual({ ok: false, failure: { kind: 'claim', claim: 'nbf', reason: 'check_failed', expired: false } });
  });
});
