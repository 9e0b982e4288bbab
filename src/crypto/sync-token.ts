// Sync access tokens: compact HS256 JWTs (RFC 7519) signed with a key derived from the
// marketplace's sync secret, carrying user id (`sub`) and app id (`app`).
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { SyncTokenClaims } from '../schemas/sync.js';
import { dropOldest } from '../util/bounded-map.js';

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
export const SYNC_TOKEN_ISSUER = 'mkt-marketplace';
export const SYNC_TOKEN_AUDIENCE = 'mkt-sync';

export function signSyncToken(key: Buffer, input: { userId: string; appId: string; nowMs: number; lifetimeSeconds: number }): { token: string; claims: SyncTokenClaims } {
  const iat = Math.floor(input.nowMs / 1000);
  const claims: SyncTokenClaims = { iss: SYNC_TOKEN_ISSUER, aud: SYNC_TOKEN_AUDIENCE, sub: input.userId, app: input.appId, iat, exp: iat + input.lifetimeSeconds, jti: randomUUID() };
  const body = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return { token: `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`, claims };
}

/** The claims of a well-signed, unexpired token of this issuer and audience; else undefined. */
export function verifySyncToken(key: Buffer, token: string, nowMs: number): SyncTokenClaims | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== HEADER) return undefined;
  // Compared as base64url text, the form signSyncToken writes: a Buffer digest costs node 20 half
  // as much again (bench/README.md, "One line at the answer, issue 37"). Only that canonical text
  // is accepted, as RFC 7515 writes it (no padding, no other encoding of the same bytes).
  const expected = createHmac('sha256', key).update(`${parts[0]}.${parts[1]}`).digest('base64url');
  // UTF-8, not latin1: a character past U+00FF must not stand in for the ASCII one its low byte names.
  const given = Buffer.from(parts[2]!, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected, 'latin1'))) return undefined;
  let c: Partial<SyncTokenClaims>;
  try {
    c = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as Partial<SyncTokenClaims>;
  } catch {
    return undefined;
  }
  if (c.iss !== SYNC_TOKEN_ISSUER || c.aud !== SYNC_TOKEN_AUDIENCE || typeof c.sub !== 'string' || typeof c.app !== 'string') return undefined;
  if (typeof c.exp !== 'number' || c.exp * 1000 <= nowMs) return undefined;
  return c as SyncTokenClaims;
}

/** Tokens a SyncTokenVerifier keeps by default: the active sessions of a busy instance fit. */
export const VERIFIED_TOKENS_KEPT = 10_000;

/**
 * verifySyncToken with the tokens it accepted remembered by their signed part (header and
 * claims): a bearer request of a known token skips the HMAC and the claims' parse, ~11 µs of a
 * sync_pull's own work under perf (bench/README.md, "Verified tokens remembered"). The given
 * signature is still compared in constant time, with the one remembered, and the expiry is read
 * against the clock at every use. Only accepted tokens are kept, so a caller cannot fill it with
 * guesses; the oldest go first once `max` are kept.
 */
export class SyncTokenVerifier {
  private readonly known = new Map<string, { signature: Buffer; claims: SyncTokenClaims }>();

  constructor(
    private readonly key: Buffer,
    private readonly max = VERIFIED_TOKENS_KEPT,
  ) {}

  verify(token: string, nowMs: number): SyncTokenClaims | undefined {
    // The signed part of an accepted token holds exactly one dot and the signature none, so a hit
    // means `token` has the three parts verifySyncToken requires, the header among them.
    const dot = token.lastIndexOf('.');
    const signed = token.slice(0, dot);
    const hit = dot > 0 ? this.known.get(signed) : undefined;
    if (hit !== undefined) {
      const given = Buffer.from(token.slice(dot + 1), 'utf8');
      if (given.length !== hit.signature.length || !timingSafeEqual(given, hit.signature)) return undefined;
      if (hit.claims.exp * 1000 <= nowMs) {
        this.known.delete(signed);
        return undefined;
      }
      return hit.claims;
    }
    const claims = verifySyncToken(this.key, token, nowMs);
    if (claims === undefined) return undefined;
    this.known.set(signed, { signature: Buffer.from(token.slice(dot + 1), 'latin1'), claims });
    dropOldest(this.known, this.max);
    return claims;
  }

  /** Tokens remembered. */
  get size(): number {
    return this.known.size;
  }
}
