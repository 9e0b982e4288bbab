// What the `mkt sync` verbs share: opening the session, reading the password (hidden prompt or
// stdin, never argv), and turning crypto failures into one-line negative answers (exit 1).
import { setFlagsFromString } from 'node:v8';
import type { Factory } from '../../src/cli/factory.js';
import { NegativeError, UsageError } from '../../src/cli/errors.js';
import { toCliError } from '../../src/cli/api-errors.js';
import { readSecret } from '../../src/cli/io.js';
import { ApiError } from '../../src/client/http.js';
import { SyncSession } from '../../src/sync/session.js';
import type { BlobProgress } from '../../src/sync/blobs.js';

export interface ClientFlags {
  server?: string;
  json?: boolean;
}

const LOGIN_HINT = 'run `mkt sync login --app-key KEY --email EMAIL` (sync tokens are short-lived)';

/** Runs a sync call: API, network and crypto errors become CLI errors with exit codes. */
export async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const name = (err as Error | undefined)?.name;
    if (name === 'SealError' || name === 'BlobIntegrityError' || name === 'EnvelopeError') throw new NegativeError((err as Error).message);
    // A local file that cannot be read or written is the caller's path, not the server's fault.
    const fsErr = err as NodeJS.ErrnoException | undefined;
    if (typeof fsErr?.code === 'string' && typeof fsErr.syscall === 'string') {
      throw new UsageError(`cannot ${fsErr.syscall} ${fsErr.path ?? 'a local file'}: ${fsErr.code}`);
    }
    if (err instanceof ApiError && err.status === 413) throw new NegativeError(err.message, 'see `mkt sync plan status`, `plan quote` and `plan buy` for more storage');
    const mapped = toCliError(err, 'marketplace');
    if (err instanceof ApiError && err.status === 401) {
      const e = mapped as Error & { hint?: string };
      throw Object.assign(e, { hint: LOGIN_HINT });
    }
    throw mapped;
  }
}

export function openSession(f: Factory, flags: ClientFlags): Promise<SyncSession> {
  return SyncSession.open(f, flags);
}

export async function readPassword(f: Factory, prompt = 'Password: '): Promise<string> {
  const pw = await readSecret(f.io, prompt);
  if (pw === '') throw new UsageError('no password given (type it at the prompt or pipe it on stdin)');
  return pw;
}

/**
 * The blob progress bar: ink on a terminal, nothing in pipes. ink (with React and its layout
 * engine) is loaded only for a terminal: it costs some 60 MiB of memory.
 */
export async function progressFor(f: Factory): Promise<{ update(p: BlobProgress): void; stop(): void }> {
  if (!f.io.stderr.isTTY) return { update: () => undefined, stop: () => undefined };
  return (await import('./progress.js')).progressReporter(f.io);
}

/**
 * For the blob verbs: keeps undici's HTTP parser (WebAssembly) on V8's baseline compiler. After a
 * few requests V8 recompiles it with its optimizing tier on a background thread: some 300 ms of
 * CPU and 35 MiB of memory, mostly spent after the command is done (exit waits for it), which a
 * short-lived process never gets back. Requests parse as fast as a CLI can tell.
 */
export function keepWasmOnBaselineTier(): void {
  setFlagsFromString('--liftoff-only');
}
