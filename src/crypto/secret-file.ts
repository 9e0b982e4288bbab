// Server secrets kept in the data dir: 32 random bytes as base64url text in a 0600 file,
// created on first use; when two processes (the server and `mkt admin`) race to create it,
// both end up with the one that was written first. Or read from a file the operator provisions.
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
  // Written whole under a private name, then linked into place: link() fails when the name
  // exists, so of instances starting together one wins, and none ever reads a half-written file.
  const staged = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(staged, secret.toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
  try {
    linkSync(staged, file);
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return read();
    throw err;
  } finally {
    rmSync(staged, { force: true });
  }
}

/**
 * A secret the operator provisions at `file` (a systemd credential, a mounted secret, a file on
 * the shared volume) so every instance signs with the same one: 32 raw bytes or their base64(url)
 * text, never created here, and refused while group or others may read or write it (as the 0600
 * files above are made).
 */
export function readProvisionedSecretFile(file: string, what: string): Buffer {
  let st;
  try {
    st = statSync(file);
  } catch (err) {
    throw new Error(`${what} ${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (!st.isFile()) throw new Error(`${what} ${file} is not a file`);
  if ((st.mode & 0o077) !== 0) throw new Error(`${what} ${file} is open to group or others (mode ${(st.mode & 0o777).toString(8)}); make it 0600 or 0400`);
  const raw = readFileSync(file);
  // Exactly 32 bytes is the raw form (`head -c 32 /dev/urandom > FILE`): as text it would be 43 characters.
  if (raw.length === SECRET_BYTES) return raw;
  const secret = Buffer.from(raw.toString('utf8').trim(), 'base64url');
  if (secret.length !== SECRET_BYTES) throw new Error(`${what} ${file} does not hold a ${SECRET_BYTES}-byte secret (32 raw bytes, or their base64 text)`);
  return secret;
}
