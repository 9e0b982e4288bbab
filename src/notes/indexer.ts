// Keeps the notes index in step with the notes refs of a repository: compares the refs on disk
// with the tips the index reflects and catches up each moved ref by diffing its old and new
// notes trees (a full read of the tree only when the old tip is unknown or gone). Work on one
// repository is serialised in this process; API writes go through `writing`, which holds that
// lock and the ref's lock of every instance and records the write in the index after it. Other
// instances on the same database and repository volume update the index too, so each ref's
// catch-up moves its recorded tip by compare-and-swap, and what this instance caches of a
// repository is dropped whenever any instance changes that repository's index. A notes ref that
// is not a readable notes commit (however it got there) is left out and logged, never thrown.
import { listNotesRefs, readRef } from '../git/refs.js';
import { diffNotes, listNotes, objectInfo, objectTypes, readBlobs, type TreeNote } from '../git/notes-tree.js';
import { runGit } from '../git/run.js';
import type { IndexedNote, NotesIndex, NoteUpsert } from '../store/notes.js';
import { MAX_NOTE_BYTES } from '../schemas/notes.js';
import { checkNamespace, namespaceOfRef } from './namespace.js';
import { RepoLocks, type RefLock } from './locks.js';
import { BadRefs, type IndexerLog } from './bad-refs.js';
import { commitSummaries, noteChangers, readNoteMeta, type CommitSummary, type NoteChange } from './note-meta.js';

export interface HostedRepo {
  id: string;
  dir: string;
}

/**
 * How long a notes ref read from disk is trusted on the read path. Changes made through this
 * server (API writes, pushes) refresh it at once; only changes made behind the server's back
 * (another process writing the repository) are seen up to this much later.
 */
export const REF_READ_TTL_MS = 100;
const NOTE_CACHE_ENTRIES = 10_000;
const NOTE_CACHE_MAX_CHARS = 4096;
const DISK_TIP_ENTRIES = 10_000;
/** Catch-up passes over a repository whose refs another instance keeps moving meanwhile. */
const CATCH_UP_ROUNDS = 5;
/** Note blobs read by one `cat-file --batch` process at most, in bytes (each blob is at most MAX_NOTE_BYTES). */
const READ_BATCH_BYTES = 64 * 1024 * 1024;

/** Subjects and authors of annotated commits remembered for API writes (commits never change). */
const COMMIT_SUMMARY_ENTRIES = 10_000;

/** The singleton job (SqlDatabase.exclusive) of a server's start-up catch-up and `mkt admin reindex`. */
export const CATCH_UP_JOB = 'notes-index-catch-up';

/** Reads the subjects and authors of commits of a repository (note-meta.ts's commitSummaries by default). */
export type CommitSummaryReader = (repo: HostedRepo, commits: readonly string[]) => Promise<Map<string, CommitSummary>>;

export interface NotesIndexerOptions {
  /** Defaults to the index's own lock (NotesIndex.holdRef: the database the instances share). */
  refLock?: RefLock;
  /**
   * How a write's annotated commits are read; default one `git log` process per write. The
   * daemon reads them through the repository's long-lived `cat-file` (commitSummariesThrough).
   */
  summaries?: CommitSummaryReader;
}

/** What a write sees of its namespace inside `writing`; valid only while its `fn` runs. */
export interface NamespaceWrite {
  /**
   * Catches the namespace's part of the index up with its ref, then reads the ref: its tip (null:
   * no ref) and, when a catch-up found that tip is not a readable notes commit, why.
   */
  current(): Promise<{ tip: string | null; broken?: string }>;
  /** The note the index holds on a target now (read from the index, never the cache). */
  note(target: string): Promise<IndexedNote | undefined>;
}

/** What a write did to its ref: moved it from `from` to `to`, leaving these notes changed. */
export interface RefMove {
  from: string | null;
  to: string;
  upserts: NoteUpsert[];
  removals: string[];
}

