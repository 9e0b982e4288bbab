// Typed client of the marketplace sync API (`/api/v1/sync/...`), used by `mkt sync`. It only
// moves ciphertext: sealing and opening happen in src/crypto and src/sync before and after.
import { Readable } from 'node:stream';
import { request } from 'undici';
import { ApiError, HttpClient, NetworkError, readCapped, type HttpClientOptions } from './http.js';
import type * as W from '../sync/wire.js';

export type * from '../sync/wire.js';

const P = '/api/v1/sync';
/**
 * A changelog page (pull, rotation entries) is up to a thousand entries of ciphertext each
 * pushed in bodies of up to 8 MiB, so it may pass the client's 64 MiB default; 256 MiB stays
 * below V8's largest string. The object store's own answers (an ETag, an error) are small.
 */
export const SYNC_PAGE_MAX_BYTES = 256 * 1024 * 1024;
const OBJECT_STORE_ANSWER_BYTES = 1024 * 1024;

export class SyncClient {
  readonly http: HttpClient;
  constructor(httpOrOptions: HttpClient | HttpClientOptions) {
    this.http = httpOrOptions instanceof HttpClient ? httpOrOptions : new HttpClient(httpOrOptions);
  }

  // Anonymous: the app key travels in the body, never in a URL.
  auth(req: W.SyncAuthRequest): Promise<W.SyncAuthResponse> {
    return this.http.json('POST', `${P}/auth`, { body: req });
  }
  validateApp(apiKey: string): Promise<W.ValidateAppResponse> {
    return this.http.json('POST', `${P}/validate-app`, { body: { api_key: apiKey } });
  }
  pricing(apiKey: string): Promise<W.AppPricingResponse> {
    return this.http.json('POST', `${P}/app/pricing`, { body: { api_key: apiKey } });
  }

  account(): Promise<W.SyncAccountResponse> {
    return this.http.json('GET', `${P}/account`);
  }
  status(): Promise<W.SyncStatusResponse> {
    return this.http.json('GET', `${P}/status`);
  }

  push(req: W.PushRequest): Promise<W.PushResponse> {
    return this.http.json('POST', `${P}/push`, { body: req });
  }
  pull(req: W.PullRequest): Promise<W.PullResponse> {
    return this.http.json('POST', `${P}/pull`, { body: req, maxResponseBytes: SYNC_PAGE_MAX_BYTES });
  }

  listDevices(): Promise<W.SyncDeviceResponse[]> {
    return this.http.json('GET', `${P}/devices`);
  }
  registerDevice(req: W.RegisterDeviceRequest): Promise<W.SyncDeviceResponse> {
    return this.http.json('POST', `${P}/devices`, { body: req });
  }
  async deleteDevice(id: string): Promise<void> {
    await this.http.json('DELETE', `${P}/devices/${encodeURIComponent(id)}`);
  }

