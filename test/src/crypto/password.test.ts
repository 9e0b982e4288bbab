// Password hashes (scrypt, self-describing strings): the right password verifies, wrong ones and
// unreadable hashes do not (never throwing), and the dummy hash serves unknown users.
import { describe, expect, it } from 'vitest';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../../../src/crypto/password.js';

describe('password hashes', () => {
  it('verify the password they were made from, salted differently each time', async () => {
    const h = await hashPassword('correct horse');
    expect(h).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]+=*$/);
    expect(await verifyPassword('correct horse', h)).toBe(true);
    expect(await verifyPassword('correct horsE', h)).toBe(false);
    expect(await hashPassword('correct horse')).not.toBe(h);
    // Unicode normalisation: the composed and decomposed forms are one password.
    expect(await verifyPassword('cafe\u0301', await hashPassword('caf\u00e9'))).toBe(true);
  });

  it('answer false for unreadable or hostile hashes', async () => {
    expect(await verifyPassword('x', '')).toBe(false);
    expect(await verifyPassword('x', 'bcrypt$whatever')).toBe(false);
    expect(await verifyPassword('x', 'scrypt$0$8$1$AAAA$AAAA')).toBe(false);
    expect(await verifyPassword('x', `scrypt$${2 ** 22}$8$1$AAAA$AAAA`)).toBe(false);
  });

  it('the dummy hash is one hash that no guess is likely to match', async () => {
    const d = await dummyPasswordHash();
    expect(await dummyPasswordHash()).toBe(d);
    expect(await verifyPassword('', d)).toBe(false);
    expect(await verifyPassword('password', d)).toBe(false);
  });
});