export class NotesIndexer {
  private readonly locks = new RepoLocks();
  private readonly refLock: RefLock;
  /** Per repository: namespace → tip the index reflects (mirrors notes_refs, saves a query a read). */
  private readonly indexTips = new Map<string, Map<string, string>>();
  /** Per repository: `namespace\0target` → indexed note (or its absence), for repeated reads. */
  private readonly notes = new Map<string, Map<string, IndexedNote | undefined>>();
  private cachedNotes = 0;
  /** Per repository and namespace: the tip last read from disk and when. */
  private readonly diskTips = new Map<string, { tip: string | undefined; at: number }>();
  /**
   * Repositories the index has been fully built for. The flag only ever turns on (markIndexed)
   * until dropRepo, which announces itself like every change, so only `true` is remembered.
   */
  private readonly indexed = new Set<string>();

  /** Bumped by every invalidation of a repository, so a read that raced one is not cached. */
  private readonly generations = new Map<string, number>();
  /** Bumped when every repository is forgotten at once. */
  private epoch = 0;
  private readonly unwatch: Promise<(() => void) | undefined>;

  /** Refs left out because their tip is not a readable notes commit. */
  private readonly badRefs: BadRefs;
  /** `repoId\0commit` → its subject and author, for the notes API writes. */
  private readonly summaries = new Map<string, CommitSummary>();
  private readonly readSummaries: CommitSummaryReader;

  constructor(
    private readonly index: NotesIndex,
    log?: IndexerLog,
    opts: NotesIndexerOptions = {},
  ) {
    this.badRefs = new BadRefs(log);
    this.refLock = opts.refLock ?? ((repoId, ref, fn) => index.holdRef(repoId, ref, fn));
    this.readSummaries = opts.summaries ?? ((repo, commits) => commitSummaries(repo.dir, commits));
    // Another instance's write moves the ref on the shared volume and updates the shared index;
    // its notification drops what this one remembers, so reads need not wait out REF_READ_TTL_MS.
    this.unwatch = index.watch((repoId) => this.invalidate(repoId)).catch(() => undefined);
  }

  /** Stops listening for other instances' changes. */
  async close(): Promise<void> {
    (await this.unwatch)?.();
  }

  private generation(repoId: string): string {
    return `${this.epoch}:${this.generations.get(repoId) ?? 0}`;
  }

  /** Whether the repository's index has been built (a catch-up or rebuild finished). */
  async isIndexed(repoId: string): Promise<boolean> {
    if (this.indexed.has(repoId)) return true;
    const gen = this.generation(repoId);
    const yes = await this.index.isIndexed(repoId);
    if (yes && gen === this.generation(repoId)) this.indexed.add(repoId);
    return yes;
  }

  /** Namespace → tip the index reflects for a repository. */
  async tips(repoId: string): Promise<Map<string, string>> {
    let t = this.indexTips.get(repoId);
    if (!t) {
      const gen = this.generation(repoId);
      t = await this.index.tips(repoId);
      if (gen === this.generation(repoId)) this.indexTips.set(repoId, t);
    }
    return t;
  }

  /** The indexed note on a target, remembered until the repository's index changes. */
  async note(repoId: string, namespace: string, target: string): Promise<IndexedNote | undefined> {
    const key = `${namespace}\0${target}`;
    const known = this.notes.get(repoId);
    if (known?.has(key)) return known.get(key);
    const gen = this.generation(repoId);
    const n = await this.index.get(repoId, namespace, target);
    if (gen !== this.generation(repoId)) return n;
    let m = this.notes.get(repoId);
    if (!m) this.notes.set(repoId, (m = new Map()));
    // Bounded: at most 10,000 notes of up to 4,096 characters over all repositories (80 MiB of
    // UTF-16 at worst); larger notes are always read from the index.
    if (n && n.content.length > NOTE_CACHE_MAX_CHARS) return n;
    if (this.cachedNotes >= NOTE_CACHE_ENTRIES) {
      this.notes.clear();
      this.cachedNotes = 0;
      this.notes.set(repoId, (m = new Map()));
    }
    m.set(key, n);
    this.cachedNotes++;
    return n;
  }

