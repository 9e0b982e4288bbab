// A stand-in S3 server (the `s3rver` package) on 127.0.0.1 and an ephemeral port, with one
// bucket, for the `s3` object store's tests. s3rver does not verify SigV4 signatures and has no
// ListParts or AbortMultipartUpload, so those are checked on the URLs or not at all; with
// `listParts`, a small proxy in front of it answers ListParts from the parts s3rver keeps on disk
// (so separate marketplace processes can run multipart uploads against it).
import { createRequire } from 'node:module';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
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

export async function startS3rver(bucket = 'mkt-blobs', opts: { listParts?: boolean } = {}): Promise<StandInS3> {
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor;
  const dir = tempDir('mkt-s3rver-');
  const srv = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir.path, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = await srv.run();
  const proxy = opts.listParts ? await listPartsProxy(port, join(dir.path, bucket, '._S3rver_uploads')) : undefined;
  return {
    endpoint: `http://127.0.0.1:${proxy ? (proxy.address() as { port: number }).port : port}`,
    bucket,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    async close() {
      if (proxy) await new Promise<void>((r) => proxy.close(() => r()));
      await srv.close();
      dir.remove();
    },
  };
}

/** Stored parts of an upload as s3rver keeps them: `<n>` and, once the part is whole, `<n>.md5`. */
async function storedParts(uploads: string, uploadId: string): Promise<{ n: number; size: number; etag: string; at: Date }[]> {
  if (!/^[A-Za-z0-9._-]+$/.test(uploadId)) return [];
  const up = join(uploads, uploadId);
  const names = await readdir(up).catch(() => [] as string[]);
  const parts = [];
  for (const name of names.filter((x) => /^\d+$/.test(x))) {
    const md5 = await readFile(join(up, `${name}.md5`), 'utf8').catch(() => undefined);
    if (md5 === undefined) continue;
    const st = await stat(join(up, name));
    parts.push({ n: Number(name), size: st.size, etag: `"${md5.trim()}"`, at: st.mtime });
  }
  return parts.sort((a, b) => a.n - b.n);
}

/** Forwards everything to s3rver except ListParts (GET with uploadId, no partNumber), answered here. */
async function listPartsProxy(target: number, uploads: string): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const uploadId = url.searchParams.get('uploadId');
    if (req.method === 'GET' && uploadId && !url.searchParams.has('partNumber')) {
      void storedParts(uploads, uploadId).then((parts) => {
        const [, bucket = '', ...key] = url.pathname.split('/');
        const xml =
          '<?xml version="1.0" encoding="UTF-8"?><ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
          `<Bucket>${bucket}</Bucket><Key>${key.join('/')}</Key><UploadId>${uploadId}</UploadId><MaxParts>10000</MaxParts><IsTruncated>false</IsTruncated>` +
          parts.map((p) => `<Part><PartNumber>${p.n}</PartNumber><LastModified>${p.at.toISOString()}</LastModified><ETag>${p.etag.replaceAll('"', '&quot;')}</ETag><Size>${p.size}</Size></Part>`).join('') +
          '</ListPartsResult>';
        res.writeHead(200, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) });
        res.end(xml);
      });
      return;
    }
    const upstream = httpRequest({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}
