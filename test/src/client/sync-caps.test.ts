// The sync client's answer caps (issue 28, finding 2): the object store's own answers to an
// upload are an ETag or an error, read up to 1 MiB; a changelog page may legitimately pass the
// HTTP client's 64 MiB default and gets 256 MiB. Real HTTP on 127.0.0.1.
import { describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { DEFAULT_MAX_RESPONSE_BYTES, HttpClient, ResponseTooLargeError } from '../../../src/client/http.js';
import { putToSignedUrl, SyncClient } from '../../../src/client/sync.js';
import { putStreamToSignedUrl } from '../../../src/client/signed-put.js';
import { listenLocal, type Bin } from '../../helpers/local-http.js';

const MiB = 1024 * 1024;

async function serve(bin: Bin, answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    // The request body is drained first, as an object store does.
    req.resume();
    req.once('end', () => answer(req, res));
  });
  return listenLocal(server, bin);
}

describe('sync client: answer caps', () => {
  it.concurrent('an object store answering an upload with 16 MiB is refused at 1 MiB', async ({ onTestFinished: bin }) => {
    const url = await serve(bin, (_req, res) => {
      res.writeHead(200, { etag: '"e"' });
      res.end(Buffer.alloc(16 * MiB, 'x'));
    });
    const err = await putToSignedUrl(`${url}/bucket/blob?sig=secret`, Buffer.from('ciphertext')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect((err as Error).message).toMatch(/larger than 1048576 bytes/);
    // The signature in the query string is not repeated in the message.
    expect((err as Error).message).not.toContain('secret');
  });

  it.concurrent('a changelog page above the 64 MiB default is read (pages may legitimately be large)', async ({ onTestFinished: bin }) => {
    const pad = 'x'.repeat(DEFAULT_MAX_RESPONSE_BYTES + MiB);
    const url = await serve(bin, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ entries: [{ seq: 1, key_id: 1, device_id: null, table: 't', op: 'insert', row_id: 'r', timestamp: 'x', data: pad }], cursor: 1, has_more: false }));
    });
    const page = await new SyncClient(new HttpClient({ baseUrl: url, timeoutMs: 60_000 })).pull({ cursor: 0 });
    expect((page.entries[0]!.data as string).length).toBe(pad.length);
  }, 60_000);
});

describe('streamed part upload: the object store\'s answer is capped', () => {
  it.concurrent('a store answering a part upload with 16 MiB is refused at 1 MiB', async ({ onTestFinished: bin }) => {
    const url = await serve(bin, (_req, res) => {
      res.writeHead(200, { etag: '"e"' });
      res.end(Buffer.alloc(16 * MiB, 'x'));
    });
    const body = Buffer.from('ciphertext');
    const err = await putStreamToSignedUrl(`${url}/bucket/part?sig=secret`, { length: body.length, body: [body] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect((err as Error).message).toMatch(/larger than 1048576 bytes/);
    expect((err as Error).message).not.toContain('secret');
  });
});
