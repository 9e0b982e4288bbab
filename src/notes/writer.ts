// Writing and removing notes through the API: inside the repository lock (this process) and the
// ref's lock (every instance on the database, see NotesIndex.holdRef), catch the index up, write
// one notes commit (src/git/notes-write.ts) on top of the tip just read, and retry with backoff
// when something outside the server (a push, git itself) moved the ref meanwhile; only after
// WRITE_BUDGET_MS of that give up with ContentionError. A namespace whose ref cannot exist
// beside another (`a` and `a/b`) fails at once with NamespaceConflictError.
import { createHash } from 'node:crypto';
import { listNotesRefs, readRef } from '../git/refs.js';
import { RefConflictError, RefMovedError, writeNote, type NoteAuthor } from '../git/notes-write.js';
import type { NotesIndex } from '../store/notes.js';
import type { HostedRepo, NotesIndexer } from './indexer.js';
import { collidingNamespace, namespaceOfRef } from './namespace.js';

/**
 * How long a write keeps retrying while the ref moves under it. Writes through any instance
 * queue on the ref's lock and never collide; only writers outside the server (pushes, git run on
 * the volume) can, and a burst of those is waited out rather than failed after a few attempts.
 */
export const WRITE_BUDGET_MS = 30_000;
/** The longest pause between two attempts (the first retry is at once, then 5 ms, doubling). */
const MAX_BACKOFF_MS = 250;

export class ContentionError extends Error {}
/** The namespace's ref cannot be created because another namespace sits on its path. */
export class NamespaceConflictError extends Error {}

function conflictMessage(namespace: string, other: string): string {
  return `namespace "${namespace}" cannot be created beside the existing namespace "${other}": git cannot hold both refs/notes/${namespace} and refs/notes/${other}`;
}

export interface WriteOutcome {
  action: 'added' | 'updated' | 'unchanged' | 'removed' | 'absent';
  commit: string;
  blob: string | null;
}

/** Git's object id of a blob, computed here so a write needs no extra git process. */
export function blobId(content: string, objectFormat: 'sha1' | 'sha256'): string {
  const body = Buffer.from(content, 'utf8');
  return createHash(objectFormat === 'sha256' ? 'sha256' : 'sha1')
    .update(`blob ${body.length}\0`)
    .update(body)
    .digest('hex');
}

/** Holds a repository's notes ref against writers of every instance while `fn` runs. */
export type RefLock = <T>(repoId: string, ref: string, fn: () => Promise<T>) => Promise<T>;

export interface NoteWriterOptions {
  /** Defaults to the index's own lock (NotesIndex.holdRef: the database the instances share). */
  refLock?: RefLock;
  /** Defaults to WRITE_BUDGET_MS. */
  budgetMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class NoteWriter {
  private readonly refLock: RefLock;
  private readonly budgetMs: number;

  constructor(
    private readonly index: NotesIndex,
    private readonly indexer: NotesIndexer,
    private readonly nowSeconds: () => number,
    opts: NoteWriterOptions = {},
  ) {
    this.refLock = opts.refLock ?? ((repoId, ref, fn) => index.holdRef(repoId, ref, fn));
    this.budgetMs = opts.budgetMs ?? WRITE_BUDGET_MS;
  }

  /** Sets (content) or removes (null) the note on a commit known to exist. */
  write(
    repo: HostedRepo & { objectFormat: 'sha1' | 'sha256' },
    input: { namespace: string; target: string; content: string | null; author: NoteAuthor; message?: string },
  ): Promise<WriteOutcome> {
    const ref = `refs/notes/${input.namespace}`;
    return this.indexer.locks.run(repo.id, () => this.refLock(repo.id, ref, () => this.attempt(repo, ref, input)));
  }

  private async attempt(
    repo: HostedRepo & { objectFormat: 'sha1' | 'sha256' },
    ref: string,
    input: { namespace: string; target: string; content: string | null; author: NoteAuthor; message?: string },
  ): Promise<WriteOutcome> {
    const started = performance.now();
    for (let attempt = 0; ; attempt++) {
      await this.indexer.catchUp(repo);
      const tip = readRef(repo.dir, ref) ?? null;
      if (tip === null && input.content !== null) {
        const other = collidingNamespace(input.namespace, [...listNotesRefs(repo.dir).keys()].map(namespaceOfRef));
        if (other !== undefined) throw new NamespaceConflictError(conflictMessage(input.namespace, other));
      }
      const existing = await this.index.get(repo.id, input.namespace, input.target);
      if (input.content === null && !existing) return { action: 'absent', commit: tip ?? '', blob: null };
      if (input.content !== null && existing?.content === input.content) return { action: 'unchanged', commit: tip!, blob: existing.blob };
      const verb = input.content === null ? `remove note from ${input.target}` : `${existing ? 'update' : 'add'} note on ${input.target}`;
      const extra = input.message?.trim() ? `\n\n${input.message.trim()}` : '';
      const message = `Notes: ${verb}${extra}\n\nWritten through the mkt marketplace API by ${input.author.name}.\n`;
      let commit: string;
      try {
        commit = await writeNote(repo.dir, { ref, target: input.target, content: input.content, expectedTip: tip, author: input.author, message, nowSeconds: this.nowSeconds() });
      } catch (err) {
        if (err instanceof RefMovedError) {
          const spent = performance.now() - started;
          if (spent >= this.budgetMs) {
            throw new ContentionError(`${ref} kept moving for ${(spent / 1000).toFixed(1)} s (${attempt + 1} attempts) while writing; try again`);
          }
          // Jittered so that writers outside the server and this one stop meeting in step.
          if (attempt > 0) await sleep(Math.min(MAX_BACKOFF_MS, 5 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2));
          continue;
        }
        // A push created the colliding ref after the check above.
        if (err instanceof RefConflictError) throw new NamespaceConflictError(err.message);
        throw err;
      }
      if (input.content === null) {
        await this.indexer.applyWrite(repo.id, input.namespace, tip, commit, [], [input.target]);
        return { action: 'removed', commit, blob: null };
      }
      const blob = blobId(input.content, repo.objectFormat);
      await this.indexer.applyWrite(repo.id, input.namespace, tip, commit, [{ target: input.target, object_type: 'commit', blob, content: input.content }], []);
      return { action: existing ? 'updated' : 'added', commit, blob };
    }
  }
}
