// Bearer authentication of the sync area: the 0600 sync secret in the data dir, the key that
// signs access tokens (derived from it), and the preHandler that turns a token into a caller.
import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { verifySyncToken } from '../../../../src/crypto/sync-token.js';
import { loadSecretFile } from '../../../../src/crypto/secret-file.js';

/** Who is calling a bearer sync endpoint: the token's user and app. */
export interface SyncCaller {
  userId: string;
  appId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    syncCaller?: SyncCaller;
  }
}

const SECRET_FILE = 'sync-secret';

/** The sync area's 32-byte secret (`<dataDir>/sync-secret`, base64url text, mode 0600), created once. */
export function loadSyncSecret(dataDir: string): Buffer {
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

function bearer(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}

function deny(reply: FastifyReply, text: string): FastifyReply {
  return reply.code(401).header('www-authenticate', 'Bearer realm="mkt-sync"').send({ error: text });
}

/** preHandler for every bearer sync endpoint: 401 for a missing, malformed, expired, tampered or other-app token. */
export function requireSyncAuth(secret: Buffer, clock: { now(): number }, opts: SyncAuthOptions = {}): preHandlerHookHandler {
  const key = tokenKey(secret);
  return async function syncAuth(req, reply) {
    const token = bearer(req);
    if (token === undefined) return deny(reply, 'missing bearer token: sign in with POST /api/v1/sync/auth');
    const claims = verifySyncToken(key, token, clock.now());
    if (!claims) return deny(reply, 'invalid or expired token');
    const caller: SyncCaller = { userId: claims.sub, appId: claims.app };
    if (opts.callerExists && !(await opts.callerExists(caller))) return deny(reply, 'invalid or expired token');
    req.syncCaller = caller;
  };
}

/** The authenticated caller of a route behind requireSyncAuth (throws if the hook did not run). */
export function syncCaller(request: FastifyRequest): SyncCaller {
  const c = request.syncCaller;
  if (!c) throw new Error('sync route registered without requireSyncAuth');
  return c;
}
