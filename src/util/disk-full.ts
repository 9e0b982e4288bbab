// Recognising a full disk, wherever it surfaces (SQLite's SQLITE_FULL, Node's ENOSPC, git's "No
// space left on device"), and the one error every service answers it with: 507 on the
// marketplace and the monitor, the spec's 500 on tickets, always a text that says what failed and
// what the operator does about it.
import { statfsSync } from 'node:fs';

/** What the operator does about it: the same words in every answer and log line. */
const REMEDY = "free space on the data directory's file system and retry";

/** The error a write that met a full disk ends with: 507 Insufficient Storage, shown as is. */
export class DiskFullError extends Error {
  readonly statusCode = 507;
  readonly expose = true;
  readonly code = 'MKT_DISK_FULL';
  /** `what` says which operation failed ("writing a notes pack", "a monitor ping"). */
  constructor(
    readonly what: string,
    options?: { cause?: unknown },
  ) {
    super(`the disk is full: ${what}; ${REMEDY}`, options);
    this.name = 'DiskFullError';
  }
}

/** git and the C library say it this way (LC_ALL=C, which every git child gets: src/git/run.ts). */
const NO_SPACE = /No space left on device|ENOSPC|database or disk is full/i;

/**
 * Whether `err` (an error, a git stderr text, or an error whose `cause` is one of those) means
 * the disk is full. better-sqlite3 reports SQLITE_FULL (and, on some paths, an I/O error whose
 * text carries ENOSPC); Node's fs reports code ENOSPC; git's stderr says "No space left on device".
 */
export function isDiskFull(err: unknown): boolean {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    if (typeof e === 'string') return NO_SPACE.test(e);
    if (typeof e !== 'object') return false;
    if (e instanceof DiskFullError) return true;
    const { code, message, stderr } = e as { code?: unknown; message?: unknown; stderr?: unknown };
    if (code === 'SQLITE_FULL' || code === 'ENOSPC') return true;
    if (typeof code === 'string' && code.startsWith('SQLITE_IOERR') && typeof message === 'string' && NO_SPACE.test(message)) return true;
    if (typeof stderr === 'string' && NO_SPACE.test(stderr)) return true;
    // A git failure wrapped as text ("git update-ref failed: ... No space left on device").
    if (typeof message === 'string' && /No space left on device/.test(message)) return true;
    const result = (e as { result?: { stderr?: unknown } }).result;
    if (result && typeof result.stderr === 'string' && NO_SPACE.test(result.stderr)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** `err` as a DiskFullError when it means a full disk (kept as is when it already is one), else undefined. */
export function asDiskFull(err: unknown, what: string): DiskFullError | undefined {
  if (err instanceof DiskFullError) return err;
  return isDiskFull(err) ? new DiskFullError(what, { cause: err }) : undefined;
}

/**
 * Whether the file system holding `path` has no block left (statfs). For the failures that do not
 * say why: git reports a ref it could not write as "couldn't write '<ref>.lock'", without the
 * errno, so a write failure on a file system with nothing free is taken to be that.
 */
export function outOfSpace(path: string): boolean {
  try {
    const s = statfsSync(path);
    return s.bavail === 0 || s.ffree === 0;
  } catch {
    return false;
  }
}

/** git's words for a file it could not write (the errno, when it gives one, is matched by isDiskFull). */
const GIT_WRITE_FAILED = /couldn't write|unable to write|unable to append|could not write|failed to write/i;

/** A git failure (its stderr) in `gitDir` as a DiskFullError, when it is one: said so, or a write failed with no space left. */
export function gitDiskFull(stderr: string, gitDir: string, what: string): DiskFullError | undefined {
  if (isDiskFull(stderr) || (GIT_WRITE_FAILED.test(stderr) && outOfSpace(gitDir))) return new DiskFullError(what, { cause: new Error(stderr.trim()) });
  return undefined;
}