  /**
   * The note a read of `target` in `namespace` finds, when all that read checks is in memory and
   * fresh (no statement, no file read, no await): the ref's tip read from disk within
   * REF_READ_TTL_MS, the index at that tip, the note remembered. Undefined whenever any of it must
   * be read, or there is no note: ensureRefCurrent, tips and note answer then.
   */
  cachedNote(repo: HostedRepo, namespace: string, target: string): IndexedNote | undefined {
    const disk = this.diskTips.get(`${repo.id}\0${namespace}`);
    if (disk === undefined || disk.tip === undefined || performance.now() - disk.at >= REF_READ_TTL_MS) return undefined;
    if (this.badRefs.fresh(repo.id, namespace, disk.tip)) return undefined;
    if (this.indexTips.get(repo.id)?.get(namespace) !== disk.tip) return undefined;
    return this.notes.get(repo.id)?.get(`${namespace}\0${target}`);
  }

  /**
   * Runs one write of a namespace's ref: inside the repository's lock (this process) and the
   * ref's lock (every instance), `fn` reads the namespace through its NamespaceWrite and moves
   * the ref with git; when it says it moved the ref, the move is recorded in the index before the
   * locks are let go. When the index moved on meanwhile (another instance caught up past this
   * write), the next read catches up from there.
   */
  writing<T>(repo: HostedRepo, namespace: string, fn: (ns: NamespaceWrite) => Promise<{ value: T; moved?: RefMove }>): Promise<T> {
    const ref = `refs/notes/${namespace}`;
    const ns: NamespaceWrite = {
      current: async () => {
        await this.catchUpNamespace(repo, namespace);
        const tip = readRef(repo.dir, ref) ?? null;
        return { tip, broken: tip === null ? undefined : this.badTipReason(repo.id, namespace, tip) };
      },
      note: (target) => this.index.get(repo.id, namespace, target),
    };
    return this.locks.run(repo.id, () =>
      this.refLock(repo.id, ref, async () => {
        const { value, moved } = await fn(ns);
        if (moved) {
          try {
            const upserts = await this.withCommitSummaries(repo, moved.upserts);
            await this.index.apply(repo.id, namespace, { from: moved.from, to: moved.to }, upserts, moved.removals);
          } finally {
            this.invalidate(repo.id);
          }
        }
        return value;
      }),
    );
  }

  /**
   * A write's upserts with the subject and author of each annotated commit filled in (the writer
   * knows who wrote the note and when, not what the commit says): remembered per commit, the
   * rest read at once (`opts.summaries`). Unreadable: null, as a catch-up would record.
   */
  private async withCommitSummaries(repo: HostedRepo, upserts: NoteUpsert[]): Promise<NoteUpsert[]> {
    const wanted = new Set(upserts.filter((u) => u.object_type === 'commit' && u.note_at != null && u.commit_subject === undefined));
    if (wanted.size === 0) return upserts;
    const key = (target: string) => `${repo.id}\0${target}`;
    const found = new Map<string, CommitSummary>();
    const unknown: string[] = [];
    for (const u of wanted) {
      const c = this.summaries.get(key(u.target));
      if (c) found.set(u.target, c);
      else unknown.push(u.target);
    }
    if (unknown.length > 0) {
      const read = await this.readSummaries(repo, unknown).catch(() => new Map<string, CommitSummary>());
      if (this.summaries.size + read.size > COMMIT_SUMMARY_ENTRIES) this.summaries.clear();
      // Only what was read is remembered: a commit pushed later is read then.
      for (const [c, v] of read) {
        this.summaries.set(key(c), v);
        found.set(c, v);
      }
    }
    return upserts.map((u) => (wanted.has(u) ? { ...u, commit_subject: found.get(u.target)?.subject ?? null, commit_author: found.get(u.target)?.author ?? null } : u));
  }

  /**
   * Forgets what is cached of a repository; every change of its index or refs calls this. An
   * empty id (the database's listener reconnected, so a notification may have been missed)
   * forgets every repository.
   */
  private invalidate(repoId: string): void {
    if (repoId === '') {
      this.epoch++;
      this.generations.clear();
      this.indexTips.clear();
      this.notes.clear();
      this.cachedNotes = 0;
      this.indexed.clear();
      this.diskTips.clear();
      return;
    }
    this.indexed.delete(repoId);
    this.generations.set(repoId, (this.generations.get(repoId) ?? 0) + 1);
    this.indexTips.delete(repoId);
    this.cachedNotes -= this.notes.get(repoId)?.size ?? 0;
    this.notes.delete(repoId);
    for (const k of this.diskTips.keys()) if (k.startsWith(`${repoId}\0`)) this.diskTips.delete(k);
  }

