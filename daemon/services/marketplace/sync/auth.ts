// Bearer authentication of the sync area: the sync secret (one for every instance: the 0600 file
// in the shared data dir, or the file MKT_SYNC_SECRET_FILE names), the key that signs access
// tokens (derived from it), and the `verify` (remembering the callers found to exist) and 401 it
// gives the auth plugin.
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
   * another app this server does not know) is answered 401 like a tampered one.
   */
  callerExists?(caller: SyncCaller): boolean | Promise<boolean>;
}

/** Callers rememberExisting keeps by default: bounded memory, and the active callers of a busy instance fit. */
export const EXISTING_CALLERS_KEPT = 10_000;

/**
 * `check` with its yes answers remembered (the `max` most recently used callers): nothing deletes
 * a sync app or a user, so a caller found to exist stays so and a request of a known caller costs
 * no statement. A no is asked again each time: the app or user may be created since, on any
 * instance. Whatever comes to delete apps or users must forget them here, on every instance.
 */
export function rememberExisting(check: (c: SyncCaller) => Promise<boolean>, max = EXISTING_CALLERS_KEPT): (c: SyncCaller) => Promise<boolean> {
  // A Map iterates in insertion order: re-inserting on use makes its first key the least recently used.
  const known = new Map<string, true>();
  return async (c) => {
    const k = JSON.stringify([c.appId, c.userId]);
    if (known.delete(k)) {
      known.set(k, true);
      return true;
    }
    if (!(await check(c))) return false;
    known.set(k, true);
    dropOldest(known, max);
    return true;
  };
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

/** Who holds a bearer token: a valid, unexpired token of this server for an app and user that exist. */
export function syncAuthenticator(secret: Buffer, clock: { now(): number }, opts: SyncAuthOptions = {}): Authenticator<SyncCaller> {
  const tokens = new SyncTokenVerifier(tokenKey(secret));
  return new Authenticator<SyncCaller>({
    schemes: ['Bearer'],
    unauthorized,
    async verify(credential) {
      if (credential.kind !== 'token') return undefined;
      const claims = tokens.verify(credential.token, clock.now());
      if (!claims) return undefined;
      const caller: SyncCaller = { userId: claims.sub, appId: claims.app };
      if (opts.callerExists && !(await opts.callerExists(caller))) return undefined;
      return caller;
    },
  });
}

/** Hook for every bearer sync endpoint: 401 for a missing, malformed, expired, tampered or other-app token. */
export function requireSyncAuth(secret: Buffer, clock: { now(): number }, opts: SyncAuthOptions = {}): preHandlerHookHandler {
  const auth = syncAuthenticator(secret, clock, opts);
  return async function syncAuth(req) {
    await auth.required(req);
  };
}

/** The authenticated caller of a route behind requireSyncAuth (throws if the hook did not run). */
export function syncCaller(request: FastifyRequest): SyncCaller {
  const c = request.caller as SyncCaller | undefined;
  if (!c) throw new Error('sync route registered without requireSyncAuth');
  return c;
}
