// The offline side of `mkt license`: a stable machine fingerprint, the token cache (user cache
// directory) and the offline check against pinned keys. Kept free of HTTP and CLI modules so
// that `mkt license check` starts fast and needs no network at all.
import { createHmac } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from '../config/paths.js';
import { tokenHeader, verifyLicenseToken, type TokenFailure } from '../crypto/license-token.js';
import { fingerprintHash, type Jwks } from '../crypto/signing.js';
import type { PinnedKey } from './license-trust.js';

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
  /** What the server published when the token was saved: informational, never trusted by `check`. */
  jwks?: Jwks;
  saved_at: string;
}

export function tokenDir(env: NodeJS.ProcessEnv): string {
  return join(cacheDir(env), 'license');
}

function safeName(item: string): string {
  return item.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** Saves the token for `item` (0600: the token is a bearer proof of a license). */
export function saveToken(env: NodeJS.ProcessEnv, entry: CachedToken): string {
  const dir = tokenDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${safeName(entry.item)}.json`);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(entry, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
  return file;
}

export type LoadResult = { ok: true; entry: CachedToken; file: string } | { ok: false; error: string; usage?: boolean; malformed?: boolean };

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
    const entry = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    // A hand-edited cache file is input like any other: a wrong shape is a failed check, not a crash.
    if (typeof entry !== 'object' || entry === null || typeof (entry as CachedToken).token !== 'string' || typeof (entry as CachedToken).item !== 'string') {
      return { ok: false, malformed: true, error: `${file} is not a stored license token; run \`mkt license verify\` again` };
    }
    return { ok: true, entry: entry as CachedToken, file };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ok: false, error: `no stored license token for item ${item}; run \`mkt license verify\` first` };
    return { ok: false, error: `cannot read ${file}: ${(err as Error).message}` };
  }
}

export type OfflineCode =
  | 'VALID'
  | 'NO_TOKEN'
  | 'MALFORMED_TOKEN'
  | 'UNKNOWN_KEY'
  | 'BAD_SIGNATURE'
  | 'WRONG_ISSUER'
  | 'WRONG_TYPE'
  | 'NOT_YET_VALID'
  | 'TOKEN_EXPIRED'
  | 'ITEM_MISMATCH'
  | 'MACHINE_MISMATCH'
  | 'ENTITLEMENT_MISSING';

export interface OfflineResult {
  valid: boolean;
  code: OfflineCode;
  error: string | null;
  item: string | null;
  license: string | null;
  expires_at: string | null;
  /** The token's `entitlements` claim (issue 33); null when the signature did not verify or an older token has none. */
  entitlements: string[] | null;
}

/** What the token must match: everything here comes from the caller, nothing from the cache. */
export interface OfflineExpectation {
  keys: PinnedKey[];
  issuer: string;
  item: string;
  fingerprint: string;
  nowMs: number;
  /** Entitlement names the license must carry (`mkt license check --entitlement`). */
  entitlements?: readonly string[];
}

/** An entitlement name (issue 33): lower-case letters, digits, `.`, `_`, `-`; at most 64 characters. */
export const ENTITLEMENT_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** The `iss` the marketplace signs by default (its `--license-issuer` / $MKT_LICENSE_ISSUER). */
export const DEFAULT_ISSUER = 'mkt-marketplace';
/** The header `typ` of the marketplace's license tokens. */
const TOKEN_TYPE = 'JWT';
/** The token lifetime the server grants (spec: 7 days); an older `iat` is expired whatever `exp` says. */
const TOKEN_LIFETIME_SECONDS = 7 * 24 * 3600;
/** Clock skew forgiven between the signing server and this machine, for exp, nbf and iat. */
export const CLOCK_TOLERANCE_SECONDS = 60;
const CLAIMS = ['iss', 'sub', 'license', 'item', 'fph', 'iat', 'exp'];

type Failure = { code: OfflineCode; error: string };