  private async diskTip(repo: HostedRepo, namespace: string): Promise<string | undefined> {
    const key = `${repo.id}\0${namespace}`;
    const now = performance.now();
    const hit = this.diskTips.get(key);
    if (hit && now - hit.at < REF_READ_TTL_MS) return hit.tip;
    const tip = readRef(repo.dir, `refs/notes/${namespace}`);
    // Only namespaces that exist (on disk or in the index) are remembered: names anyone may ask
    // for must not grow the map. The cap bounds it even for a repository with very many refs.
    if (tip !== undefined || (await this.tips(repo.id)).has(namespace)) {
      if (this.diskTips.size >= DISK_TIP_ENTRIES && !this.diskTips.has(key)) this.diskTips.clear();
      this.diskTips.set(key, { tip, at: now });
    } else this.diskTips.delete(key);
    return tip;
  }

  /** How many namespace tips read from disk are remembered (tests prove the bound). */
  get rememberedDiskTips(): number {
    return this.diskTips.size;
  }

  /** Whether the index reflects the ref's tip on disk (a file read at most every REF_READ_TTL_MS). */
  async isCurrent(repo: HostedRepo, namespace: string): Promise<boolean> {
    const disk = await this.diskTip(repo, namespace);
    // A ref left out as unreadable is current when the index holds nothing of it.
    if (disk !== undefined && this.badRefs.fresh(repo.id, namespace, disk)) return !(await this.tips(repo.id)).has(namespace);
    return (await this.tips(repo.id)).get(namespace) === disk;
  }

  /**
   * Why the ref's tip is not a readable notes commit, when a catch-up found so (however long ago),
   * else undefined. Writes ask after catching up (NamespaceWrite.current), and never write over
   * such a tip.
   */
  badTipReason(repoId: string, namespace: string, tip: string): string | undefined {
    return this.badRefs.reason(repoId, namespace, tip);
  }


  /**
   * Marks the refs whose tips are not commits (one `cat-file --batch-check` for all of them) and
   * returns the namespaces of those that are.
   */
  private async commitsAmong(repo: HostedRepo, refs: [string, string][]): Promise<Set<string>> {
    if (refs.length === 0) return new Set();
    const info = await objectInfo(repo.dir, refs.map(([, tip]) => tip));
    const ok = new Set<string>();
    for (const [ns, tip] of refs) {
      const type = info.get(tip)?.type;
      if (type === 'commit') ok.add(ns);
      else this.badRefs.mark(repo, ns, tip, type ? `${tip} is a ${type}, not a commit` : `${tip} is missing from the repository`);
    }
    return ok;
  }

  /** Brings the index up to date with every notes ref of the repository. */
  async ensureCurrent(repo: HostedRepo): Promise<void> {
    if (await this.repoIsCurrent(repo)) return;
    await this.locks.run(repo.id, () => this.catchUp(repo));
  }

  /** Brings the index up to date when one namespace's ref moved (callers holding the lock use catchUp). */
  async ensureRefCurrent(repo: HostedRepo, namespace: string): Promise<void> {
    if (await this.isCurrent(repo, namespace)) return;
    await this.locks.run(repo.id, () => this.catchUp(repo));
  }

  private async repoIsCurrent(repo: HostedRepo): Promise<boolean> {
    if (!(await this.isIndexed(repo.id))) return false;
    const disk = this.validRefs(repo);
    const known = await this.tips(repo.id);
    if (disk.size !== known.size) return false;
    for (const [ns, tip] of disk) if (known.get(ns) !== tip) return false;
    return true;
  }

