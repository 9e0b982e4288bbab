// Writing and removing notes through the API. Writes to one notes ref that arrive while another
// is being written wait together and then go as one group through NotesIndexer.writing, which
// holds the locks, catches the ref's part of the index up and records the group after; the writer
// reads the index only through it. Each group leaves one notes commit per note in arrival order
// (src/git/notes-write.ts) and moves the ref once by compare-and-swap. When something outside
// the server (a push, git itself) moved the ref meanwhile, the whole group is written again on
// the new tip, with backoff; only after WRITE_BUDGET_MS of that does it give up with
// ContentionError. A namespace whose ref cannot exist beside another (`a` and `a/b`) fails at
// once with NamespaceConflictError, and one whose ref is not a readable notes commit (a blob
// pushed there before the hook refused it, say) with BrokenRefError.
// In a namespace with a merge strategy other than manual (src/git/notes-merge.ts), a group that
// finds the ref moved is not rewritten: its commits are merged into the ref as it stands, as
// `git notes merge -s <strategy>` merges them (the ref's notes "ours", the group's "theirs"), so
// what the push or writer that moved the ref wrote is joined, not written over.
import { createHash } from 'node:crypto';
import { listNotesRefs, readRef } from '../git/refs.js';
import { mergeNotes, type NotesMergeStrategy } from '../git/notes-merge.js';
import { commitTime, diffNotes, objectInfo } from '../git/notes-tree.js';
import { identPart } from '../git/objects.js';
import { MAX_NOTE_BYTES } from '../schemas/notes.js';
import { RefConflictError, RefMovedError, writeNoteCommits, type NoteAuthor, type NoteChange } from '../git/notes-write.js';
import { RepoGitPool } from '../git/repo-git.js';
import type { NoteUpsert } from '../store/notes.js';
import type { HostedRepo, NamespaceWrite, NotesIndexer, RefMove } from './indexer.js';
import { collidingNamespace, namespaceOfRef } from './namespace.js';

/**
 * How long a write keeps retrying while the ref moves under it. Writes through any instance
 * queue on the ref's lock and never collide; only writers outside the server (pushes, git run on
 * the volume) can, and a burst of those is waited out rather than failed after a few attempts.
 */
export const WRITE_BUDGET_MS = 30_000;
/** The longest pause between two attempts (the first retry is at once, then 5 ms, doubling). */
const MAX_BACKOFF_MS = 250;
/** Writes in one group at most: one ref lock is not held for ever while writers keep coming. */
const MAX_GROUP = 64;

export class ContentionError extends Error {}
/** The namespace's ref cannot be created because another namespace sits on its path. */
export class NamespaceConflictError extends Error {}
/** The namespace's ref points at something that is not a readable notes commit: nothing is written over it. */
export class BrokenRefError extends Error {}
/** Merging the group into the moved ref would make a note over MAX_NOTE_BYTES (union, cat_sort_uniq). */
export class MergeTooLargeError extends Error {}

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

export interface NoteWriterOptions {
  /** Defaults to WRITE_BUDGET_MS. */
  budgetMs?: number;
  /** The repositories' git processes; by default the writer's own, ended by close(). */
  git?: RepoGitPool;
  /** A namespace's merge strategy (asked only when a group finds its ref moved); default: manual. */
  mergeStrategy?: (repoId: string, namespace: string) => Promise<NotesMergeStrategy>;
}

type Repo = HostedRepo & { objectFormat: 'sha1' | 'sha256' };
type WriteInput = { namespace: string; target: string; content: string | null; author: NoteAuthor; message?: string };

interface Queued {
  input: WriteInput;
  resolve(out: WriteOutcome): void;
  reject(err: unknown): void;
}

