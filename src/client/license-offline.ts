// The offline side of `mkt license`: a stable machine fingerprint, the token cache (token and
// JWKS in the user cache directory) and the offline check. Kept free of HTTP and CLI modules
// so that `mkt license check` starts fast and needs no network at all.
import { createHmac } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from '../config/paths.js';
import { fingerprintHash, verifyJwt, type Jwks } from '../crypto/signing.js';

/** The operating system's machine id (not sent anywhere as is). */
function osMachineId(): string | undefined {
  for (const f of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    try {
      const id = readFileSync(f, 'utf8').trim();
      if (id) return id;
    } catch {
      // try the next source
    }
  }
  // child_process is loaded only where it is needed: on Linux it would cost start-up time.
  const execFileSync = (cmd: string, args: string[]): string =>
    (process.getBuiltinModule('node:child_process') as typeof import('node:child_process')).execFileSync(cmd, args, { encoding: 'utf8', timeout: 5000 });
  try {
    if (process.platform === 'darwin') {
      const out = execFileSync('ioreg', ['-rd1', '-c', 'IOPlatformExpertDevice']);
      return /"IOPlatformUUID" = "([^"]+)"/.exec(out)?.[1];
    }
    if (process.platform === 'win32') {
      const out = execFileSync('reg', ['query', 'HKLM\\SOFTWARE\\Microsoft\\Cryptography', '/v', 'MachineGuid']);
      return /MachineGuid\s+REG_SZ\s+(\S+)/.exec(out)?.[1];
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * `--machine auto`: an application-specific fingerprint derived from the machine id (as
 * systemd's sd_id128_get_machine_app_specific does), stable across runs and not the raw id.
 */
export function machineFingerprint(): string | undefined {
  const id = osMachineId();
  return id ? createHmac('sha256', id).update('mkt-license-fingerprint').digest('hex') : undefined;
}

export interface CachedToken {
  server: string;
  item: string;
  license: string;
  token: string;
  jwks: Jwks;
  saved_at: string;
}

export function tokenDir(env: NodeJS.ProcessEnv): string {
  return join(cacheDir(env), 'license');
}

function safeName(item: string): string {
  return item.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** Saves the token and the JWKS for `item` (0600: the token is a bearer proof of a license). */
export function saveToken(env: NodeJS.ProcessEnv, entry: CachedToken): string {
  const dir = tokenDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${safeName(entry.item)}.json`);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(entry, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
  return file;
}

export type LoadResult = { ok: true; entry: CachedToken; file: string } | { ok: false; error: string; usage?: boolean };

/** The cached token for `item`, or the only one cached when no item is named. */
export function loadToken(env: NodeJS.ProcessEnv, item: string | undefined): LoadResult {
  const dir = tokenDir(env);
  let file: string;
  if (item !== undefined) file = join(dir, `${safeName(item)}.json`);
  else {
    let names: string[] = [];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith('.json'));
    } catch {
      names = [];
    }
    if (names.length === 0) return { ok: false, error: 'no stored license token; run `mkt license verify` first' };
    if (names.length > 1) return { ok: false, usage: true, error: `several license tokens are stored (${names.map((n) => n.slice(0, -5)).join(', ')}); pass --item` };
    file = join(dir, names[0]!);
  }
  try {
    return { ok: true, entry: JSON.parse(readFileSync(file, 'utf8')) as CachedToken, file };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ok: false, error: `no stored license token for item ${item}; run \`mkt license verify\` first` };
    return { ok: false, error: `cannot read ${file}: ${(err as Error).message}` };
  }
}

export type OfflineCode = 'VALID' | 'NO_TOKEN' | 'MALFORMED_TOKEN' | 'UNKNOWN_KEY' | 'BAD_SIGNATURE' | 'TOKEN_EXPIRED' | 'MACHINE_MISMATCH';

export interface OfflineResult {
  valid: boolean;
  code: OfflineCode;
  error: string | null;
  item: string | null;
  license: string | null;
  expires_at: string | null;
}

/** Checks a cached token with no network: signature (stored JWKS), expiry, and this machine. */
export function checkToken(entry: CachedToken, fingerprint: string, nowMs: number): OfflineResult {
  const r = verifyJwt(entry.token, entry.jwks, nowMs);
  if (!r.ok) return { valid: false, code: r.code, error: r.error, item: entry.item, license: entry.license, expires_at: null };
  const c = r.claims;
  const base = { item: String(c.item), license: String(c.license), expires_at: new Date(Number(c.exp) * 1000).toISOString() };
  if (c.fph !== fingerprintHash(fingerprint)) {
    return { valid: false, code: 'MACHINE_MISMATCH', error: 'the token was issued for another machine', ...base };
  }
  return { valid: true, code: 'VALID', error: null, ...base };
}
