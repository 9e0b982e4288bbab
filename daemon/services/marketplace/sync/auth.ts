// Bearer authentication of the sync area: the sync secret (one for every instance: the 0600 file
// in the shared data dir, or the file MKT_SYNC_SECRET_FILE names), the key that signs access
// tokens (derived from it), and the bearer check (SyncBearer: remembering the callers found to
// exist) for the auth plugin's hook and for the lane that answers sync_pull before fastify.
import { createHmac } from 'node:crypto';
import type { FastifyRequest, preHandlerHookHandler } from 'fastify';
import { SyncTokenVerifier } from '../../../../src/crypto/sync-token.js';
import { loadSecretFile, readProvisionedSecretFile } from '../../../../src/crypto/secret-file.js';
import { Authenticator, type Problem } from '../../../plugins/auth.js';
import { HttpError } from '../../../plugins/errors.js';
import { dropOldest } from '../../../../src/util/bounded-map.js';

/** Who is calling a bearer sync endpoint: the token's user and app. */
export interface SyncCaller {
  userId: string;
  appId: string;
}

const SECRET_FILE = 'sync-secret';

/**
 * The sync area's 32-byte secret. Every instance must hold the same one (a token signed by one is
 * checked by another), so it is either `<dataDir>/sync-secret` (base64url text, mode 0600, created
 * once, on the volume every instance mounts) or, when MKT_SYNC_SECRET_FILE is set, the file the
 * operator provisioned there (a systemd credential, a mounted secret), never created here.
 */
export function loadSyncSecret(dataDir: string, env: NodeJS.ProcessEnv = {}): Buffer {
  const provisioned = env.MKT_SYNC_SECRET_FILE?.trim();
  if (provisioned) return readProvisionedSecretFile(provisioned, 'the sync secret file (MKT_SYNC_SECRET_FILE)');
  return loadSecretFile(dataDir, SECRET_FILE);
}

/**
 * A purpose-bound key derived from the sync secret, so one secret file serves token signing and
 * any other use (pre-signed URLs, ...) without one key ever being reused for two jobs.
 */
export function deriveSyncKey(secret: Buffer, purpose: string): Buffer {
  return createHmac('sha256', secret).update(`mkt-sync:${purpose}`).digest();
}

/** The key access tokens are signed with (HS256). */
export function tokenKey(secret: Buffer): Buffer {
  return deriveSyncKey(secret, 'access-token');
}

export interface SyncAuthOptions {
  /**
   * Whether the token's app and user still exist; a token of a deleted app or user (or of
   * another app this server does not know) is answered 401 like a tampered one. Without it,
   * every caller of a valid token exists (tests of one route).
   */
  callers?: CallerCheck;
}

/** Whether a token's caller exists: asked (`exists`), or known without a statement (`known`). */
export interface CallerCheck {
  exists(caller: SyncCaller): boolean | Promise<boolean>;
  /** True only when `exists` would answer true without asking the database. */
  known(caller: SyncCaller): boolean;
}

/** Callers ExistingCallers keeps by default: bounded memory, and the active callers of a busy instance fit. */
export const EXISTING_CALLERS_KEPT = 10_000;

/**
 * `check` with its yes answers remembered (the `max` most recently used callers): nothing deletes
 * a sync app or a user, so a caller found to exist stays so and a request of a known caller costs
 * no statement. A no is asked again each time: the app or user may be created since, on any
 * instance. Whatever comes to delete apps or users must forget them here, on every instance.
 */
export class ExistingCallers implements CallerCheck {
  // A Map iterates in insertion order: re-inserting on use makes its first key the least recently used.
  private readonly seen = new Map<string, true>();

  constructor(
    private readonly check: (c: SyncCaller) => Promise<boolean>,
    private readonly max = EXISTING_CALLERS_KEPT,
  ) {}

  known(c: SyncCaller): boolean {
    const k = JSON.stringify([c.appId, c.userId]);
    if (!this.seen.delete(k)) return false;
    this.seen.set(k, true);
    return true;
  }

  async exists(c: SyncCaller): Promise<boolean> {
    if (this.known(c)) return true;
    if (!(await this.check(c))) return false;
    this.seen.set(JSON.stringify([c.appId, c.userId]), true);
    dropOldest(this.seen, this.max);
    return true;
  }
}

/** The sync area's 401: an `error` text and a Bearer challenge. */
function unauthorized(problem: Problem): HttpError {
  const text =
    problem.kind === 'missing'
      ? 'missing bearer token: sign in with POST /api/v1/sync/auth'
      : problem.kind === 'malformed'
        ? `${problem.reason}: sign in with POST /api/v1/sync/auth`
        : 'invalid or expired token';
  return new HttpError(401, text, { 'www-authenticate': 'Bearer realm="mkt-sync"' });
}

/**
 * The bearer check of the sync area: who holds a token (a valid, unexpired token of this server
 * for an app and user that exist), for fastify's hook and for a lane answering before fastify.
 */
export class SyncBearer {
  private readonly tokens: SyncTokenVerifier;
  private readonly authenticator: Authenticator<SyncCaller>;

  constructor(
    secret: Buffer,
    private readonly clock: { now(): number },
    private readonly opts: SyncAuthOptions = {},
  ) {
    this.tokens = new SyncTokenVerifier(tokenKey(secret));
    this.authenticator = new Authenticator<SyncCaller>({
      schemes: ['Bearer'],
      unauthorized,
      verify: async (credential) => {
        if (credential.kind !== 'token') return undefined;
        const caller = this.tokenCaller(credential.token);
        if (caller === undefined) return undefined;
        if (opts.callers && !(await opts.callers.exists(caller))) return undefined;
        return caller;
      },
    });
  }

  /**
   * The caller of `token` when that is known at once, without a statement: a token the hook would
   * accept, of a caller found to exist before. Undefined otherwise, and the hook decides (its 401,
   * or the caller's first lookup).
   */
  knownCaller(token: string): SyncCaller | undefined {
    const caller = this.tokenCaller(token);
    if (caller === undefined || (this.opts.callers !== undefined && !this.opts.callers.known(caller))) return undefined;
    return caller;
  }

  /** Hook for every bearer sync endpoint: 401 for a missing, malformed, expired, tampered or other-app token. */
  hook(): preHandlerHookHandler {
    const auth = this.authenticator;
    return async function syncAuth(req) {
      await auth.required(req);
    };
  }

  private tokenCaller(token: string): SyncCaller | undefined {
    const claims = this.tokens.verify(token, this.clock.now());
    return claims === undefined ? undefined : { userId: claims.sub, appId: claims.app };
  }
}

/** SyncBearer's hook, for a scope that needs no lane. */
export function requireSyncAuth(secret: Buffer, clock: { now(): number }, opts: SyncAuthOptions = {}): preHandlerHookHandler {
  return new SyncBearer(secret, clock, opts).hook();
}

/** The authenticated caller of a route behind requireSyncAuth (throws if the hook did not run). */
export function syncCaller(request: FastifyRequest): SyncCaller {
  const c = request.caller as SyncCaller | undefined;
  if (!c) throw new Error('sync route registered without requireSyncAuth');
  return c;
}