  private validRefs(repo: HostedRepo): Map<string, string> {
    const out = new Map<string, string>();
    for (const [ref, tip] of listNotesRefs(repo.dir)) {
      const ns = namespaceOfRef(ref);
      const c = checkNamespace(ns);
      // Reserved namespaces pushed with git are still indexed (readable, not writable here).
      if ((c.ok || c.reserved) && !this.badRefs.fresh(repo.id, ns, tip)) out.set(ns, tip);
    }
    return out;
  }

  /**
   * Must run inside the repository lock: brings the index up to date when one namespace's ref
   * moved, judged on the ref read from disk now and the tip the index records now (a note write
   * needs its own namespace current, and this is a file read and one query when it is).
   */
  private async catchUpNamespace(repo: HostedRepo, namespace: string): Promise<void> {
    const disk = readRef(repo.dir, `refs/notes/${namespace}`);
    if (disk !== undefined && (await this.index.tips(repo.id)).get(namespace) === disk) return;
    await this.catchUp(repo);
  }

  /**
   * Must run inside the repository lock. Another instance may catch up the same refs at once:
   * a ref whose recorded tip moved under this one is read again, a few rounds at most (the
   * next read carries on after that).
   */
  private async catchUp(repo: HostedRepo): Promise<void> {
    try {
      for (let round = 0; round < CATCH_UP_ROUNDS; round++) {
        const disk = this.validRefs(repo);
        const known = await this.index.tips(repo.id);
        const moved = [...disk].filter(([ns, tip]) => known.get(ns) !== tip);
        const commits = await this.commitsAmong(repo, moved);
        for (const [ns] of moved) if (!commits.has(ns)) disk.delete(ns);
        let settled = true;
        for (const [ns, tip] of known) if (!disk.has(ns) && !(await this.index.dropRef(repo.id, ns, tip))) settled = false;
        for (const [ns, tip] of disk) {
          const old = known.get(ns);
          if (old === tip) continue;
          // A ref found unreadable now is dropped from the index by the next round.
          if (!(await this.catchUpRef(repo, ns, old, tip))) settled = false;
        }
        if (settled) break;
      }
      await this.index.markIndexed(repo.id);
    } finally {
      this.invalidate(repo.id);
    }
  }

  private async catchUpRef(repo: HostedRepo, ns: string, oldTip: string | undefined, tip: string): Promise<boolean> {
    const from = oldTip ?? null;
    const read = await this.readNotes(repo, ns, tip, async () => {
      if (oldTip && (await this.objectExists(repo, oldTip))) {
        const changes = await diffNotes(repo.dir, oldTip, tip);
        const present = changes.filter((c): c is { target: string; blob: string } => c.blob !== null);
        // The commits this catch-up adds, walked once: they name who changed each note, and
        // also the notes they removed and put back unchanged, which the diff does not show but
        // whose metadata moved.
        const walked = await noteChangers(repo.dir, tip, undefined, oldTip).catch(() => undefined);
        const diffed = new Set(changes.map((c) => c.target));
        for (const [target, c] of walked ?? []) if (!diffed.has(target)) present.push({ target, blob: c.blob });
        const { upserts, skipped } = await this.describe(repo, present);
        // A note that grew past the limit drops its earlier, indexed version too.
        return { upserts: await this.withMeta(repo, tip, upserts, walked), removals: [...changes.filter((c) => c.blob === null).map((c) => c.target), ...skipped] };
      }
      const { upserts } = await this.describe(repo, await listNotes(repo.dir, tip));
      return { upserts: await this.withMeta(repo, tip, upserts), removals: undefined };
    });
    if (!read) return false;
    if (read.removals) return this.index.apply(repo.id, ns, { from, to: tip }, read.upserts, read.removals);
    return this.index.replaceRef(repo.id, ns, { from, to: tip }, read.upserts);
  }

