// Keeps the notes index in step with the notes refs of a repository: compares the refs on disk
// with the tips the index reflects and catches up each moved ref by diffing its old and new
// notes trees (a full read of the tree only when the old tip is unknown or gone). Work on one
// repository is serialised, and API writes run inside the same lock.
import { listNotesRefs, readRef } from '../git/refs.js';
import { diffNotes, listNotes, objectInfo, objectTypes, readBlobs, type TreeNote } from '../git/notes-tree.js';
import { runGit } from '../git/run.js';
import type { IndexedNote, NotesIndex, NoteUpsert } from '../store/notes.js';
import { MAX_NOTE_BYTES } from '../schemas/notes.js';
import { checkNamespace, namespaceOfRef } from './namespace.js';

export interface HostedRepo {
  id: string;
  dir: string;
}

export class RepoLocks {
  private readonly tails = new Map<string, Promise<unknown>>();
  /** Runs fn after every earlier holder of the same key has finished. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
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
/** Note blobs read by one `cat-file --batch` process at most, in bytes (each blob is at most MAX_NOTE_BYTES). */
const READ_BATCH_BYTES = 64 * 1024 * 1024;

export class NotesIndexer {
  readonly locks = new RepoLocks();
  /** Per repository: namespace → tip the index reflects (mirrors notes_refs, saves a query a read). */
  private readonly indexTips = new Map<string, Map<string, string>>();
  /** Per repository: `namespace\0target` → indexed note (or its absence), for repeated reads. */
  private readonly notes = new Map<string, Map<string, IndexedNote | undefined>>();
  private cachedNotes = 0;
  /** Per repository and namespace: the tip last read from disk and when. */
  private readonly diskTips = new Map<string, { tip: string | undefined; at: number }>();

  constructor(private readonly index: NotesIndex) {}

  /** Namespace → tip the index reflects for a repository. */
  tips(repoId: string): Map<string, string> {
    let t = this.indexTips.get(repoId);
    if (!t) {
      t = this.index.tips(repoId);
      this.indexTips.set(repoId, t);
    }
    return t;
  }

  /** The indexed note on a target, remembered until the repository's index changes. */
  note(repoId: string, namespace: string, target: string): IndexedNote | undefined {
    let m = this.notes.get(repoId);
    if (!m) this.notes.set(repoId, (m = new Map()));
    const key = `${namespace}\0${target}`;
    if (m.has(key)) return m.get(key);
    const n = this.index.get(repoId, namespace, target);
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

  /** Records one API write in the index (the ref now at `tip`) and drops what is cached. */
  applyWrite(repoId: string, namespace: string, tip: string, upserts: NoteUpsert[], removals: string[]): void {
    this.index.apply(repoId, namespace, tip, upserts, removals);
    this.invalidate(repoId);
  }

  /** Forgets what is cached of a repository; every change of its index or refs calls this. */
  private invalidate(repoId: string): void {
    this.indexTips.delete(repoId);
    this.cachedNotes -= this.notes.get(repoId)?.size ?? 0;
    this.notes.delete(repoId);
    for (const k of this.diskTips.keys()) if (k.startsWith(`${repoId}\0`)) this.diskTips.delete(k);
  }

  private diskTip(repo: HostedRepo, namespace: string): string | undefined {
    const key = `${repo.id}\0${namespace}`;
    const now = performance.now();
    const hit = this.diskTips.get(key);
    if (hit && now - hit.at < REF_READ_TTL_MS) return hit.tip;
    const tip = readRef(repo.dir, `refs/notes/${namespace}`);
    // Only namespaces that exist (on disk or in the index) are remembered: names anyone may ask
    // for must not grow the map. The cap bounds it even for a repository with very many refs.
    if (tip !== undefined || this.tips(repo.id).has(namespace)) {
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
  isCurrent(repo: HostedRepo, namespace: string): boolean {
    return this.tips(repo.id).get(namespace) === this.diskTip(repo, namespace);
  }

  /** Brings the index up to date with every notes ref of the repository. */
  async ensureCurrent(repo: HostedRepo): Promise<void> {
    if (this.repoIsCurrent(repo)) return;
    await this.locks.run(repo.id, () => this.catchUp(repo));
  }

  /** Brings the index up to date when one namespace's ref moved (callers holding the lock use catchUp). */
  async ensureRefCurrent(repo: HostedRepo, namespace: string): Promise<void> {
    if (this.isCurrent(repo, namespace)) return;
    await this.locks.run(repo.id, () => this.catchUp(repo));
  }

  private repoIsCurrent(repo: HostedRepo): boolean {
    if (!this.index.isIndexed(repo.id)) return false;
    const disk = this.validRefs(repo);
    const known = this.tips(repo.id);
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
      if (c.ok || c.reserved) out.set(ns, tip);
    }
    return out;
  }

  /** Must run inside the repository lock. */
  async catchUp(repo: HostedRepo): Promise<void> {
    const disk = this.validRefs(repo);
    const known = this.index.tips(repo.id);
    for (const ns of known.keys()) if (!disk.has(ns)) this.index.dropRef(repo.id, ns);
    for (const [ns, tip] of disk) {
      const old = known.get(ns);
      if (old === tip) continue;
      await this.catchUpRef(repo, ns, old, tip);
    }
    this.index.markIndexed(repo.id);
    this.invalidate(repo.id);
  }

  private async catchUpRef(repo: HostedRepo, ns: string, oldTip: string | undefined, tip: string): Promise<void> {
    if (oldTip && (await this.objectExists(repo, oldTip))) {
      const changes = await diffNotes(repo.dir, oldTip, tip);
      const present = changes.filter((c): c is { target: string; blob: string } => c.blob !== null);
      const { upserts, skipped } = await this.describe(repo, present);
      // A note that grew past the limit drops its earlier, indexed version too.
      this.index.apply(repo.id, ns, tip, upserts, [...changes.filter((c) => c.blob === null).map((c) => c.target), ...skipped]);
    } else {
      this.index.replaceRef(repo.id, ns, tip, (await this.describe(repo, await listNotes(repo.dir, tip))).upserts);
    }
  }

  /** Full rebuild of a repository's part of the index (`mkt admin reindex`). */
  async rebuild(repo: HostedRepo): Promise<{ namespaces: number; notes: number }> {
    return this.locks.run(repo.id, async () => {
      this.index.dropRepo(repo.id);
      let notes = 0;
      const refs = this.validRefs(repo);
      for (const [ns, tip] of refs) {
        const all = (await this.describe(repo, await listNotes(repo.dir, tip))).upserts;
        this.index.replaceRef(repo.id, ns, tip, all);
        notes += all.length;
      }
      this.index.markIndexed(repo.id);
      this.invalidate(repo.id);
      return { namespaces: refs.size, notes };
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
