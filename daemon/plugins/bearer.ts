// Bearer tokens: parsing the Authorization header and comparing in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';

/** Compares two secrets in time independent of where they differ (hashing equalises length). */
export function constantTimeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

/**
 * A checker for one configured secret: its hash is computed once, so each request hashes
 * only the presented token before the constant-time comparison.
 */
export function secretMatcher(secret: string): (presented: string) => boolean {
  const expected = createHash('sha256').update(secret, 'utf8').digest();
  return (presented) => timingSafeEqual(createHash('sha256').update(presented, 'utf8').digest(), expected);
}

export type BearerParse = { kind: 'missing' } | { kind: 'malformed' } | { kind: 'token'; token: string };

/** Reads `Authorization: Bearer <token>`; `schemes` lists accepted scheme words. */
export function parseAuthorization(header: string | undefined, schemes: string[] = ['Bearer']): BearerParse {
  if (header === undefined || header === '') return { kind: 'missing' };
  for (const scheme of schemes) {
    const prefix = `${scheme} `;
    if (header.length > prefix.length && header.slice(0, prefix.length).toLowerCase() === prefix.toLowerCase()) {
      return { kind: 'token', token: header.slice(prefix.length).trim() };
    }
  }
  return { kind: 'malformed' };
}