  /**
   * Runs the git reads of one ref's catch-up; a failure (a commit whose tree is missing or is not
   * a tree, say) marks the tip bad and gives undefined. Only git is read here: a failure of the
   * index itself still throws.
   */
  private async readNotes<T>(repo: HostedRepo, ns: string, tip: string, read: () => Promise<T>): Promise<T | undefined> {
    try {
      const out = await read();
      // Read now: a failure remembered of this tip (a process that could not start) is forgotten.
      this.badRefs.readable(repo.id, ns, tip);
      return out;
    } catch (err) {
      this.badRefs.mark(repo, ns, tip, `its notes cannot be read: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }

  /** Full rebuild of a repository's part of the index (`mkt admin reindex`). */
  async rebuild(repo: HostedRepo): Promise<{ namespaces: number; notes: number }> {
    return this.locks.run(repo.id, async () => {
      try {
        await this.index.dropRepo(repo.id);
        let notes = 0;
        let namespaces = 0;
        const refs = [...this.validRefs(repo)];
        const commits = await this.commitsAmong(repo, refs);
        for (const [ns, tip] of refs) {
          if (!commits.has(ns)) continue;
          const all = await this.readNotes(repo, ns, tip, async () => this.withMeta(repo, tip, (await this.describe(repo, await listNotes(repo.dir, tip))).upserts));
          if (!all) continue;
          // Whatever another instance recorded meanwhile is replaced: this read is of the ref now.
          await this.index.replaceRef(repo.id, ns, { to: tip }, all);
          notes += all.length;
          namespaces++;
        }
        await this.index.markIndexed(repo.id);
        return { namespaces, notes };
      } finally {
        this.invalidate(repo.id);
      }
    });
  }

  /**
   * Upserts with their metadata (src/notes/note-meta.ts): from `known` (a catch-up's walk of the
   * commits it adds) where it saw the note's blob, else from the ref's whole history. Metadata that cannot be read leaves the notes
   * without it rather than the ref unindexed.
   */
  private async withMeta(repo: HostedRepo, tip: string, upserts: NoteUpsert[], known?: Map<string, NoteChange>): Promise<NoteUpsert[]> {
    const meta = await readNoteMeta(repo.dir, tip, upserts, known).catch(() => undefined);
    if (!meta) return upserts;
    return upserts.map((u) => {
      const m = meta.get(u.target);
      return m ? { ...u, ...m } : u;
    });
  }

  private async objectExists(repo: HostedRepo, oid: string): Promise<boolean> {
    return (await runGit(repo.dir, ['cat-file', '-e', `${oid}^{commit}`])).code === 0;
  }

  /**
   * Contents and target types of notes. Blob sizes are checked first (`cat-file --batch-check`):
   * a note over MAX_NOTE_BYTES (possible only in a repository written behind the server's back, or
   * before pushes were held to the limit) is never read and not indexed; its target is returned in
   * `skipped`. Contents are read by one `cat-file --batch` process per READ_BATCH_BYTES.
   */
  private async describe(repo: HostedRepo, notes: TreeNote[]): Promise<{ upserts: NoteUpsert[]; skipped: string[] }> {
    const upserts: NoteUpsert[] = [];
    const skipped: string[] = [];
    const BATCH = 20000;
    for (let i = 0; i < notes.length; i += BATCH) {
      const slice = notes.slice(i, i + BATCH);
      const [blobs, types] = await Promise.all([objectInfo(repo.dir, slice.map((n) => n.blob)), objectTypes(repo.dir, slice.map((n) => n.target))]);
      const oversized = (n: TreeNote) => (blobs.get(n.blob)?.size ?? 0) > MAX_NOTE_BYTES;
      const contents = new Map<string, string>();
      let group: string[] = [];
      let bytes = 0;
      const flush = async () => {
        for (const [id, text] of await readBlobs(repo.dir, group)) contents.set(id, text);
        group = [];
        bytes = 0;
      };
      for (const n of slice) {
        if (oversized(n)) continue;
        const size = blobs.get(n.blob)?.size ?? 0;
        if (group.length > 0 && bytes + size > READ_BATCH_BYTES) await flush();
        group.push(n.blob);
        bytes += size;
      }
      if (group.length > 0) await flush();
      for (const n of slice) {
        if (oversized(n)) {
          skipped.push(n.target);
          continue;
        }
        // A note on an object the repository lacks (pruned, or fetched without it) is still a note.
        upserts.push({ target: n.target, blob: n.blob, object_type: types.get(n.target) ?? 'unknown', content: contents.get(n.blob) ?? '' });
      }
    }
    return { upserts, skipped };
  }
}
