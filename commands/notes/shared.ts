// What the `mkt notes` verbs share: the client, OWNER/REPO (flag or the clone's remote), targets
// resolved in the clone, note content from -m/-F/stdin, and API failures with notes-specific hints.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Factory } from '../../src/cli/factory.js';
import { AuthError, UsageError } from '../../src/cli/errors.js';
import { toCliError } from '../../src/cli/api-errors.js';
import { readAll } from '../../src/cli/io.js';
import { ApiError } from '../../src/client/http.js';
import { NotesClient, type RepoRef } from '../../src/client/notes.js';
import { CloneError, parseRepoArg, repoFromClone, resolveTarget, revList } from '../../src/client/git-clone.js';
import { chunkIds } from './search-pages.js';

export interface ClientFlags {
  server?: string;
  json?: boolean;
  repo?: string;
  namespace?: string;
}

export interface ContentFlags {
  message?: string[];
  file?: string;
}

export async function notesClient(f: Factory, flags: ClientFlags): Promise<NotesClient> {
  return new NotesClient(await f.http('marketplace', { server: flags.server }));
}

async function local<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof CloneError) throw new UsageError(err.message, err.hint);
    throw err;
  }
}

/** OWNER/REPO from --repo, else from the remote of the clone in the working directory. */
export function repoOf(f: Factory, flags: ClientFlags): Promise<RepoRef> {
  return local(async () => (flags.repo !== undefined ? parseRepoArg(flags.repo) : repoFromClone(f.io.cwd)));
}

/** The full object id of a revision (full ids need no clone). */
export function targetOf(f: Factory, rev: string): Promise<string> {
  return local(() => resolveTarget(f.io.cwd, rev));
}

/**
 * The commits of a range of the clone (oldest first), cut into requests whose URL stays small
 * (see COMMITS_URL_BUDGET); an empty range gives no chunk.
 */
export async function rangeCommits(f: Factory, range: string): Promise<string[][]> {
  return chunkIds(await local(() => revList(f.io.cwd, range)));
}

export function repoName(r: RepoRef): string {
  return `${r.owner}/${r.repo}`;
}

/** Calls the server; 401/403 on a write get a hint saying what credential is needed. */
export async function call<T>(repo: RepoRef, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) {
      throw new AuthError(`${err.message} (HTTP 403)`, `writing notes needs a push-scope token of an account that can push to ${repoName(repo)}`);
    }
    if (err instanceof ApiError && err.status === 401) {
      throw new AuthError(`${err.message} (HTTP 401)`, 'run `mkt auth login marketplace --server URL` with a push-scope token (or set MKT_MARKETPLACE_TOKEN)');
    }
    throw toCliError(err, 'marketplace', { flags: NOTE_FIELDS });
  }
}

/**
 * Calls the server for a read: failures mapped as every command maps them (401 with the login
 * hint, 400 naming the flag from `flags` when the field has another name, 404 negative).
 */
export async function callRead<T>(fn: () => Promise<T>, flags: Record<string, string> = {}): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toCliError(err, 'marketplace', { flags });
  }
}

/** Request fields whose flag has another name: `message` is the commit message, not `-m` (the note text). */
const NOTE_FIELDS = { message: '--commit-message', content: 'the note text (-m or -F)', q: '<query>' } as const;

/**
 * The note text: the -m paragraphs joined by blank lines, or -F FILE (`-` = stdin), or stdin
 * when it is not a terminal. Trailing blank lines are cut to one newline, as `git notes` does.
 */
export async function readContent(f: Factory, flags: ContentFlags): Promise<string> {
  const io = f.io;
  const messages = flags.message ?? [];
  if (messages.length > 0 && flags.file !== undefined) throw new UsageError('give the note with -m or -F, not both');
  let text: string;
  if (messages.length > 0) text = messages.join('\n\n');
  else if (flags.file !== undefined && flags.file !== '-') {
    try {
      text = readFileSync(resolve(io.cwd, flags.file), 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read -F ${flags.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  } else if (flags.file === '-' || !io.stdin.isTTY) text = await readAll(io.stdin);
  else throw new UsageError('no note given: pass -m TEXT, -F FILE, or pipe it on stdin');
  text = text.replace(/\s+$/, '');
  if (text === '') throw new UsageError('the note is empty (to remove a note, run `mkt notes rm`)');
  return `${text}\n`;
}

export function short(id: string): string {
  return id.slice(0, 12);
}
