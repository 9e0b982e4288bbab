// One hosted repository's long-lived git processes and what they have read: a `cat-file
// --batch-command` for object types and contents, an `update-ref --stdin` that moves refs by
// compare-and-swap (git's own ref locking, so pushes and other instances are excluded as with
// `git update-ref <ref> <new> <old>`), and the trees and commits read or written, kept by id
// (objects never change). New objects are gathered and written as one pack per flush (a note
// group's objects in two files); the small packs this leaves are merged now and then by `git
// repack --geometric`. Processes start on first use; they end, and what was read is forgotten,
// after IDLE_MS unused.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { GitSession, GitSessionExit, answers, infoAnswer, lineAnswer, objectAnswer } from './interactive.js';
import { encodeCommit, encodeTree, objectId, ownBytes, parseTree, zeroId, type CommitInput, type ObjectFormat, type ObjectType, type TreeEntry } from './objects.js';
import { writePack, type PackObject } from './pack.js';
import { runGit } from './run.js';
import { gitDiskFull } from '../util/disk-full.js';

/** The ref was moved by someone else between our read and our write. */
export class RefMovedError extends Error {
  constructor(ref: string) {
    super(`${ref} moved during the write`);
  }
}

/** The ref cannot be created because another ref sits on its path (`a` beside `a/b`). */
export class RefConflictError extends Error {
  constructor(ref: string, detail: string) {
    super(`${ref} cannot be created: ${detail}`);
  }
}

/** How long a repository's git processes outlive their last request. */
const IDLE_MS = 10_000;
/** Tree entries remembered per repository (a notes tree of 100,000 notes at fan-out 2 has some 166,000). */
const TREE_ENTRIES = 250_000;
const COMMIT_TREES = 1_000;
/** Packs written between two counts of the repository's packs. */
const PACK_COUNT_EVERY = 20;
/**
 * More packs than this, and the small ones are merged: few enough that git's lookups stay quick
 * and `git gc --auto` (at 50 packs, a full repack) is not set off, rare enough that starting git
 * (a fork of this process) costs little.
 */
const PACK_LIMIT = 36;

