// One hosted repository's long-lived git processes and what they have read: a `cat-file
// --batch-command` for object types and contents, an `update-ref --stdin` that moves refs by
// compare-and-swap (git's own ref locking, so pushes and other instances are excluded as with
// `git update-ref <ref> <new> <old>`), and the trees and commits read or written, kept by id
// (objects never change). Processes start on first use; they end, and what was read is
// forgotten, after IDLE_MS unused.
import { GitSession, GitSessionExit, infoAnswer, linesAnswer, objectAnswer } from './interactive.js';
import { encodeCommit, encodeTree, parseTree, writeObject, zeroId, type CommitInput, type ObjectFormat, type TreeEntry } from './objects.js';

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

export class RepoGit {
  private reader: GitSession | undefined;
  private refs: GitSession | undefined;
  private readonly trees = new Map<string, TreeEntry[]>();
  private treeEntries = 0;
  private readonly commitTrees = new Map<string, string>();
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

  /** Type and size of an object, or undefined when the repository lacks it. */
  async info(oid: string): Promise<{ type: string; size: number } | undefined> {
    return this.session('reader').request(`info ${oid}\n`, infoAnswer);
  }

  /** Entries of a tree; the array is shared, so callers copy before changing it. */
  async readTree(oid: string): Promise<TreeEntry[]> {
    const hit = this.trees.get(oid);
    if (hit) {
      // Most recently used last: the map's order is the eviction order.
      this.trees.delete(oid);
      this.trees.set(oid, hit);
      return hit;
    }
    const obj = await this.session('reader').request(`contents ${oid}\n`, objectAnswer);
    if (!obj || obj.type !== 'tree') throw new Error(`tree ${oid} cannot be read`);
    const entries = parseTree(obj.body, this.format);
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

  writeBlob(content: Buffer): string {
    this.used();
    return writeObject(this.gitDir, this.format, 'blob', content);
  }

  /** Writes a tree of these entries (sorted as git sorts them) and remembers it. */
  writeTree(entries: TreeEntry[]): string {
    this.used();
    const oid = writeObject(this.gitDir, this.format, 'tree', encodeTree(entries, this.format));
    this.remember(oid, entries);
    return oid;
  }

  writeCommit(input: CommitInput): string {
    this.used();
    const oid = writeObject(this.gitDir, this.format, 'commit', encodeCommit(input));
    this.rememberCommit(oid, input.tree);
    return oid;
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
      await session.request(`start\nupdate ${ref} ${next} ${expected ?? zeroId(this.format)}\nprepare\ncommit\n`, linesAnswer(3));
    } catch (err) {
      if (!(err instanceof GitSessionExit)) throw err;
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

  /** Forgets one repository (deleted, or about to be). */
  drop(gitDir: string): void {
    this.repos.get(gitDir)?.close();
    this.repos.delete(gitDir);
  }

  close(): void {
    for (const r of this.repos.values()) r.close();
    this.repos.clear();
  }
}
