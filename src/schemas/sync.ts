// Sync API wire types (spec: marketplace-sync): TypeBox schemas shared by the server's
// validation, its OpenAPI document and the client. Records the spec leaves "not shown" follow
// the choices in docs/sync-server.md (and src/sync/wire.ts, the client's view, agrees).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
// The shared error body, re-exported so a service's routes import their wire types from one module.
export { ErrorSchema } from './common.js';

function nullable<T extends TSchema>(schema: T): ReturnType<typeof Type.Unsafe<Static<T> | null>> {
  const s = schema as unknown as Record<string, unknown>;
  return Type.Unsafe<Static<T> | null>({ ...s, type: [s.type as string, 'null'] });
}
const Int64 = (o: Record<string, unknown> = {}) => Type.Integer({ minimum: 0, ...o });
const Id = Type.String({ minLength: 1, maxLength: 200 });
const ApiKey = Type.String({ minLength: 1, maxLength: 200, description: "the app's public API key (body only, never a query string)" });
/** Blob label: SHA-256 of the plaintext as 64 lowercase hex digits. */
export const HASH_PATTERN = '^[0-9a-f]{64}$';
const Hash = Type.String({ pattern: HASH_PATTERN, description: 'SHA-256 of the plaintext, 64 lowercase hex digits' });
/** Base64 of a raw 32-byte SHA-256 digest (S3's x-amz-checksum-sha256). */
const Checksum = Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' });
export const Interval = Type.Union([Type.Literal('month'), Type.Literal('year')]);
export type BillingInterval = Static<typeof Interval>;

// --- apps and auth ---
export const ApiKeyBodySchema = Type.Object({ api_key: ApiKey }, { additionalProperties: false });
export const SyncAuthRequestSchema = Type.Object(
  { api_key: ApiKey, email: Type.String({ minLength: 1, maxLength: 320 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);
export const SyncAuthResponseSchema = Type.Object({
  token: Type.String({ description: 'HS256 JWT: sub = user id, app = app id' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Int64({ description: 'seconds' }),
  expires_at: Type.String(),
  user_id: Type.String(),
  app_id: Type.String(),
});
export const ValidateAppResponseSchema = Type.Object({ valid: Type.Boolean(), app_id: Type.String(), app_name: Type.String() });
export const AppPricingResponseSchema = Type.Object({
  app_name: Type.String(),
  min_charge_cents: Int64(),
  per_gb_tenths_of_cent_per_month: Int64(),
  annual_multiplier: Int64(),
  min_cap_bytes: Int64(),
  max_cap_bytes: Int64(),
});
export type AppPricingResponse = Static<typeof AppPricingResponseSchema>;
export const SyncAccountResponseSchema = Type.Object({
  user_id: Type.String(),
  email: Type.String(),
  username: Type.String(),
  created_at: Type.String(),
  app_id: Type.String(),
  app_name: Type.String(),
});
export const SyncStatusResponseSchema = Type.Object({
  user_id: Type.String(),
  app_id: Type.String(),
  cursor: Int64({ description: 'sequence number of the newest entry (0 when none)' }),
  entry_count: Int64(),
  device_count: Int64(),
  key_version: nullable(Type.Integer()),
  key_id: nullable(Type.Integer()),
  rotation_in_progress: Type.Boolean(),
  blob_count: Int64(),
  storage_used_bytes: Int64({ description: 'confirmed blobs plus parts of open multipart sessions' }),
  storage_cap_bytes: Int64({ description: 'the subscription cap, else the free allowance of the app' }),
  subscription_active: Type.Boolean(),
});
export type SyncStatusResponse = Static<typeof SyncStatusResponseSchema>;

// --- changelog ---
export const OP_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';
export const ChangeEntrySchema = Type.Object(
  {
    table: Type.String({ minLength: 1, maxLength: 200 }),
    op: Type.String({ pattern: OP_PATTERN, description: 'application-defined operation name (insert, update, delete, ...)' }),
    row_id: Type.String({ minLength: 1, maxLength: 500 }),
    timestamp: Type.String({ minLength: 1, maxLength: 64 }),
    data: Type.Optional(Type.Unknown({ description: 'ciphertext (any JSON value); the server never reads it' })),
  },
  { additionalProperties: false },
);
export type ChangeEntry = Static<typeof ChangeEntrySchema>;
export const StoredChangeEntrySchema = Type.Object({
  seq: Int64(),
  key_id: Type.Integer(),
  device_id: nullable(Type.String()),
  table: Type.String(),
  op: Type.String(),
  row_id: Type.String(),
  timestamp: Type.String(),
  data: Type.Unknown(),
});
export type StoredChangeEntry = Static<typeof StoredChangeEntrySchema>;
export const MAX_PUSH_ENTRIES = 1000;
export const PushRequestSchema = Type.Object(
  {
    device_id: Id,
    batch_id: Type.String({ minLength: 1, maxLength: 100, description: 'client-chosen; a retried batch of the same device is applied once' }),
    key_id: Type.Integer({ minimum: 1, description: 'the key the entries are sealed with' }),
    entries: Type.Array(ChangeEntrySchema, { maxItems: MAX_PUSH_ENTRIES }),
  },
  { additionalProperties: false },
);
export type PushRequest = Static<typeof PushRequestSchema>;
export const PushResponseSchema = Type.Object({
  cursor: Int64({ description: 'sequence number of the last entry of this batch' }),
  accepted: Int64(),
  duplicate: Type.Boolean({ description: 'true when the batch had been applied before' }),
});
export const MAX_PULL_LIMIT = 1000;
export const PullRequestSchema = Type.Object(
  { cursor: Int64(), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PULL_LIMIT })), device_id: Type.Optional(Id) },
  { additionalProperties: false },
);
export const PullResponseSchema = Type.Object({ entries: Type.Array(StoredChangeEntrySchema), cursor: Int64(), has_more: Type.Boolean() });

// --- devices ---
export const RegisterDeviceRequestSchema = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), platform: Type.Optional(Type.String({ maxLength: 100 })) },
  { additionalProperties: false },
);
export const SyncDeviceResponseSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  platform: nullable(Type.String()),
  created_at: Type.String(),
  last_seen_at: Type.String({ description: 'The last push or registration naming the device, or a pull naming it (written at most once a minute a device)' }),
});
export type SyncDevice = Static<typeof SyncDeviceResponseSchema>;

