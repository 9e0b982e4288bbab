// Pre-signed object URLs (S3-style query signing, HMAC-SHA256): the method, object key,
// expiry, exact Content-Length and optional SHA-256 checksum are bound into the signature.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface UrlGrant {
  method: 'GET' | 'PUT';
  /** Object key, for example `<app>/<user>/<hash>` or `<upload>/part-3`. */
  key: string;
  /** Unix seconds. */
  expires: number;
  /** PUT only: the exact body length the store accepts. */
  length?: number;
  /** PUT only: base64 SHA-256 of the body, checked while writing. */
  checksum?: string;
}

function canonical(g: UrlGrant): string {
  return [g.method, g.key, String(g.expires), g.length === undefined ? '' : String(g.length), g.checksum ?? ''].join('\n');
}

/** The query string (`X-Mkt-*` parameters) of a signed URL for the grant. */
export function signGrant(secret: Buffer, g: UrlGrant): string {
  const q = new URLSearchParams({ 'X-Mkt-Method': g.method, 'X-Mkt-Expires': String(g.expires) });
  if (g.length !== undefined) q.set('X-Mkt-Length', String(g.length));
  if (g.checksum !== undefined) q.set('X-Mkt-Checksum', g.checksum);
  q.set('X-Mkt-Signature', createHmac('sha256', secret).update(canonical(g)).digest('hex'));
  return q.toString();
}

export type GrantCheck = { ok: true; grant: UrlGrant } | { ok: false; status: 403; reason: string };

/** Checks a signed request for `key` with the given method and query parameters. */
export function verifyGrant(secret: Buffer, method: string, key: string, query: Record<string, string | undefined>, nowSeconds: number): GrantCheck {
  const sig = query['X-Mkt-Signature'];
  const expires = Number(query['X-Mkt-Expires']);
  if (!sig || query['X-Mkt-Method'] !== method || !Number.isInteger(expires)) return { ok: false, status: 403, reason: 'missing or malformed signature' };
  const length = query['X-Mkt-Length'] === undefined ? undefined : Number(query['X-Mkt-Length']);
  const g: UrlGrant = { method: method as UrlGrant['method'], key, expires, length, checksum: query['X-Mkt-Checksum'] };
  const expected = createHmac('sha256', secret).update(canonical(g)).digest();
  const given = Buffer.from(sig, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, status: 403, reason: 'signature does not match' };
  if (expires < nowSeconds) return { ok: false, status: 403, reason: 'the signed URL has expired' };
  return { ok: true, grant: g };
}
