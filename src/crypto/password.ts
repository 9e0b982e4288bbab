// Password hashes for marketplace users: scrypt (memory-hard, node:crypto), self-describing
// `scrypt$N$r$p$salt$hash` strings, verified in constant time.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const N = 1 << 15;
const R = 8;
const P = 1;
const KEYLEN = 32;

function scrypt(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  const opts: ScryptOptions = { N: n, r, p, maxmem: 256 * n * r + 16 * 1024 * 1024 };
  return new Promise((resolve, reject) => scryptCb(password.normalize('NFC'), salt, KEYLEN, opts, (err, key) => (err ? reject(err) : resolve(key))));
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** False for a wrong password or an unreadable hash (never throws on bad input). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (![n, r, p].every((x) => Number.isInteger(x) && x > 0) || n > 1 << 20) return false;
  const expected = Buffer.from(parts[5]!, 'base64');
  const key = await scrypt(password, Buffer.from(parts[4]!, 'base64'), n, r, p);
  return expected.length === key.length && timingSafeEqual(expected, key);
}

let dummy: Promise<string> | undefined;
/** A hash to verify against when the user is unknown, so both failures cost the same time. */
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'));
  return dummy;
}
