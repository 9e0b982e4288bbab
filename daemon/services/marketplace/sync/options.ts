// The sync area's options (tokens, sign-in limit, blob storage and billing), part of the
// marketplace's (../options.ts), and how their environment variables fill them.
import { Type, type Static } from '@sinclair/typebox';
import { OptionsError, optionsObject } from '../../../service-options.js';

export const SyncOptionProperties = {
  /** Lifetime of sync access tokens in seconds; else MKT_SYNC_TOKEN_LIFETIME_SECONDS, else 3600. */
  syncTokenLifetimeSeconds: Type.Optional(Type.Number()),
  /** Failed sign-ins per client address and window before 429 (default 10 per 900 s). */
  syncSignInFailures: Type.Optional(Type.Number()),
  syncSignInWindowSeconds: Type.Optional(Type.Number()),
};
export const SyncOptions = optionsObject(SyncOptionProperties);
export type SyncOptions = Static<typeof SyncOptions>;

/** Settings of the s3 store; unset fields come from MKT_SYNC_S3_* (see s3OptionsFrom). */
const S3Settings = optionsObject({
  bucket: Type.Optional(Type.String()),
  region: Type.Optional(Type.String()),
  endpoint: Type.Optional(Type.String()),
  forcePathStyle: Type.Optional(Type.Boolean()),
  prefix: Type.Optional(Type.String()),
  // Open: the AWS SDK writes its own fields (`$source`) into the credentials object it is handed,
  // so the same settings given to a second start carry them.
  credentials: Type.Optional(Type.Object({ accessKeyId: Type.String(), secretAccessKey: Type.String() })),
});

/** Settings of the stripe provider; unset fields come from MKT_STRIPE_* (see stripeOptionsFrom). */
const StripeSettings = optionsObject({
  secretKey: Type.Optional(Type.String()),
  webhookSecret: Type.Optional(Type.String()),
  successUrl: Type.Optional(Type.String()),
  cancelUrl: Type.Optional(Type.String()),
  /** A different API host (a stand-in server in tests). */
  host: Type.Optional(Type.String()),
  port: Type.Optional(Type.Integer()),
  protocol: Type.Optional(Type.Union([Type.Literal('http'), Type.Literal('https')])),
});

export const StorageOptionProperties = {
  /** `local` (default) or `s3`; else MKT_SYNC_OBJECT_STORE. */
  syncObjectStore: Type.Optional(Type.Union([Type.Literal('local'), Type.Literal('s3')])),
  syncS3: Type.Optional(S3Settings),
  /** `--payments`, else MKT_SYNC_PAYMENTS; default local, on loopback only (exposure.ts). */
  syncPayments: Type.Optional(Type.Union([Type.Literal('local'), Type.Literal('stripe')])),
  syncStripe: Type.Optional(StripeSettings),
  /** Idle hours before the reaper aborts an upload; else MKT_SYNC_UPLOAD_IDLE_HOURS, else 24. */
  syncUploadIdleHours: Type.Optional(Type.Number()),
  /** Six-field cron expression of the reaper; else MKT_SYNC_REAPER_SCHEDULE, else every 10 minutes. */
  syncReaperSchedule: Type.Optional(Type.String()),
  /** `--public-url`, else MKT_PUBLIC_URL: the address of pre-signed and checkout URLs; required off loopback. */
  publicUrl: Type.Optional(Type.String()),
  /** Lifetime of pre-signed URLs in seconds; default 3600. */
  syncUrlTtlSeconds: Type.Optional(Type.Number()),
};
export const StorageOptions = optionsObject(StorageOptionProperties);
export type StorageOptions = Static<typeof StorageOptions>;

/** The option if given (and not blank), else the variable if set and not empty. */
function pick(option: string | number | undefined, env: string | undefined): string | undefined {
  if (option !== undefined && option !== '') return String(option);
  return env && env.length > 0 ? env : undefined;
}

function positive(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new OptionsError(`${name} must be a positive number, not ${JSON.stringify(text)}`);
  return n;
}

function oneOf<T extends string>(text: string | undefined, allowed: readonly T[], refusal: (text: string) => string): T | undefined {
  if (text === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(text)) throw new OptionsError(refusal(text));
  return text as T;
}

/** The keys the environment fills, checked. */
export function syncOptionsFromEnv(given: SyncOptions, env: NodeJS.ProcessEnv): SyncOptions {
  const raw = given.syncTokenLifetimeSeconds ?? env.MKT_SYNC_TOKEN_LIFETIME_SECONDS;
  let lifetime: number | undefined;
  if (raw !== undefined && raw !== '') {
    lifetime = Number(raw);
    if (!Number.isInteger(lifetime) || lifetime < 60 || lifetime > 30 * 86400) throw new OptionsError(`MKT_SYNC_TOKEN_LIFETIME_SECONDS must be a whole number of seconds from 60 to 2592000, not ${JSON.stringify(raw)}`);
  }
  return { syncTokenLifetimeSeconds: lifetime };
}

/** The keys the environment fills (and the values no schema can judge), checked. */
export function storageOptionsFromEnv(given: StorageOptions, env: NodeJS.ProcessEnv): StorageOptions {
  return {
    syncObjectStore: oneOf(pick(given.syncObjectStore, env.MKT_SYNC_OBJECT_STORE), ['local', 's3'] as const, (t) => `unknown sync object store ${JSON.stringify(t)} (expected local or s3)`),
    syncPayments: oneOf(pick(given.syncPayments, env.MKT_SYNC_PAYMENTS), ['local', 'stripe'] as const, (t) => `unknown sync payment provider ${JSON.stringify(t)} (expected local or stripe)`),
    publicUrl: pick(given.publicUrl, env.MKT_PUBLIC_URL),
    syncUploadIdleHours: positive('MKT_SYNC_UPLOAD_IDLE_HOURS', pick(given.syncUploadIdleHours, env.MKT_SYNC_UPLOAD_IDLE_HOURS)),
    syncReaperSchedule: pick(given.syncReaperSchedule, env.MKT_SYNC_REAPER_SCHEDULE),
    syncUrlTtlSeconds: positive('syncUrlTtlSeconds', pick(given.syncUrlTtlSeconds, undefined)),
  };
}
