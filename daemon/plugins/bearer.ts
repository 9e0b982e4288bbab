// Static secrets (the monitor's and the tickets' shared tokens) compared in constant time;
// parsing the header that carries them is auth.ts's job.
import { createHash, timingSafeEqual } from 'node:crypto';

/** Compares two secrets in time independent of where they differ (hashing equalises length). */
export function constantTimeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

/**
 * The code units a matcher's array holds at least, whatever the secret: for every secret up to this
 * long (all that are configured in practice), the array, and so the check's memory reads, are the same.
 */
const MIN_CAPACITY = 4096;

/**
 * A checker for one configured secret, for the hot paths that check it at every request (the
 * tickets' lane, the monitor's pings). It compares code units directly, with no hash: the secret
 * sits at the start of a zero-filled array whose size is a power of two (4096 code units, more
 * only for a longer secret), and the loop runs over the presented token's length, reading the
 * array at `i & mask` and XORing every pair into one accumulator, with the two lengths XORed in
 * too. So the time depends on the presented token alone: neither on where it differs from the
 * secret, nor on the secret's length, and nothing branches on either. It replaced a SHA-256 of
 * the presented token, which evened out the lengths at 0.4-0.5 µs a check (bench/README.md, "The
 * token's check without a hash, issue 37"). `from` skips a prefix (`Bearer `) without a slice.
 */
export function secretMatcher(secret: string): (presented: string, from?: number) => boolean {
  let capacity = MIN_CAPACITY;
  while (capacity < secret.length) capacity *= 2;
  const mask = capacity - 1;
  const codes = new Uint16Array(capacity);
  for (let i = 0; i < secret.length; i++) codes[i] = secret.charCodeAt(i);
  const length = secret.length;
  return (presented, from = 0) => {
    const m = presented.length - from;
    let diff = m ^ length;
    for (let i = 0; i < m; i++) diff |= presented.charCodeAt(from + i) ^ codes[i & mask]!;
    return diff === 0;
  };
}