export class RepoGit {
  private reader: GitSession | undefined;
  private refs: GitSession | undefined;
  private readonly trees = new Map<string, TreeEntry[]>();
  private treeEntries = 0;
  private readonly commitTrees = new Map<string, string>();
  /** Objects made since the last flush, by id: written by flush(), readable from here until then. */
  private readonly staged = new Map<string, PackObject>();
  private packsSinceCount = 0;
  private readonly infoQueue: { oid: string; resolve(v: { type: string; size: number } | undefined): void; reject(err: unknown): void }[] = [];
  private infoRunning = false;
  private repacking: Promise<unknown> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly gitDir: string,
    readonly format: ObjectFormat,
    private readonly reflogMessage: string,
  ) {
    this.timer = setTimeout(() => this.close(), IDLE_MS);
    this.timer.unref();
  }

  private used(): void {
    this.timer.refresh();
  }

  private session(kind: 'reader' | 'refs'): GitSession {
    this.used();
    if (kind === 'reader') {
      if (!this.reader || this.reader.dead) this.reader = new GitSession(this.gitDir, ['cat-file', '--batch-command']);
      return this.reader;
    }
    if (!this.refs || this.refs.dead) this.refs = new GitSession(this.gitDir, ['update-ref', '-m', this.reflogMessage, '--stdin']);
    return this.refs;
  }

  /**
   * Type and size of an object, or undefined when the repository lacks it. Asked while another
   * question is out, questions wait and go together: one write and one answer read for all.
   */
  info(oid: string): Promise<{ type: string; size: number } | undefined> {
    return new Promise((resolve, reject) => {
      this.infoQueue.push({ oid, resolve, reject });
      if (!this.infoRunning) void this.askInfo();
    });
  }

  private async askInfo(): Promise<void> {
    this.infoRunning = true;
    while (this.infoQueue.length > 0) {
      const batch = this.infoQueue.splice(0, this.infoQueue.length);
      try {
        const got = await this.session('reader').request(batch.map((q) => `info ${q.oid}\n`).join(''), answers(infoAnswer, batch.length));
        batch.forEach((q, i) => q.resolve(got[i]));
      } catch (err) {
        for (const q of batch) q.reject(err);
      }
    }
    this.infoRunning = false;
  }

  /** Entries of a tree; the array is shared, so callers copy before changing it. */
  async readTree(oid: string): Promise<TreeEntry[]> {
    return (await this.readTrees([oid]))[0]!;
  }

  /** Entries of trees (shared arrays, as readTree); the ones not in memory are read in one request. */
  async readTrees(oids: readonly string[]): Promise<TreeEntry[][]> {
    const out: (TreeEntry[] | undefined)[] = oids.map((oid) => this.knownTree(oid));
    const missing = [...new Set(oids.filter((_, i) => out[i] === undefined))];
    if (missing.length > 0) {
      const got = await this.session('reader').request(missing.map((oid) => `contents ${oid}\n`).join(''), answers(objectAnswer, missing.length));
      const read = new Map<string, TreeEntry[]>();
      missing.forEach((oid, i) => {
        const obj = got[i];
        if (!obj || obj.type !== 'tree') throw new Error(`tree ${oid} cannot be read`);
        // A copy: the answer is a view of the session's read buffer, which it would keep alive
        // (ownBytes: not in Node's shared pool either, where it would keep an 8 KiB slab alive).
        const entries = parseTree(ownBytes(obj.body), this.format);
        read.set(oid, entries);
        this.remember(oid, entries);
      });
      oids.forEach((oid, i) => (out[i] ??= read.get(oid)));
    }
    return out as TreeEntry[][];
  }

  /** A tree in memory (remembered, or made since the last flush), else undefined. */
  private knownTree(oid: string): TreeEntry[] | undefined {
    const hit = this.trees.get(oid);
    if (hit) {
      // Most recently used last: the map's order is the eviction order.
      this.trees.delete(oid);
      this.trees.set(oid, hit);
      return hit;
    }
    const staged = this.staged.get(oid);
    if (!staged) return undefined;
    const entries = parseTree(staged.body, this.format);
    this.remember(oid, entries);
    return entries;
  }

  /** The root tree of a commit. */
  async commitTree(commit: string): Promise<string> {
    const hit = this.commitTrees.get(commit);
    if (hit) return hit;
    const obj = await this.session('reader').request(`contents ${commit}\n`, objectAnswer);
    const tree = obj?.type === 'commit' ? /^tree ([0-9a-f]+)\n/.exec(obj.body.toString('latin1'))?.[1] : undefined;
    if (!tree) throw new Error(`commit ${commit} cannot be read`);
    this.rememberCommit(commit, tree);
    return tree;
  }

  /**
   * The raw bodies of those of `oids` that are commits, in one request to the long-lived reader
   * (copies: the answers are views of its read buffer). What is missing or not a commit is left out.
   */
  async readCommits(oids: readonly string[]): Promise<Map<string, Buffer>> {
    const unique = [...new Set(oids)];
    const out = new Map<string, Buffer>();
    if (unique.length === 0) return out;
    const got = await this.session('reader').request(unique.map((oid) => `contents ${oid}\n`).join(''), answers(objectAnswer, unique.length));
    unique.forEach((oid, i) => {
      const obj = got[i];
      if (obj?.type === 'commit') out.set(oid, ownBytes(obj.body));
    });
    return out;
  }

  /** Trees and their entries in memory (a figure for tests and diagnostics). */
  get remembered(): { trees: number; entries: number } {
    return { trees: this.trees.size, entries: this.treeEntries };
  }

  /** Drops a remembered tree that a write superseded (it is read from git again if ever asked for). */
  forgetTree(oid: string): void {
    const entries = this.trees.get(oid);
    if (!entries) return;
    this.trees.delete(oid);
    this.treeEntries -= entries.length + 1;
  }

  private remember(oid: string, entries: TreeEntry[]): void {
    if (this.trees.has(oid)) return;
    this.trees.set(oid, entries);
    this.treeEntries += entries.length + 1;
    for (const [old, e] of this.trees) {
      if (this.treeEntries <= TREE_ENTRIES) break;
      this.trees.delete(old);
      this.treeEntries -= e.length + 1;
    }
  }

  private rememberCommit(commit: string, tree: string): void {
    if (this.commitTrees.size >= COMMIT_TREES) this.commitTrees.clear();
    this.commitTrees.set(commit, tree);
  }

  private stage(type: ObjectType, body: Buffer): string {
    this.used();
    const id = objectId(this.format, type, body);
    this.staged.set(id, { id, type, body });
    return id;
  }

  /** A blob to write at the next flush; its id. */
  addBlob(content: Buffer): string {
    return this.stage('blob', content);
  }

  /** A tree of these entries (sorted as git sorts them) to write at the next flush, remembered. */
  addTree(entries: TreeEntry[]): string {
    const id = this.stage('tree', encodeTree(entries, this.format));
    this.remember(id, entries);
    return id;
  }

  /** A commit to write at the next flush; its id. */
  addCommit(input: CommitInput): string {
    const id = this.stage('commit', encodeCommit(input));
    this.rememberCommit(id, input.tree);
    return id;
  }

  /** Writes every object added since the last flush, as one pack. */
  flush(): void {
    if (this.staged.size === 0) return;
    const objects = [...this.staged.values()];
    this.staged.clear();
    writePack(this.gitDir, this.format, objects);
    if (++this.packsSinceCount >= PACK_COUNT_EVERY) {
      this.packsSinceCount = 0;
      this.mergeSmallPacks();
    }
  }

  /**
   * Merges small packs into one when there are many, in the background. `--geometric` rolls up
   * only the small packs (not the large one a clone or import left) and keeps every object they
   * hold, so objects of a group whose ref has not moved yet are never lost.
   */
  private mergeSmallPacks(): void {
    if (this.repacking) return;
    let packs = 0;
    try {
      packs = readdirSync(join(this.gitDir, 'objects', 'pack')).filter((f) => f.endsWith('.pack')).length;
    } catch {
      return;
    }
    if (packs <= PACK_LIMIT) return;
    // Another instance may repack at once; the loser fails and leaves every pack in place.
    this.repacking = runGit(this.gitDir, ['repack', '-d', '-q', '--geometric=2'])
      .catch(() => undefined)
      .finally(() => (this.repacking = undefined));
  }

  /** Waits for a background repack, if one runs (tests, and close before a repository is deleted). */
  async settled(): Promise<void> {
    await this.repacking;
  }

  /**
   * Moves `ref` to `next` if it is at `expected` (null: if it does not exist), as one ref
   * transaction of the long-lived `update-ref --stdin`. Rejects with RefMovedError when the ref
   * is elsewhere or locked by another writer, RefConflictError when another ref is in the way.
   */
  async updateRef(ref: string, next: string, expected: string | null): Promise<void> {
    const session = this.session('refs');
    try {
      // All four commands at once: a failed `prepare` ends the process before `commit` is read.
      await session.request(`start\nupdate ${ref} ${next} ${expected ?? zeroId(this.format)}\nprepare\ncommit\n`, answers(lineAnswer, 3));
    } catch (err) {
      if (!(err instanceof GitSessionExit)) throw err;
      // Before the lock messages: git says "cannot lock ref" for a lock file it could not write.
      const full = gitDiskFull(err.stderr, this.gitDir, `moving ${ref}`);
      if (full) throw full;
      // A ref on the new ref's path is not a race: retrying cannot help.
      const conflict = /'([^']+)' exists; cannot create|blocking reference '([^']+)'/.exec(err.stderr);
      if (conflict) throw new RefConflictError(ref, `${conflict[1] ?? conflict[2]} exists`);
      if (/cannot lock ref|but expected|already exists|is at|unable to resolve reference/i.test(err.stderr)) throw new RefMovedError(ref);
      throw new Error(`git update-ref failed: ${err.stderr.trim()}`);
    }
  }

  /** Ends the processes and forgets what was read (a later request starts them again). */
  close(): void {
    // The timer stays: it holds nothing (unref'd), and a later request re-arms it.
    this.reader?.close();
    this.refs?.close();
    this.reader = undefined;
    this.refs = undefined;
    this.trees.clear();
    this.treeEntries = 0;
    this.commitTrees.clear();
  }
}

/** Every repository's RepoGit, by directory: one set of processes per repository in this process. */
export class RepoGitPool {
  private readonly repos = new Map<string, RepoGit>();

  constructor(private readonly reflogMessage = 'mkt: note written through the API') {}

  get(gitDir: string, format: ObjectFormat): RepoGit {
    let r = this.repos.get(gitDir);
    if (!r || r.format !== format) {
      r?.close();
      r = new RepoGit(gitDir, format, this.reflogMessage);
      this.repos.set(gitDir, r);
    }
    return r;
  }

  /** Ends every repository's processes, and waits for background repacks (a data dir may be removed next). */
  async close(): Promise<void> {
    const all = [...this.repos.values()];
    this.repos.clear();
    for (const r of all) r.close();
    await Promise.all(all.map((r) => r.settled()));
  }
}
