// Shared by the sync blob, multipart and billing tests: a signed-in user on a real marketplace,
// raw HTTP PUT/GET to pre-signed URLs, and SHA-256 helpers.
import { createHash, randomBytes } from 'node:crypto';
import { startSyncServer, type SyncServer } from '../../helpers/sync-server.js';
import type { MarketplaceOptions } from '../../../daemon/services/marketplace/options.js';

export interface BlobEnv {
  srv: SyncServer;
  appId: string;
  apiKey: string;
  token: string;
  userId: string;
  /** A second user of the same app. */
  otherToken: string;
}

export async function blobEnv(opts: { flags?: MarketplaceOptions; pricing?: Record<string, number> } = {}): Promise<BlobEnv> {
  const srv = await startSyncServer({ flags: opts.flags });
  const app = await srv.createApp('Notes App', opts.pricing);
  const userId = await srv.addUser('ada', 'ada@example.com', 'correct horse battery');
  await srv.addUser('bob', 'bob@example.com', 'another good password');
  const token = await srv.signIn(app.apiKey, 'ada@example.com', 'correct horse battery');
  const otherToken = await srv.signIn(app.apiKey, 'bob@example.com', 'another good password');
  return { srv, appId: app.id, apiKey: app.apiKey, token, userId, otherToken };
}

export const sha256hex = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
export const sha256b64 = (b: Buffer): string => createHash('sha256').update(b).digest('base64');
export const randomHash = (): string => sha256hex(randomBytes(32));

export async function put(url: string, body: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; etag: string | null; error?: string }> {
  const res = await fetch(url, { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream', ...headers } });
  const text = await res.text();
  let error: string | undefined;
  try {
    error = text ? (JSON.parse(text) as { error?: string }).error : undefined;
  } catch {
    error = text;
  }
  return { status: res.status, etag: res.headers.get('etag'), error };
}

export async function get(url: string): Promise<{ status: number; body: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}