/** Where a write left its target: the note's content and blob, or null (no note). */
type NoteState = { content: string; blob: string } | null;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class NoteWriter {
  private readonly budgetMs: number;
  private readonly git: RepoGitPool;
  private readonly ownsGit: boolean;
  private readonly mergeStrategy: (repoId: string, namespace: string) => Promise<NotesMergeStrategy>;
  /** Per repository and ref: writes waiting for the group being written to finish. */
  private readonly queues = new Map<string, Queued[]>();

  constructor(
    private readonly indexer: NotesIndexer,
    private readonly nowSeconds: () => number,
    opts: NoteWriterOptions = {},
  ) {
    this.budgetMs = opts.budgetMs ?? WRITE_BUDGET_MS;
    this.ownsGit = opts.git === undefined;
    this.git = opts.git ?? new RepoGitPool();
    this.mergeStrategy = opts.mergeStrategy ?? (() => Promise.resolve('manual'));
  }

  /** Ends the git processes the writer started (when it owns them). */
  async close(): Promise<void> {
    if (this.ownsGit) await this.git.close();
  }

  /** Sets (content) or removes (null) the note on a commit known to exist. */
  write(repo: Repo, input: WriteInput): Promise<WriteOutcome> {
    const ref = `refs/notes/${input.namespace}`;
    const key = `${repo.id}\0${ref}`;
    return new Promise<WriteOutcome>((resolve, reject) => {
      const queue = this.queues.get(key);
      if (queue) {
        queue.push({ input, resolve, reject });
        return;
      }
      this.queues.set(key, [{ input, resolve, reject }]);
      void this.drain(repo, ref, key);
    });
  }

  /** Writes the ref's queue group by group until it is empty. */
  private async drain(repo: Repo, ref: string, key: string): Promise<void> {
    const queue = this.queues.get(key)!;
    while (queue.length > 0) {
      const group = queue.splice(0, MAX_GROUP);
      try {
        const writes = group.map((q) => q.input);
        const outcomes = await this.indexer.writing(repo, writes[0]!.namespace, (ns) => this.attempt(repo, ref, ns, writes));
        group.forEach((q, i) => q.resolve(outcomes[i]!));
      } catch (err) {
        for (const q of group) q.reject(err);
      }
    }
    this.queues.delete(key);
  }

  /** Writes one group, inside NotesIndexer.writing; says how it moved the ref, for the index. */
  private async attempt(repo: Repo, ref: string, ns: NamespaceWrite, writes: WriteInput[]): Promise<{ value: WriteOutcome[]; moved?: RefMove }> {
    const namespace = writes[0]!.namespace;
    const git = this.git.get(repo.dir, repo.objectFormat);
    const started = performance.now();
    for (let attempt = 0; ; attempt++) {
      const { tip, broken } = await ns.current();
      if (broken !== undefined) throw new BrokenRefError(`${ref} is not a notes commit (${broken}); nothing is written over it: delete the ref or point it at a notes commit`);
      if (tip === null && writes.some((w) => w.content !== null)) {
        const other = collidingNamespace(namespace, [...listNotesRefs(repo.dir).keys()].map(namespaceOfRef));
        if (other !== undefined) throw new NamespaceConflictError(conflictMessage(namespace, other));
      }
      // Each write is judged against the notes as the writes before it in the group left them.
      const state = new Map<string, NoteState>();
      const changes: NoteChange[] = [];
      const decided: { action: WriteOutcome['action']; blob: string | null; after: number }[] = [];
      for (const w of writes) {
        let existing = state.get(w.target);
        if (existing === undefined) {
          const indexed = await ns.note(w.target);
          existing = indexed ? { content: indexed.content, blob: indexed.blob } : null;
          state.set(w.target, existing);
        }
        // `after`: how many of the group's commits precede this write's answer.
        if (w.content === null && !existing) {
          decided.push({ action: 'absent', blob: null, after: changes.length });
          continue;
        }
        if (w.content !== null && existing?.content === w.content) {
          decided.push({ action: 'unchanged', blob: existing.blob, after: changes.length });
          continue;
        }
        const verb = w.content === null ? `remove note from ${w.target}` : `${existing ? 'update' : 'add'} note on ${w.target}`;
        const extra = w.message?.trim() ? `\n\n${w.message.trim()}` : '';
        const message = `Notes: ${verb}${extra}\n\nWritten through the mkt marketplace API by ${w.author.name}.\n`;
        changes.push({ target: w.target, content: w.content, author: w.author, message, nowSeconds: this.nowSeconds() });
        const blob = w.content === null ? null : blobId(w.content, repo.objectFormat);
        state.set(w.target, w.content === null ? null : { content: w.content, blob: blob! });
        decided.push({ action: w.content === null ? 'removed' : existing ? 'updated' : 'added', blob, after: changes.length });
      }
      if (changes.length === 0) return { value: decided.map((d) => ({ action: d.action, blob: d.blob, commit: tip ?? '' })) };
      const commits = await writeNoteCommits(git, tip, changes);
      try {
        await git.updateRef(ref, commits[commits.length - 1]!, tip);
      } catch (err) {
        if (err instanceof RefMovedError) {
          const strategy = await this.mergeStrategy(repo.id, namespace);
          if (strategy !== 'manual') {
            const last = writes[writes.length - 1]!.author;
            await this.mergeInto(repo, ref, commits[commits.length - 1]!, strategy, last, started);
            // The index catches up with the merge (a diff of the ref's trees) before the locks go.
            await ns.current();
            return { value: decided.map((d) => ({ action: d.action, blob: d.blob, commit: d.after > 0 ? commits[d.after - 1]! : (tip ?? '') })) };
          }
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
      const [upserts, removals] = this.indexChanges(changes, state);
      return {
        value: decided.map((d) => ({ action: d.action, blob: d.blob, commit: d.after > 0 ? commits[d.after - 1]! : (tip ?? '') })),
        moved: { from: tip, to: commits[commits.length - 1]!, upserts, removals },
      };
    }
  }

  /**
   * Merges the group's last commit `theirs` into the ref as it stands (null: the ref is gone, and
   * the group's commits make it again), moving the ref by compare-and-swap; merged again on the
   * new tip while the ref keeps moving, within the write budget.
   */
  private async mergeInto(repo: Repo, ref: string, theirs: string, strategy: Exclude<NotesMergeStrategy, 'manual'>, who: NoteAuthor, started: number): Promise<void> {
    const git = this.git.get(repo.dir, repo.objectFormat);
    for (let attempt = 0; ; attempt++) {
      const current = readRef(repo.dir, ref) ?? null;
      let next = theirs;
      if (current !== null) {
        next = await mergeNotes(repo.dir, repo.objectFormat, ref, current, theirs, strategy, { ...who, seconds: this.nowSeconds() });
        await this.checkMergedSizes(repo.dir, ref, current, next, strategy);
      }
      try {
        await git.updateRef(ref, next, current);
        return;
      } catch (err) {
        if (!(err instanceof RefMovedError)) throw err;
        const spent = performance.now() - started;
        if (spent >= this.budgetMs) throw new ContentionError(`${ref} kept moving for ${(spent / 1000).toFixed(1)} s (${attempt + 1} merges) while writing; try again`);
        if (attempt > 0) await sleep(Math.min(MAX_BACKOFF_MS, 5 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2));
      }
    }
  }

  /** A union of two large notes can pass the limit every note is held to: such a merge is refused. */
  private async checkMergedSizes(gitDir: string, ref: string, from: string, to: string, strategy: string): Promise<void> {
    if (from === to) return;
    const changed = (await diffNotes(gitDir, from, to)).flatMap((c) => (c.blob === null ? [] : [c.blob]));
    const sizes = await objectInfo(gitDir, changed);
    const big = [...sizes].filter(([, v]) => v.size > MAX_NOTE_BYTES);
    if (big.length > 0) {
      throw new MergeTooLargeError(`${ref} moved while writing, and merging with ${strategy} would make notes over ${MAX_NOTE_BYTES} bytes (blob ${big[0]![0]}, ${big[0]![1].size} bytes); nothing was written`);
    }
  }

  /**
   * What the group leaves in the index: each changed target's last state, with who wrote its last
   * change and when, as the commit records them (so a rebuild from git reads the same). The
   * annotated commit's subject and author are the indexer's to add.
   */
  private indexChanges(changes: NoteChange[], state: Map<string, NoteState>): [NoteUpsert[], string[]] {
    const upserts: NoteUpsert[] = [];
    const removals: string[] = [];
    const last = new Map<string, NoteChange>();
    for (const c of changes) last.set(c.target, c);
    for (const [target, c] of last) {
      const s = state.get(target);
      if (s) {
        upserts.push({
          target,
          object_type: 'commit',
          blob: s.blob,
          content: s.content,
          note_author: identPart(c.author.name) || 'unknown',
          note_email: identPart(c.author.email),
          note_at: Date.parse(commitTime(String(Math.trunc(c.nowSeconds)))),
        });
      } else removals.push(target);
    }
    return [upserts, removals];
  }
}
