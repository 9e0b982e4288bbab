// Account and status routes (sync_account, sync_status): who the token belongs to, and the sync
// metadata of the (user, app): cursor, counts, key state, storage use and cap.
import type { FastifyInstance } from 'fastify';
import type { Usage } from '../../../../../src/store/sync-usage.js';
import { SyncAccountResponseSchema, SyncStatusResponseSchema, type SyncStatusResponse } from '../../../../../src/schemas/sync.js';
import { HttpError } from '../../../../plugins/errors.js';
import { syncCaller } from '../auth.js';
import { BEARER, TAGS, bearerErrors, type BearerRouteDeps } from './common.js';
import { syncCounts } from '../counts.js';

export interface AccountRouteDeps extends BearerRouteDeps {
  /** Storage use and cap of the (app, user), as blob confirm reckons them. */
  usage(appId: string, userId: string): Promise<Usage>;
}

export async function accountRoutes(app: FastifyInstance, deps: AccountRouteDeps): Promise<void> {
  const { store, accounts, usage } = deps;

  app.get(
    '/api/v1/sync/account',
    { schema: { operationId: 'sync_account', summary: "The signed-in user's account (email, username) and app", tags: TAGS, security: BEARER, response: { 200: SyncAccountResponseSchema, ...bearerErrors } } },
    async (req) => {
      const c = syncCaller(req);
      const [user, syncApp] = await Promise.all([accounts.getUser(c.userId), store.getApp(c.appId)]);
      // requireSyncAuth checked both exist; a deletion in between reads as a stale token.
      if (!user || !syncApp) throw new HttpError(401, 'invalid or expired token');
      return { user_id: user.id, email: user.email, username: user.name, created_at: user.created_at, app_id: syncApp.id, app_name: syncApp.name };
    },
  );

  app.get(
    '/api/v1/sync/status',
    {
      schema: {
        operationId: 'sync_status',
        summary: 'Sync metadata of the user and app',
        description: 'storage_used_bytes counts what is stored: confirmed blobs, changelog entries (their ciphertext as stored) and the stored parts of unconfirmed multipart uploads; storage_cap_bytes is the active subscription cap, else the app’s free allowance. The cap also covers the signed sizes of pending uploads (see blob_upload_url).',
        tags: TAGS,
        security: BEARER,
        response: { 200: SyncStatusResponseSchema, ...bearerErrors },
      },
    },
    async (req): Promise<SyncStatusResponse> => {
      const c = syncCaller(req);
      const [n, u] = await Promise.all([syncCounts(store, { appId: c.appId, userId: c.userId }), usage(c.appId, c.userId)]);
      return {
        user_id: c.userId,
        app_id: c.appId,
        cursor: n.cursor,
        entry_count: n.entry_count,
        device_count: n.device_count,
        key_version: n.key_version,
        key_id: n.key_id,
        rotation_in_progress: n.rotation_in_progress,
        blob_count: u.blob_count,
        storage_used_bytes: u.used_bytes,
        storage_cap_bytes: u.cap_bytes,
        subscription_active: u.subscription_active,
      };
    },
  );
}
