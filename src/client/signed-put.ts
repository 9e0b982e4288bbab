// Streams one PUT to a pre-signed object-store URL (a multipart part) from reusable buffers over
// node:http, handing each buffer back as soon as the kernel has taken its bytes: the sender
// recycles memory while the store is still reading, instead of when it answers. No bearer token.
import { request as httpRequest, Agent as HttpAgent, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import { ApiError, NetworkError, readCapped } from './http.js';
import { objectStoreError } from './sync.js';

export interface SignedPut {
  /** Exact body length (the URL was signed for it). */
  length: number;
  /** Base64 SHA-256 of the body, sent when the URL was signed with one. */
  checksum?: string;
  /** The body in order; a buffer may be reused once `flushed` has been called with it. */
  body: AsyncIterable<Buffer> | Iterable<Buffer>;
  flushed?: (b: Buffer) => void;
  /** Abandons the request when no byte moves for this long. */
  idleTimeoutMs?: number;
}

// Keep-alive connections from one part to the next, as undici's pool did.
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/** PUTs the body; resolves with the ETag. */
export async function putStreamToSignedUrl(url: string, put: SignedPut): Promise<string> {
  const u = new URL(url);
  const tls = u.protocol === 'https:';
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream', 'content-length': String(put.length) };
  if (put.checksum) headers['x-amz-checksum-sha256'] = put.checksum;
  const req = (tls ? httpsRequest : httpRequest)(u, { method: 'PUT', headers, agent: tls ? agents.https : agents.http });
  const timeoutMs = put.idleTimeoutMs ?? 120_000;
  let failure: Error | undefined;
  const failed = new Promise<never>((_, reject) => {
    const fail = (err: Error): void => {
      failure ??= err;
      reject(failure);
    };
    req.on('error', (err: NodeJS.ErrnoException) => fail(new NetworkError(`cannot reach the object store: ${err.code ?? err.message}`, err)));
    req.setTimeout(timeoutMs, () => {
      fail(new NetworkError(`the object store stalled for ${timeoutMs / 1000} s`));
      req.destroy();
    });
  });
  // Nobody may be waiting on `failed` when it rejects (the body is still being sent).
  failed.catch(() => undefined);
  const response = new Promise<IncomingMessage>((resolve) => req.on('response', resolve));
  try {
    // A store that answers before reading the whole body (a refusal) ends the sending.
    await Promise.race([sendBody(req, put), response, failed]);
    const res = await Promise.race([response, failed]);
    // The store's answer is an ETag or an error: capped, like every answer (src/client/http.ts).
    const text = await Promise.race([readCapped(res, 1024 * 1024, `PUT to the object store at ${u.host}`, res.headers['content-length']), failed]);
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw new ApiError(status, `object store refused the upload: ${objectStoreError(text) ?? `HTTP ${status}`}`, text);
    const etag = res.headers.etag;
    return (Array.isArray(etag) ? etag[0] : etag) ?? '';
  } catch (err) {
    req.destroy();
    throw err;
  }
}

/** Writes every buffer, waiting for the socket to drain whenever it asks to. */
async function sendBody(req: ClientRequest, put: SignedPut): Promise<void> {
  let sent = 0;
  for await (const b of put.body) {
    sent += b.length;
    if (sent > put.length) throw new RangeError(`the body is longer than the ${put.length} bytes signed for`);
    // The callback runs once these bytes are in the kernel (or the request failed).
    const more = req.write(b, () => put.flushed?.(b));
    if (!more) await new Promise<void>((resolve) => req.once('drain', resolve));
  }
  if (sent !== put.length) throw new RangeError(`the body is ${sent} bytes, ${put.length} were signed for`);
  req.end();
}