// --- keys and rotation ---
export const PendingKeyInfoSchema = Type.Object({ encrypted_key: Type.String(), key_id: Type.Integer(), rotation_id: Type.String(), target_seq: Int64() });
export const RetiredKeySchema = Type.Object({ encrypted_key: Type.String(), key_id: Type.Integer() });
export const GetKeyResponseSchema = Type.Object({
  encrypted_key: Type.String(),
  key_version: Type.Integer(),
  key_id: Type.Integer(),
  pending_key: nullable(PendingKeyInfoSchema),
  retired_keys: Type.Array(RetiredKeySchema, { description: 'envelopes of cancelled rotations that stored entries are still sealed with' }),
});
export const PutKeyRequestSchema = Type.Object(
  { encrypted_key: Type.String({ minLength: 1, maxLength: 16384 }), expected_key_version: Type.Integer({ minimum: 0, description: '0 for the first envelope' }) },
  { additionalProperties: false },
);
export const BeginRotationRequestSchema = Type.Object(
  { device_id: Id, new_encrypted_key: Type.String({ minLength: 1, maxLength: 16384 }), expected_key_version: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);
export const BeginRotationResponseSchema = Type.Object({ rotation_id: Type.String({ format: 'uuid' }), target_seq: Int64(), new_key_id: Type.Integer() });
export const CompleteRotationRequestSchema = Type.Object({ rotation_id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
export const RotationEntriesRequestSchema = Type.Object(
  { rotation_id: Type.String({ minLength: 1, maxLength: 100 }), after_seq: Type.Optional(Int64()), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PULL_LIMIT })) },
  { additionalProperties: false },
);
export const RotationEntriesResponseSchema = Type.Object({ entries: Type.Array(StoredChangeEntrySchema), has_more: Type.Boolean(), remaining: Int64() });
export const RotationBatchRequestSchema = Type.Object(
  {
    rotation_id: Type.String({ minLength: 1, maxLength: 100 }),
    entries: Type.Array(Type.Object({ seq: Type.Integer({ minimum: 1 }), data: Type.Unknown() }, { additionalProperties: false }), { maxItems: MAX_PUSH_ENTRIES }),
  },
  { additionalProperties: false },
);
export const RotationBatchResponseSchema = Type.Object({ updated: Int64(), remaining: Int64() });

