// Server secrets kept in the data dir: 32 random bytes as base64url text in a 0600 file,
// created on first use; when two processes (the server and `mkt admin`) race to create it,
// both end up with the one that was written first.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SECRET_BYTES = 32;

export function loadSecretFile(dataDir: string, name: string): Buffer {
  const file = join(dataDir, name);
  const read = (): Buffer => {
    const secret = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
    if (secret.length !== SECRET_BYTES) throw new Error(`${file} does not hold a ${SECRET_BYTES}-byte secret`);
    return secret;
  };
  try {
    return read();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(SECRET_BYTES);
  try {
    writeFileSync(file, secret.toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return read();
    throw err;
  }
}