  /** The key envelope, or undefined when none is stored yet (404). */
  async getKey(): Promise<W.GetKeyResponse | undefined> {
    try {
      return await this.http.json<W.GetKeyResponse>('GET', `${P}/keys`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return undefined;
      throw err;
    }
  }
  async putKey(req: W.PutKeyRequest): Promise<void> {
    await this.http.json('PUT', `${P}/keys`, { body: req });
  }
  beginRotation(req: W.BeginRotationRequest): Promise<W.BeginRotationResponse> {
    return this.http.json('POST', `${P}/keys/rotate`, { body: req });
  }
  async cancelRotation(): Promise<void> {
    await this.http.json('DELETE', `${P}/keys/rotate`);
  }
  rotationEntries(req: W.RotationEntriesRequest): Promise<W.RotationEntriesResponse> {
    return this.http.json('POST', `${P}/keys/rotate/entries`, { body: req, maxResponseBytes: SYNC_PAGE_MAX_BYTES });
  }
  rotationBatch(req: W.RotationBatchRequest): Promise<W.RotationBatchResponse> {
    return this.http.json('POST', `${P}/keys/rotate/batch`, { body: req });
  }
  async completeRotation(rotationId: string): Promise<void> {
    await this.http.json('POST', `${P}/keys/rotate/complete`, { body: { rotation_id: rotationId } });
  }

  blobUploadUrl(req: W.BlobUploadUrlRequest): Promise<W.BlobUploadUrlResponse> {
    return this.http.json('POST', `${P}/blobs/upload`, { body: req });
  }
  async blobConfirm(hash: string): Promise<void> {
    await this.http.json('POST', `${P}/blobs/confirm`, { body: { hash } });
  }
  blobDownloadUrl(hash: string): Promise<W.BlobDownloadUrlResponse> {
    return this.http.json('POST', `${P}/blobs/download`, { body: { hash } });
  }
  multipartStart(req: W.BlobMultipartStartRequest): Promise<W.BlobMultipartStartResponse> {
    return this.http.json('POST', `${P}/blobs/multipart/start`, { body: req });
  }
  multipartParts(req: W.BlobMultipartPartsRequest): Promise<W.BlobMultipartPartsResponse> {
    return this.http.json('POST', `${P}/blobs/multipart/parts`, { body: req });
  }
  async multipartComplete(req: W.BlobMultipartCompleteRequest): Promise<void> {
    await this.http.json('POST', `${P}/blobs/multipart/complete`, { body: req });
  }
  async multipartAbort(hash: string, uploadId: string): Promise<void> {
    await this.http.json('POST', `${P}/blobs/multipart/abort`, { body: { hash, upload_id: uploadId } });
  }

  subscription(): Promise<W.SyncSubscriptionStatusResponse> {
    return this.http.json('GET', `${P}/subscription`);
  }
  checkout(req: W.SyncSubscribeRequest): Promise<W.SyncCheckoutResponse> {
    return this.http.json('POST', `${P}/subscription/checkout`, { body: req });
  }
  quote(req: W.SyncQuoteRequest): Promise<W.SyncQuoteResponse> {
    return this.http.json('POST', `${P}/subscription/quote`, { body: req });
  }
  changeCap(req: W.SyncCapChangeRequest): Promise<W.SyncSubscriptionStatusResponse> {
    return this.http.json('POST', `${P}/subscription/storage-cap`, { body: req });
  }
}

/**
 * PUTs bytes (one buffer, or pieces sent in order) to a pre-signed URL (object storage, not the API: no bearer token goes there).
 * Returns the ETag. The checksum header is sent when the URL was signed with one.
 */
export async function putToSignedUrl(url: string, body: Buffer | Buffer[], opts: { checksum?: string; timeoutMs?: number } = {}): Promise<string> {
  const length = Array.isArray(body) ? body.reduce((n, b) => n + b.length, 0) : body.length;
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream', 'content-length': String(length) };
  if (opts.checksum) headers['x-amz-checksum-sha256'] = opts.checksum;
  let res;
  try {
    // A list of buffers goes out piece by piece, never joined into one copy.
    res = await request(url, { method: 'PUT', headers, body: Array.isArray(body) ? Readable.from(body, { objectMode: false }) : body, signal: AbortSignal.timeout(opts.timeoutMs ?? 300_000) });
  } catch (err) {
    throw new NetworkError(`cannot reach the object store: ${(err as { code?: string }).code ?? (err as Error).message}`, err);
  }
  const text = await readCapped(res.body, OBJECT_STORE_ANSWER_BYTES, `PUT to the object store at ${new URL(url).host}`, res.headers['content-length']);
  if (res.statusCode < 200 || res.statusCode > 299) throw new ApiError(res.statusCode, `object store refused the upload: ${objectStoreError(text) ?? `HTTP ${res.statusCode}`}`, text);
  const etag = res.headers.etag;
  return (Array.isArray(etag) ? etag[0] : etag) ?? '';
}

/** GETs a pre-signed download URL as a stream of ciphertext. */
export async function getFromSignedUrl(url: string, opts: { timeoutMs?: number } = {}): Promise<{ size: number | undefined; body: AsyncIterable<Buffer> }> {
  let res;
  try {
    res = await request(url, { method: 'GET', bodyTimeout: opts.timeoutMs ?? 300_000, headersTimeout: opts.timeoutMs ?? 300_000 });
  } catch (err) {
    throw new NetworkError(`cannot reach the object store: ${(err as { code?: string }).code ?? (err as Error).message}`, err);
  }
  if (res.statusCode < 200 || res.statusCode > 299) {
    const text = await readCapped(res.body, OBJECT_STORE_ANSWER_BYTES, `GET from the object store at ${new URL(url).host}`, res.headers['content-length']);
    throw new ApiError(res.statusCode, `object store refused the download: ${objectStoreError(text) ?? `HTTP ${res.statusCode}`}`, text);
  }
  const len = Number(res.headers['content-length']);
  return { size: Number.isFinite(len) ? len : undefined, body: res.body as AsyncIterable<Buffer> };
}

/** The message of an object store's error body (our JSON, or S3's XML). */
export function objectStoreError(text: string): string | undefined {
  try {
    const j = JSON.parse(text) as { error?: unknown };
    if (typeof j.error === 'string') return j.error;
  } catch {
    // S3 answers XML: <Message>...</Message>
  }
  return /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
}
