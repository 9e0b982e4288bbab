// The sync area's anonymous routes (spec Authentication): sign-in (app key, then email and
// password, answering a JWT), app validation and the app's pricing constants. The key is
// always in the body, never in a URL.
import type { FastifyInstance } from 'fastify';
import {
  ApiKeyBodySchema,
  AppPricingResponseSchema,
  SYNC_TOKEN_LIFETIME_SECONDS,
  SyncAuthRequestSchema,
  SyncAuthResponseSchema,
  ValidateAppResponseSchema,
} from '../../../../../src/schemas/sync.js';
import { ErrorSchema } from '../../../../../src/schemas/common.js';
import type { Static } from '@sinclair/typebox';
import { dummyPasswordHash, verifyPassword } from '../../../../../src/crypto/password.js';
import { appKeyHash } from '../../../../../src/crypto/sync-app-key.js';
import { signSyncToken } from '../../../../../src/crypto/sync-token.js';
import type { SyncApp, SyncStore } from '../../../../../src/store/sync.js';
import type { AccountsStore } from '../../../../../src/store/accounts.js';
import type { Clock } from '../../../../../src/util/clock.js';
import { HttpError } from '../../../../plugins/errors.js';
import { tokenKey } from '../auth.js';
import { TAGS } from './common.js';
import type { FailureWindow } from '../../../../plugins/failure-window.js';

export interface AppRouteDeps {
  store: SyncStore;
  accounts: AccountsStore;
  secret: Buffer;
  clock: Clock;
  /** The sign-in limit: failed sign-ins per client address and window. */
  guard: FailureWindow;
  tokenLifetimeSeconds?: number;
}

const NONE: unknown[] = [];
const errors = { 400: ErrorSchema, 401: ErrorSchema };
const LIMITED = 'After 10 failed sign-ins from one address within a fixed 15-minute window, sign-in answers 429 with Retry-After until the window ends.';

export async function appRoutes(app: FastifyInstance, deps: AppRouteDeps): Promise<void> {
  const { store, accounts, clock, guard } = deps;
  const key = tokenKey(deps.secret);
  const lifetime = deps.tokenLifetimeSeconds ?? SYNC_TOKEN_LIFETIME_SECONDS;

  async function appOf(apiKey: string): Promise<SyncApp> {
    const found = await store.appByKeyHash(appKeyHash(apiKey));
    if (!found) throw new HttpError(401, 'invalid API key');
    return found;
  }

  app.post<{ Body: Static<typeof SyncAuthRequestSchema> }>(
    '/api/v1/sync/auth',
    {
      schema: {
        operationId: 'sync_auth',
        summary: 'Sign in: app key, then email and password; answers a short-lived JWT',
        description: `HS256 JWT carrying the user id (sub) and the app id (app), valid ${lifetime} seconds. A wrong password and an unknown email get the same answer in about the same time. ${LIMITED}`,
        tags: TAGS,
        security: NONE,
        body: SyncAuthRequestSchema,
        response: { 200: SyncAuthResponseSchema, ...errors, 429: ErrorSchema },
      },
    },
    async (req) => {
      const syncApp = await appOf(req.body.api_key);
      // The attempt is reserved before any password is hashed, so concurrent guesses cannot
      // overrun the limit; only a failed attempt keeps its slot.
      const attempt = await guard.reserve(req.ip);
      const user = await accounts.findUserByEmail(req.body.email);
      const stored = user ? await accounts.getPasswordHash(user.id) : undefined;
      // An unknown email (or a user without a password) still pays for one scrypt run.
      const ok = await verifyPassword(req.body.password, stored ?? (await dummyPasswordHash()));
      if (!user || stored === undefined || !ok) throw new HttpError(401, 'invalid email or password');
      await attempt.release();
      const { token, claims } = signSyncToken(key, { userId: user.id, appId: syncApp.id, nowMs: clock.now(), lifetimeSeconds: lifetime });
      req.log.info({ user: user.id, app: syncApp.id }, 'sync sign-in');
      return { token, token_type: 'Bearer' as const, expires_in: lifetime, expires_at: new Date(claims.exp * 1000).toISOString(), user_id: user.id, app_id: syncApp.id };
    },
  );

  app.post<{ Body: Static<typeof ApiKeyBodySchema> }>(
    '/api/v1/sync/validate-app',
    {
      schema: {
        operationId: 'validate_app',
        summary: "Checks an app's public API key (in the body) and names the app",
        tags: TAGS,
        security: NONE,
        body: ApiKeyBodySchema,
        response: { 200: ValidateAppResponseSchema, ...errors },
      },
    },
    async (req) => {
      const a = await appOf(req.body.api_key);
      return { valid: true, app_id: a.id, app_name: a.name };
    },
  );

  app.post<{ Body: Static<typeof ApiKeyBodySchema> }>(
    '/api/v1/sync/app/pricing',
    {
      schema: {
        operationId: 'get_app_pricing',
        summary: "The app's pricing constants (quotable before sign-in)",
        description: 'monthly = max(min_charge_cents, ceil(cap GiB × per_gb_tenths_of_cent_per_month / 10)); annual = max(min_charge_cents, monthly × annual_multiplier). See docs/sync-server.md.',
        tags: TAGS,
        security: NONE,
        body: ApiKeyBodySchema,
        response: { 200: AppPricingResponseSchema, ...errors },
      },
    },
    async (req) => {
      const a = await appOf(req.body.api_key);
      return {
        app_name: a.name,
        min_charge_cents: a.min_charge_cents,
        per_gb_tenths_of_cent_per_month: a.per_gb_tenths_of_cent_per_month,
        annual_multiplier: a.annual_multiplier,
        min_cap_bytes: a.min_cap_bytes,
        max_cap_bytes: a.max_cap_bytes,
      };
    },
  );
}
