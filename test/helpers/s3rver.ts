// A stand-in S3 server (the `s3rver` package) on 127.0.0.1 and an ephemeral port, with one
// bucket, for the `s3` object store's tests. s3rver does not verify SigV4 signatures and has no
// ListParts or AbortMultipartUpload, so those are checked on the URLs or not at all.
import { createRequire } from 'node:module';
import { tempDir } from './tmp.js';

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
type S3rverCtor = new (opts: Record<string, unknown>) => S3rverInstance;

export interface StandInS3 {
  endpoint: string;
  bucket: string;
  /** s3rver's built-in account. */
  credentials: { accessKeyId: string; secretAccessKey: string };
  close(): Promise<void>;
}

export async function startS3rver(bucket = 'mkt-blobs'): Promise<StandInS3> {
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor;
  const dir = tempDir('mkt-s3rver-');
  const srv = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir.path, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = await srv.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    async close() {
      await srv.close();
      dir.remove();
    },
  };
}
