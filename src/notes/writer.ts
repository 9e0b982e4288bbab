// Writing and removing notes through the API: inside the repository lock, catch the index up,
// write one notes commit (src/git/notes-write.ts) on top of the tip just read, and retry when a
// push moved the ref meanwhile; after sustained contention give up with ContentionError. A
// namespace whose ref cannot exist beside another (`a` and `a/b`) fails at once with NamespaceConflictError.
import { createHash } from 'node:crypto';
import { listNotesRefs, readRef } from '../git/refs.js';
import { RefConflictError, RefMovedError, writeNote, type NoteAuthor } from '../git/notes-write.js';
import type { NotesIndex } from '../store/notes.js';
import type { HostedRepo, NotesIndexer } from './indexer.js';
import { collidingNamespace, namespaceOfRef } from './namespace.js';

export const WRITE_ATTEMPTS = 5;

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

export class NoteWriter {
  constructor(
    private readonly index: NotesIndex,
    private readonly indexer: NotesIndexer,
    private readonly nowSeconds: () => number,
  ) {}

  /** Sets (content) or removes (null) the note on a commit known to exist. */
  write(
    repo: HostedRepo & { objectFormat: 'sha1' | 'sha256' },
    input: { namespace: string; target: string; content: string | null; author: NoteAuthor; message?: string },
  ): Promise<WriteOutcome> {
    const ref = `refs/notes/${input.namespace}`;
    return this.indexer.locks.run(repo.id, async () => {
      for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
        await this.indexer.catchUp(repo);
        const tip = readRef(repo.dir, ref) ?? null;
        if (tip === null && input.content !== null) {
          const other = collidingNamespace(input.namespace, [...listNotesRefs(repo.dir).keys()].map(namespaceOfRef));
          if (other !== undefined) throw new NamespaceConflictError(conflictMessage(input.namespace, other));
        }
        const existing = this.index.get(repo.id, input.namespace, input.target);
        if (input.content === null && !existing) return { action: 'absent', commit: tip ?? '', blob: null };
        if (input.content !== null && existing?.content === input.content) return { action: 'unchanged', commit: tip!, blob: existing.blob };
        const verb = input.content === null ? `remove note from ${input.target}` : `${existing ? 'update' : 'add'} note on ${input.target}`;
        const extra = input.message?.trim() ? `\n\n${input.message.trim()}` : '';
        const message = `Notes: ${verb}${extra}\n\nWritten through the mkt marketplace API by ${input.author.name}.\n`;
        let commit: string;
        try {
          commit = await writeNote(repo.dir, { ref, target: input.target, content: input.content, expectedTip: tip, author: input.author, message, nowSeconds: this.nowSeconds() });
        } catch (err) {
          if (err instanceof RefMovedError) continue;
          // A push created the colliding ref after the check above.
          if (err instanceof RefConflictError) throw new NamespaceConflictError(err.message);
          throw err;
        }
        if (input.content === null) {
          this.indexer.applyWrite(repo.id, input.namespace, commit, [], [input.target]);
          return { action: 'removed', commit, blob: null };
        }
        const blob = blobId(input.content, repo.objectFormat);
        this.indexer.applyWrite(repo.id, input.namespace, commit, [{ target: input.target, object_type: 'commit', blob, content: input.content }], []);
        return { action: existing ? 'updated' : 'added', commit, blob };
      }
      throw new ContentionError(`${ref} kept moving during ${WRITE_ATTEMPTS} attempts to write; try again`);
    });
  }
}
