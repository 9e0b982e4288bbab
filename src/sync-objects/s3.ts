// The `s3` object store: S3 (or MinIO, R2, ...) through the AWS SDK. Pre-signed SigV4 URLs sign
// the exact Content-Length and, when given, the x-amz-checksum-sha256 header (kept a header, not
// hoisted into the query), so S3 itself refuses a wrong length or a body that mismatches.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ObjectStoreError, type ObjectStore, type PutGrantOptions, type StoredPart } from './store.js';

export interface S3StoreOptions {
  bucket: string;
  region?: string;
  /** For MinIO, R2 or a test server; default AWS. */
  endpoint?: string;
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key` (MinIO needs it). */
  forcePathStyle?: boolean;
  /** Prefix of every object key, for example `mkt/`. */
  prefix?: string;
  /** Default: the AWS SDK's credential chain (environment, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

const CHECKSUM_HEADER = 'x-amz-checksum-sha256';

/**
 * Options from `MKT_SYNC_S3_BUCKET`, `MKT_SYNC_S3_REGION`, `MKT_SYNC_S3_ENDPOINT`,
 * `MKT_SYNC_S3_FORCE_PATH_STYLE` (1/true) and `MKT_SYNC_S3_PREFIX`; explicit options win.
 * Credentials come from the AWS SDK's own chain (AWS_ACCESS_KEY_ID, profiles, roles).
 */
export function s3OptionsFrom(given: Partial<S3StoreOptions> | undefined, env: NodeJS.ProcessEnv): S3StoreOptions {
  const bucket = given?.bucket ?? env.MKT_SYNC_S3_BUCKET;
  if (!bucket) throw new Error('the s3 object store needs a bucket: set MKT_SYNC_S3_BUCKET');
  const pathStyle = env.MKT_SYNC_S3_FORCE_PATH_STYLE;
  return {
    bucket,
    region: given?.region ?? env.MKT_SYNC_S3_REGION,
    endpoint: given?.endpoint ?? env.MKT_SYNC_S3_ENDPOINT,
    forcePathStyle: given?.forcePathStyle ?? (pathStyle === undefined ? undefined : /^(1|true|yes)$/i.test(pathStyle)),
    prefix: given?.prefix ?? env.MKT_SYNC_S3_PREFIX,
    credentials: given?.credentials,
  };
}

function errorName(err: unknown): string {
  return (err as { name?: string; Code?: string }).name ?? (err as { Code?: string }).Code ?? '';
}
function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3';
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(opts: S3StoreOptions) {
    this.client = new S3Client({
      region: opts.region ?? 'us-east-1',
      endpoint: opts.endpoint,
      forcePathStyle: opts.forcePathStyle,
      credentials: opts.credentials,
      // The SDK would otherwise add CRC32 checksums of its own to requests and signed URLs.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    this.bucket = opts.bucket;
    this.prefix = opts.prefix ?? '';
  }

  private k(key: string): string {
    return this.prefix + key;
  }

  private signOpts(opts: PutGrantOptions): Parameters<typeof getSignedUrl>[2] {
    const signed = new Set(['content-length']);
    const unhoisted = new Set<string>();
    if (opts.checksum) {
      signed.add(CHECKSUM_HEADER);
      unhoisted.add(CHECKSUM_HEADER);
    }
    return { expiresIn: opts.expiresIn, signableHeaders: signed, unhoistableHeaders: unhoisted };
  }

  async presignPut(_baseUrl: string, key: string, opts: PutGrantOptions): Promise<string> {
    const cmd = new PutObjectCommand({ Bucket: this.bucket, Key: this.k(key), ContentLength: opts.length, ChecksumSHA256: opts.checksum });
    return getSignedUrl(this.client, cmd, this.signOpts(opts));
  }

  async presignGet(_baseUrl: string, key: string, expiresIn: number): Promise<string> {
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: this.k(key) }), { expiresIn });
  }

  async head(key: string): Promise<{ size: number } | undefined> {
    try {
      const r = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.k(key) }));
      return { size: r.ContentLength ?? 0 };
    } catch (err) {
      if (httpStatus(err) === 404 || errorName(err) === 'NotFound' || errorName(err) === 'NoSuchKey') return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.k(key) }));
  }

  async createMultipart(key: string): Promise<string> {
    // SHA256 parts: S3 checks each part's checksum header, and the completion lists them.
    const r = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: this.k(key), ChecksumAlgorithm: 'SHA256' }));
    if (!r.UploadId) throw new Error('S3 returned no UploadId');
    return r.UploadId;
  }

  async presignPart(_baseUrl: string, key: string, storeUploadId: string, partNumber: number, opts: PutGrantOptions): Promise<string> {
    const cmd = new UploadPartCommand({ Bucket: this.bucket, Key: this.k(key), UploadId: storeUploadId, PartNumber: partNumber, ContentLength: opts.length, ChecksumSHA256: opts.checksum });
    return getSignedUrl(this.client, cmd, this.signOpts(opts));
  }

  async listParts(key: string, storeUploadId: string): Promise<StoredPart[]> {
    const parts: StoredPart[] = [];
    let marker: string | undefined;
    try {
      for (;;) {
        const r = await this.client.send(new ListPartsCommand({ Bucket: this.bucket, Key: this.k(key), UploadId: storeUploadId, PartNumberMarker: marker }));
        for (const p of r.Parts ?? []) parts.push({ partNumber: p.PartNumber ?? 0, size: p.Size ?? 0, etag: p.ETag ?? '', checksum: p.ChecksumSHA256 });
        if (!r.IsTruncated) break;
        marker = r.NextPartNumberMarker;
      }
    } catch (err) {
      if (errorName(err) === 'NoSuchUpload') return [];
      throw err;
    }
    return parts;
  }

  async completeMultipart(key: string, storeUploadId: string, parts: { partNumber: number; etag: string; checksum?: string }[]): Promise<void> {
    const list: CompletedPart[] = parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag, ...(p.checksum ? { ChecksumSHA256: p.checksum } : {}) }));
    try {
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: this.k(key), UploadId: storeUploadId, MultipartUpload: { Parts: list } }));
    } catch (err) {
      const name = errorName(err);
      if (name === 'InvalidPart' || name === 'InvalidPartOrder' || name === 'EntityTooSmall') throw new ObjectStoreError(409, `the object store refused the parts: ${name}`);
      if (name === 'NoSuchUpload') throw new ObjectStoreError(404, 'no such multipart upload (completed or aborted)');
      throw err;
    }
  }

  async abortMultipart(key: string, storeUploadId: string): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.k(key), UploadId: storeUploadId }));
    } catch (err) {
      if (errorName(err) !== 'NoSuchUpload') throw err;
    }
  }

  async promote(from: string, to: string): Promise<void> {
    try {
      await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: this.k(to), CopySource: `${this.bucket}/${this.k(from)}` }));
    } catch (err) {
      if (httpStatus(err) === 404 || errorName(err) === 'NoSuchKey') throw new ObjectStoreError(409, 'no object was uploaded');
      throw err;
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
