// Wire records of the sync API as the client uses them: static types of the TypeBox schemas in
// src/schemas/sync.ts (type-only, so the CLI never loads TypeBox at run time).
import type { Static } from '@sinclair/typebox';
import type * as S from '../schemas/sync.js';

export type SyncAuthRequest = Static<typeof S.SyncAuthRequestSchema>;
export type SyncAuthResponse = Static<typeof S.SyncAuthResponseSchema>;
export type ValidateAppResponse = Static<typeof S.ValidateAppResponseSchema>;
export type AppPricingResponse = Static<typeof S.AppPricingResponseSchema>;
export type SyncAccountResponse = Static<typeof S.SyncAccountResponseSchema>;
export type SyncStatusResponse = Static<typeof S.SyncStatusResponseSchema>;

export type ChangeEntry = Static<typeof S.ChangeEntrySchema>;
export type StoredChangeEntry = Static<typeof S.StoredChangeEntrySchema>;
export type PushRequest = Static<typeof S.PushRequestSchema>;
export type PushResponse = Static<typeof S.PushResponseSchema>;
export type PullRequest = Static<typeof S.PullRequestSchema>;
export type PullResponse = Static<typeof S.PullResponseSchema>;

export type RegisterDeviceRequest = Static<typeof S.RegisterDeviceRequestSchema>;
export type SyncDeviceResponse = Static<typeof S.SyncDeviceResponseSchema>;

export type PendingKeyInfo = Static<typeof S.PendingKeyInfoSchema>;
export type GetKeyResponse = Static<typeof S.GetKeyResponseSchema>;
export type PutKeyRequest = Static<typeof S.PutKeyRequestSchema>;
export type BeginRotationRequest = Static<typeof S.BeginRotationRequestSchema>;
export type BeginRotationResponse = Static<typeof S.BeginRotationResponseSchema>;
export type RotationEntriesRequest = Static<typeof S.RotationEntriesRequestSchema>;
export type RotationEntriesResponse = Static<typeof S.RotationEntriesResponseSchema>;
export type RotationBatchRequest = Static<typeof S.RotationBatchRequestSchema>;
export type RotationBatchResponse = Static<typeof S.RotationBatchResponseSchema>;

export type BlobUploadUrlRequest = Static<typeof S.BlobUploadUrlRequestSchema>;
export type BlobUploadUrlResponse = Static<typeof S.BlobUploadUrlResponseSchema>;
export type BlobDownloadUrlResponse = Static<typeof S.BlobDownloadUrlResponseSchema>;
export type BlobMultipartStartRequest = Static<typeof S.BlobMultipartStartRequestSchema>;
export type BlobMultipartStartResponse = Static<typeof S.BlobMultipartStartResponseSchema>;
export type BlobMultipartPartsRequest = Static<typeof S.BlobMultipartPartsRequestSchema>;
export type BlobMultipartPartUrl = Static<typeof S.BlobMultipartPartUrlSchema>;
export type BlobMultipartPartsResponse = Static<typeof S.BlobMultipartPartsResponseSchema>;
export type BlobMultipartCompleteRequest = Static<typeof S.BlobMultipartCompleteRequestSchema>;

export type SyncSubscriptionStatusResponse = Static<typeof S.SyncSubscriptionStatusResponseSchema>;
export type SyncSubscribeRequest = Static<typeof S.SyncSubscribeRequestSchema>;
export type SyncCheckoutResponse = Static<typeof S.SyncCheckoutResponseSchema>;
export type SyncQuoteRequest = Static<typeof S.SyncQuoteRequestSchema>;
export type SyncQuoteResponse = Static<typeof S.SyncQuoteResponseSchema>;
export type SyncCapChangeRequest = Static<typeof S.SyncCapChangeRequestSchema>;