/** Maps a verifier's refusal to our code: only the signature failing lets another key try. */
function failureOf(f: TokenFailure): Failure | 'bad-signature' {
  switch (f.kind) {
    case 'bad-signature':
      return 'bad-signature';
    case 'alg-not-allowed':
      return { code: 'MALFORMED_TOKEN', error: 'the token is not signed with EdDSA' };
    case 'malformed':
      return { code: 'MALFORMED_TOKEN', error: 'the token is not a well-formed signed JWT' };
    case 'claim':
      if (f.expired) return { code: 'TOKEN_EXPIRED', error: f.claim === 'iat' ? `the token was issued more than ${TOKEN_LIFETIME_SECONDS / 86400} days ago` : 'the token has expired' };
      if (f.claim === 'iss' && f.reason === 'check_failed') return { code: 'WRONG_ISSUER', error: 'the token was issued by another issuer' };
      if (f.claim === 'typ') return { code: 'WRONG_TYPE', error: 'the token is not a license token (header typ)' };
      if ((f.claim === 'nbf' || f.claim === 'iat') && f.reason === 'check_failed') {
        return { code: 'NOT_YET_VALID', error: "the token is not valid yet (issued in the future: check this machine's clock)" };
      }
      return { code: 'MALFORMED_TOKEN', error: `the token claims are not a license token's (${f.claim} ${f.reason})` };
  }
}

function fail(f: Failure, item: string | null = null): OfflineResult {
  return { valid: false, code: f.code, error: f.error, item, license: null, expires_at: null, entitlements: null };
}

/**
 * Checks a cached token with no network, against pinned keys only: EdDSA signature, issuer,
 * token type and claims, not before / issued at / expiry (with a small clock tolerance), the
 * expected item, and this machine's fingerprint.
 */
export function checkToken(entry: Pick<CachedToken, 'token'>, expect: OfflineExpectation): OfflineResult {
  const header = tokenHeader(entry.token);
  if (!header) return fail({ code: 'MALFORMED_TOKEN', error: 'the token is not a well-formed signed JWT' });
  const kid = header.kid;
  // A kid names a pinned key; a pinned key without kid (PEM) may have signed any token.
  const candidates = expect.keys.filter((k) => k.kid === undefined || k.kid === kid);
  if (candidates.length === 0) return fail({ code: 'UNKNOWN_KEY', error: `no pinned public key has the token's kid ${JSON.stringify(kid ?? null)}` });
  const rules = { typ: TOKEN_TYPE, issuer: expect.issuer, requiredClaims: CLAIMS, maxTokenAgeSeconds: TOKEN_LIFETIME_SECONDS, clockToleranceSeconds: CLOCK_TOLERANCE_SECONDS, nowMs: expect.nowMs };
  for (const { key } of candidates) {
    const verdict = verifyLicenseToken(entry.token, key, rules);
    if (!verdict.ok) {
      const f = failureOf(verdict.failure);
      if (f === 'bad-signature') continue;
      return fail(f);
    }
    const { item, license, sub, fph, exp, entitlements } = verdict.claims;
    if (typeof item !== 'string' || typeof license !== 'string' || sub !== license || typeof fph !== 'string') {
      return fail({ code: 'MALFORMED_TOKEN', error: "the token claims are not a license token's (item, license, sub, fph)" });
    }
    // Tokens signed before issue 33 carry no entitlements: they grant none.
    if (entitlements !== undefined && !(Array.isArray(entitlements) && entitlements.every((e) => typeof e === 'string'))) {
      return fail({ code: 'MALFORMED_TOKEN', error: 'the token claim entitlements is not a list of names' });
    }
    const granted = entitlements === undefined ? null : (entitlements as string[]);
    const base = { item, license, expires_at: new Date(Number(exp) * 1000).toISOString(), entitlements: granted };
    if (item !== expect.item) return { valid: false, code: 'ITEM_MISMATCH', error: `the token licenses item ${JSON.stringify(item)}, not ${JSON.stringify(expect.item)}`, ...base };
    if (fph !== fingerprintHash(expect.fingerprint)) return { valid: false, code: 'MACHINE_MISMATCH', error: 'the token was issued for another machine', ...base };
    const missing = (expect.entitlements ?? []).filter((name) => !(granted ?? []).includes(name));
    if (missing.length > 0) {
      return { valid: false, code: 'ENTITLEMENT_MISSING', error: `the license lacks the entitlement${missing.length === 1 ? '' : 's'} ${missing.join(', ')}`, ...base };
    }
    return { valid: true, code: 'VALID', error: null, ...base };
  }
  return fail({ code: 'BAD_SIGNATURE', error: 'the token signature does not verify with the pinned public keys' });
}