// --- blobs ---
export const BlobUploadUrlRequestSchema = Type.Object({ hash: Hash, size_bytes: Int64() }, { additionalProperties: false });
export const BlobUploadUrlResponseSchema = Type.Object({ upload_url: Type.String(), already_exists: Type.Boolean(), expires_in: Int64({ description: 'seconds' }) });
export const BlobHashRequestSchema = Type.Object({ hash: Hash }, { additionalProperties: false });
export const BlobDownloadUrlResponseSchema = Type.Object({ download_url: Type.String(), size_bytes: Int64(), expires_in: Int64() });
export const BlobMultipartStartRequestSchema = Type.Object({ hash: Hash, size_bytes: Int64() }, { additionalProperties: false });
export const BlobMultipartStartResponseSchema = Type.Object({ upload_id: Type.String(), part_size: Int64(), part_count: Int64(), already_exists: Type.Boolean() });
export const MAX_PART_WINDOW = 100;
export const BlobMultipartPartsRequestSchema = Type.Object(
  {
    hash: Hash,
    upload_id: Type.String({ minLength: 1, maxLength: 100 }),
    size_bytes: Int64(),
    first_part: Type.Integer({ minimum: 0, description: 'part numbers start at 1, as in S3' }),
    count: Type.Integer({ minimum: 0, maximum: MAX_PART_WINDOW }),
    checksums: Type.Optional(nullable(Type.Array(Checksum, { maxItems: MAX_PART_WINDOW }))),
  },
  { additionalProperties: false },
);
export const BlobMultipartPartUrlSchema = Type.Object({ part_number: Type.Integer(), content_length: Int64(), url: Type.String() });
export const BlobMultipartPartsResponseSchema = Type.Object({ parts: Type.Array(BlobMultipartPartUrlSchema), expires_in: Int64({ description: 'seconds' }) });
export const BlobMultipartCompleteRequestSchema = Type.Object(
  {
    hash: Hash,
    upload_id: Type.String({ minLength: 1, maxLength: 100 }),
    parts: Type.Array(Type.Object({ part_number: Type.Integer({ minimum: 1 }), etag: Type.String({ maxLength: 200 }) }, { additionalProperties: false }), { maxItems: 10000 }),
  },
  { additionalProperties: false },
);
export const BlobMultipartAbortRequestSchema = Type.Object({ hash: Hash, upload_id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

// --- subscriptions ---
const CapBytes = Int64({ description: 'storage cap in bytes, within the app pricing min/max' });
export const SyncQuoteRequestSchema = Type.Object({ cap_bytes: CapBytes, interval: Interval }, { additionalProperties: false });
export const SyncQuoteResponseSchema = Type.Object({ cap_bytes: Int64(), interval: Interval, price_cents: Int64(), monthly_cents: Int64(), currency: Type.String() });
export const SyncSubscribeRequestSchema = SyncQuoteRequestSchema;
export const SyncCheckoutResponseSchema = Type.Object({ checkout_url: Type.String(), session_id: Type.String(), price_cents: Int64() });
export const SyncCapChangeRequestSchema = Type.Object({ cap_bytes: CapBytes }, { additionalProperties: false });
export const SyncSubscriptionStatusResponseSchema = Type.Object({
  active: Type.Boolean(),
  status: nullable(Type.String()),
  cap_bytes: nullable(Type.Integer()),
  pending_cap_bytes: nullable(Type.Integer()),
  interval: nullable(Type.String()),
  price_cents: nullable(Type.Integer()),
  current_period_start: nullable(Type.String()),
  current_period_end: nullable(Type.String()),
});
export type SyncSubscriptionStatus = Static<typeof SyncSubscriptionStatusResponseSchema>;

/** Claims of the sync access token (see docs/sync-server.md). */
export interface SyncTokenClaims {
  iss: string;
  aud: string;
  sub: string;
  app: string;
  iat: number;
  exp: number;
  jti: string;
}
export const SYNC_TOKEN_LIFETIME_SECONDS = 3600;
