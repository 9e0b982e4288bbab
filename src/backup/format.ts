// The backup file's format (docs/backup.md): a tar whose members are `data/<path>` for the data
// dir's files and directories, then MANIFEST.json (every member's type, size, mode and SHA-256),
// then MANIFEST.sha256 (the manifest's own digest). Shared by create, verify and restore.
import { isAbsolute } from 'node:path';

export const FORMAT = 'mkt-backup';
export const FORMAT_VERSION = 1;
/** Every data member's name starts with this. */
export const DATA_PREFIX = 'data';
export const MANIFEST_NAME = 'MANIFEST.json';
export const MANIFEST_DIGEST_NAME = 'MANIFEST.sha256';

export const SERVICES = ['marketplace', 'monitor', 'tickets'] as const;
export type BackupService = (typeof SERVICES)[number];

/** The SQLite database file each service keeps in its data dir. */
export const SERVICE_DATABASE: Record<BackupService, string> = {
  marketplace: 'marketplace.db',
  monitor: 'monitor.db',
  tickets: 'tickets.db',
};

export interface ManifestMember {
  path: string;
  type: 'file' | 'dir';
  /** Permission bits as four octal digits ("0600"). */
  mode: string;
  size: number;
  /** Files only. */
  sha256?: string;
  /** What the file is, when it was taken specially: an SQLite database (online backup API), a git repository's synthesised packed-refs. */
  kind?: 'sqlite' | 'git-refs';
}

export interface Manifest {
  format: typeof FORMAT;
  version: number;
  service: BackupService;
  created_at: string;
  mkt_version: string;
  /** What this backup does not hold, in words (the PostgreSQL database). */
  not_included: string[];
  /** The SQLite databases (data-relative paths). */
  databases: string[];
  /** The git repositories (data-relative paths of their directories). */
  repositories: string[];
  members: ManifestMember[];
}

export const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

export const modeText = (mode: number): string => (mode & 0o7777).toString(8).padStart(4, '0');

/**
 * Why a member name may not be written under a restore target, or undefined when it is safe: it
 * must be `data` or `data/<relative path>` with no empty, `.` or `..` segment, no backslash or
 * NUL, never absolute. (Links and devices never get this far: the tar reader refuses them.)
 */
export function unsafeMemberName(name: string): string | undefined {
  if (name === DATA_PREFIX) return undefined;
  if (isAbsolute(name) || name.startsWith('/')) return 'an absolute path';
  if (name.includes('\0') || name.includes('\\')) return 'a NUL or backslash in the name';
  const parts = name.split('/');
  if (parts[0] !== DATA_PREFIX) return `a name outside ${DATA_PREFIX}/`;
  if (parts.slice(1).some((p) => p === '' || p === '.' || p === '..')) return 'an empty, "." or ".." path segment';
  return undefined;
}

/** The manifest's parse: a readable error for anything but the shape create writes. */
export function parseManifest(text: string): Manifest {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    throw new Error('MANIFEST.json is not valid JSON');
  }
  const o = m as Partial<Manifest>;
  if (!o || typeof o !== 'object' || o.format !== FORMAT) throw new Error(`MANIFEST.json is not an ${FORMAT} manifest`);
  if (o.version !== FORMAT_VERSION) throw new Error(`MANIFEST.json has format version ${String(o.version)}; this mkt reads version ${FORMAT_VERSION}`);
  if (!SERVICES.includes(o.service as BackupService)) throw new Error(`MANIFEST.json names an unknown service ${JSON.stringify(o.service)}`);
  if (!Array.isArray(o.members) || !Array.isArray(o.databases) || !Array.isArray(o.repositories) || !Array.isArray(o.not_included)) throw new Error('MANIFEST.json lacks its member list');
  return o as Manifest;
}
