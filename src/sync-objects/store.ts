// The object store behind sync blobs: pre-signed PUT/GET URLs (exact length, optional SHA-256
// checksum bound in), authoritative sizes, and S3-style multipart uploads. Adapters: `local`
// (files under the data dir, served by the marketplace itself) and `s3`.

export interface PutGrantOptions {
  /** Exact body length the store will accept. */
  length: number;
  /** Base64 SHA-256 of the body; the store rejects a body that does not match. */
  checksum?: string;
  /** Seconds the URL stays valid. */
  expiresIn: number;
  /** Parts only: where the part starts in the assembled object (the local adapter writes parts in place). */
  offset?: number;
}

export interface StoredPart {
  partNumber: number;
  size: number;
  etag: string;
  /** Base64 SHA-256 the store verified the part against, when it keeps one (S3). */
  checksum?: string;
}

export interface ObjectStore {
  readonly kind: string;
  /** `baseUrl` is the marketplace's public address as the caller reached it (local adapter). */
  presignPut(baseUrl: string, key: string, opts: PutGrantOptions): Promise<string>;
  presignGet(baseUrl: string, key: string, expiresIn: number): Promise<string>;
  /** Size of the stored object, undefined when there is none. */
  head(key: string): Promise<{ size: number } | undefined>;
  delete(key: string): Promise<void>;

  /** Opens a multipart upload of `key`; returns the store's own upload id. */
  createMultipart(key: string): Promise<string>;
  presignPart(baseUrl: string, key: string, storeUploadId: string, partNumber: number, opts: PutGrantOptions): Promise<string>;
  /** Parts stored so far, by part number. */
  listParts(key: string, storeUploadId: string): Promise<StoredPart[]>;
  /** Assembles the parts (in order) into the object `key`. */
  completeMultipart(key: string, storeUploadId: string, parts: { partNumber: number; etag: string; checksum?: string }[]): Promise<void>;
  /** Drops the upload and its parts; a no-op when it is already gone. */
  abortMultipart(key: string, storeUploadId: string): Promise<void>;
  /**
   * Makes the object `to` a copy of `from` as it is now (local: a hard link; s3: CopyObject,
   * one-shot objects only, up to 5 GiB). Later writes to `from` never reach `to`.
   */
  promote(from: string, to: string): Promise<void>;
  close(): Promise<void>;
}

/** Thrown by adapters for a request the store refuses (the message is safe to show). */
export class ObjectStoreError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ObjectStoreError';
  }
}

/** `<app>/<user>/<hash>`: where blobs confirmed before per-upload objects live. */
export function blobKey(appId: string, userId: string, hash: string): string {
  return `${appId}/${userId}/${hash}`;
}

/**
 * `<app>/<user>/<hash>.<upload id>`: the object of one upload (a multipart session assembles
 * into it; a one-shot grant is promoted into it at confirm). No signed URL ever writes it.
 */
export function uploadObjectKey(appId: string, userId: string, hash: string, uploadId: string): string {
  return `${appId}/${userId}/${hash}.${uploadId}`;
}

/** Where a one-shot grant's signed PUT writes: beside its object, never the object itself. */
export function stagingKey(objectKey: string): string {
  return `${objectKey}.put`;
}

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$/;

/** Object keys are `/`-joined segments of safe characters, never `.`/`..` (they map to paths). */
export function isSafeKey(key: string): boolean {
  const parts = key.split('/');
  return parts.length >= 1 && parts.length <= 8 && parts.every((p) => SEGMENT.test(p));
}
