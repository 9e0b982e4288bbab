// Verifies a marketplace license token (a compact JWS, EdDSA over Ed25519, carrying JWT claims)
// against one pinned key, synchronously with node:crypto. `mkt license check` runs at every start
// of the app that embeds it: jose's WebCrypto path cost that start ~12 ms of CPU (WebCrypto's
// modules, an async key import, the thread pool), a third of a bare Node start. The rules are
// jose's jwtVerify rules, step for step and in its order, only stricter where noted.
import { isUtf8 } from 'node:buffer';
import { verify, type KeyObject } from 'node:crypto';

/** The one signature algorithm accepted: the marketplace signs with Ed25519 only. */
export const TOKEN_ALG = 'EdDSA';

/** What the claims must satisfy; nothing here comes from the token or its cache file. */
export interface TokenRules {
  /** The header `typ` (compared as jose does: case-insensitive, `application/` optional). */
  typ: string;
  issuer: string;
  /** Claims that must be present (own properties of the claims set). */
  requiredClaims: readonly string[];
  /** An `iat` older than this is expired whatever `exp` says. */
  maxTokenAgeSeconds: number;
  /** Skew forgiven between the signer's clock and ours, for exp, nbf and iat. */
  clockToleranceSeconds: number;
  nowMs: number;
}

/** Why a token was refused; `claim` failures name the claim and how it failed (jose's reasons). */
export type TokenFailure =
  | { kind: 'malformed'; detail: string }
  | { kind: 'alg-not-allowed' }
  | { kind: 'bad-signature' }
  | { kind: 'claim'; claim: string; reason: 'missing' | 'invalid' | 'check_failed'; expired: boolean };

export type TokenVerdict = { ok: true; claims: Record<string, unknown> } | { ok: false; failure: TokenFailure };

/** The protected header, read before any trust: only to choose the pinned key its `kid` names. */
export function tokenHeader(token: string): Record<string, unknown> | undefined {
  return decodeJson(token.split('.', 1)[0]!);
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Strict base64url: its alphabet only, no padding, no impossible length (Buffer skips bad characters). */
function decodeBase64url(text: string): Buffer | undefined {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return undefined;
  return Buffer.from(text, 'base64url');
}

/** A base64url JSON object (not an array, not null), or undefined; invalid UTF-8 is refused. */
function decodeJson(segment: string): Record<string, unknown> | undefined {
  const bytes = decodeBase64url(segment);
  if (!bytes) return undefined;
  // isUtf8, not a fatal TextDecoder: that one sets up an ICU converter first (~0.3 ms more).
  if (!isUtf8(bytes)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return value as Record<string, unknown>;
}

function normalizeTyp(typ: string): string {
  const lower = typ.toLowerCase();
  return typ.includes('/') ? lower : `application/${lower}`;
}

const malformed = (detail: string): TokenVerdict => ({ ok: false, failure: { kind: 'malformed', detail } });
const claimFailed = (claim: string, reason: 'missing' | 'invalid' | 'check_failed', expired = false): TokenVerdict => ({
  ok: false,
  failure: { kind: 'claim', claim, reason, expired },
});

/**
 * Verifies `token` with `key`: the structure and header first, then the signature, and only a
 * signed claims set is read. A `bad-signature` verdict is the only one another key may overturn.
 */
export function verifyLicenseToken(token: string, key: KeyObject, rules: TokenRules): TokenVerdict {
  const parts = token.split('.');
  if (parts.length !== 3) return malformed('not a compact JWS');
  const [headerB64, payloadB64, signatureB64] = parts as [string, string, string];
  const header = decodeJson(headerB64);
  if (!header) return malformed('the protected header is not a base64url JSON object');
  // Stricter than jose, which understands `b64`: our tokens use no extension, so any is refused.
  if (header.crit !== undefined) return malformed('the header names critical extensions');
  if (typeof header.alg !== 'string' || header.alg === '') return malformed('the header has no alg');
  if (header.alg !== TOKEN_ALG) return { ok: false, failure: { kind: 'alg-not-allowed' } };

  const signature = decodeBase64url(signatureB64);
  if (!signature || !BASE64URL.test(payloadB64)) return malformed('a segment is not base64url');
  if (key.type !== 'public' || key.asymmetricKeyType !== 'ed25519') return { ok: false, failure: { kind: 'bad-signature' } };
  let signed = false;
  try {
    signed = verify(null, Buffer.from(`${headerB64}.${payloadB64}`, 'ascii'), key, signature);
  } catch {
    signed = false;
  }
  if (!signed) return { ok: false, failure: { kind: 'bad-signature' } };

  const claims = decodeJson(payloadB64);
  if (!claims) return malformed('the claims set is not a JSON object');
  if (typeof header.typ !== 'string' || normalizeTyp(header.typ) !== normalizeTyp(rules.typ)) return claimFailed('typ', 'check_failed');
  // jose's order: issuer, iat (for the age limit), then the required claims from the last.
  for (const claim of new Set(['iss', 'iat', ...[...rules.requiredClaims].reverse()])) {
    if (!Object.hasOwn(claims, claim)) return claimFailed(claim, 'missing');
  }
  if (claims.iss !== rules.issuer) return claimFailed('iss', 'check_failed');

  const now = Math.floor(rules.nowMs / 1000);
  const tolerance = rules.clockToleranceSeconds;
  // Stricter than jose: a time claim must be finite (JSON's 1e999 parses to Infinity).
  const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  const { iat, nbf, exp } = claims;
  if (!isTime(iat)) return claimFailed('iat', 'invalid');
  if (nbf !== undefined) {
    if (!isTime(nbf)) return claimFailed('nbf', 'invalid');
    if (nbf > now + tolerance) return claimFailed('nbf', 'check_failed');
  }
  if (exp !== undefined) {
    if (!isTime(exp)) return claimFailed('exp', 'invalid');
    if (exp <= now - tolerance) return claimFailed('exp', 'check_failed', true);
  }
  const age = now - iat;
  if (age - tolerance > rules.maxTokenAgeSeconds) return claimFailed('iat', 'check_failed', true);
  if (age < -tolerance) return claimFailed('iat', 'check_failed');
  return { ok: true, claims };
}
