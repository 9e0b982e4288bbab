// Writing notes as notes commits by rewriting only the trees on each note's path (root, then the
// fan-out subtrees it lives under). Objects are made in node (src/git/objects.ts) and written as
// one pack per call (src/git/pack.ts); trees are read through the repository's long-lived
// `cat-file` (or from memory: trees just written are remembered), so a write starts no git process. Several changes
// become a chain of commits, one per note with its own author and message, and the ref moves once
// with a compare-and-swap (src/git/repo-git.ts): a ref moved by someone else fails the write with
// RefMovedError, a ref in the way (`a` beside `a/b`) with RefConflictError.
import { BLOB_MODE, TREE_MODE, formatOfId, withEntry, type TreeEntry } from './objects.js';
import { RepoGit, RefConflictError, RefMovedError } from './repo-git.js';

export { RefConflictError, RefMovedError };

export interface NoteAuthor {
  name: string;
  email: string;
}

/** A tree level holding more entries than this gets new notes in a two-hex-digit subtree. */
export const FANOUT_THRESHOLD = 256;

/** One note to add, replace (content given) or remove (content null), as one notes commit. */
export interface NoteChange {
  target: string;
  content: string | null;
  author: NoteAuthor;
  message: string;
  nowSeconds: number;
}

/** A note's entry is a blob (a gitlink or a subtree of the same name is not the note). */
const isNote = (e: TreeEntry, name: string) => e.name === name && e.mode !== TREE_MODE && e.mode !== '160000';

/**
 * The root tree after one change to the notes tree `root` (null: no notes yet). An existing note
 * is found at whatever fan-out it was written; a new one goes into the deepest existing subtree
 * on its path, or a new subtree when that tree is already large.
 */
async function changeTree(repo: RepoGit, root: string | null, change: NoteChange): Promise<string> {
  const { target } = change;
  // levels[i] is the tree at fan-out depth i on the target's path.
  const levels: TreeEntry[][] = [];
  // oids[i] is that tree's id (null: none yet), so that the trees this change supersedes are forgotten.
  const oids: (string | null)[] = [];
  let tree: string | null = root;
  let depth = 0;
  let foundAt = -1;
  for (;;) {
    const entries = tree === null ? [] : await repo.readTree(tree);
    levels.push(entries);
    oids.push(tree);
    const rest = target.slice(depth * 2);
    if (entries.some((e) => isNote(e, rest))) {
      foundAt = depth;
      break;
    }
    const sub = entries.find((e) => e.mode === TREE_MODE && e.name === rest.slice(0, 2));
    if (!sub || rest.length <= 2) break;
    tree = sub.oid;
    depth++;
  }
  const blob = change.content === null ? null : repo.addBlob(Buffer.from(change.content, 'utf8'));
  if (blob === null && foundAt < 0) throw new Error('no note to remove'); // callers check first
  let at = foundAt >= 0 ? foundAt : levels.length - 1;
  if (foundAt < 0 && levels[at]!.length >= FANOUT_THRESHOLD && target.length - at * 2 > 2) {
    // Grow the fan-out for this note: a fresh subtree below the crowded level.
    levels.push([]);
    at++;
  }
  // Rebuild bottom-up; remembered trees are shared, so each level is a changed copy.
  let child: { name: string; oid: string | null } | undefined;
  for (let d = levels.length - 1; d >= 0; d--) {
    let entries: TreeEntry[];
    if (d === at) {
      const name = target.slice(d * 2);
      entries = withEntry(levels[d]!, name, blob ? { mode: BLOB_MODE, name, oid: blob } : null);
    } else {
      const c = child!;
      entries = withEntry(levels[d]!, c.name, c.oid ? { mode: TREE_MODE, name: c.name, oid: c.oid } : null);
    }
    const oid = entries.length === 0 && d > 0 ? null : repo.addTree(entries);
    // The tree this one replaces is read again only if an older commit is: not kept in memory,
    // where every write would otherwise leave its superseded path (bench/README.md, "Soak").
    const old = oids[d];
    if (old && old !== oid) repo.forgetTree(old);
    child = { name: target.slice((d - 1) * 2, d * 2), oid };
  }
  return child!.oid!;
}

/**
 * Reads every tree on the targets' paths below `root` that is not in memory yet, one request per
 * fan-out level, so that the changes then find them all in memory.
 */
async function readPaths(repo: RepoGit, root: string, targets: string[]): Promise<void> {
  let level = new Map<string, string[]>([[root, targets]]);
  for (let depth = 0; level.size > 0; depth++) {
    const oids = [...level.keys()];
    const trees = await repo.readTrees(oids);
    const next = new Map<string, string[]>();
    oids.forEach((oid, i) => {
      for (const target of level.get(oid)!) {
        const rest = target.slice(depth * 2);
        if (rest.length <= 2 || trees[i]!.some((e) => isNote(e, rest))) continue;
        const sub = trees[i]!.find((e) => e.mode === TREE_MODE && e.name === rest.slice(0, 2));
        if (sub) next.set(sub.oid, [...(next.get(sub.oid) ?? []), target]);
      }
    });
    level = next;
  }
}

/**
 * Writes one notes commit per change, each on top of the one before and the first on `base`
 * (null: the ref does not exist yet), and returns their ids in order. Only objects are written:
 * nothing is reachable until the caller moves the ref (RepoGit.updateRef).
 */
export async function writeNoteCommits(repo: RepoGit, base: string | null, changes: readonly NoteChange[]): Promise<string[]> {
  const commits: string[] = [];
  let parent = base;
  let root = base === null ? null : await repo.commitTree(base);
  if (root !== null) await readPaths(repo, root, changes.map((c) => c.target));
  for (const change of changes) {
    root = await changeTree(repo, root, change);
    parent = repo.addCommit({ tree: root, parent, name: change.author.name, email: change.author.email, seconds: change.nowSeconds, message: change.message });
    commits.push(parent);
  }
  repo.flush();
  return commits;
}

type WriteInput = NoteChange & { ref: string; expectedTip: string | null };

/**
 * Adds, replaces (content given) or removes (content null) the note on `target` in `ref`, as one
 * notes commit whose parent is `expectedTip` (null: the ref must not exist yet), with processes of
 * its own. Resolves with the new commit id; rejects with RefMovedError when the ref no longer
 * points at `expectedTip`. The server writes through NoteWriter, which groups writes.
 */
export async function writeNote(gitDir: string, input: WriteInput): Promise<string> {
  const repo = new RepoGit(gitDir, formatOfId(input.target), 'mkt: note written through the API');
  try {
    const [commit] = await writeNoteCommits(repo, input.expectedTip, [input]);
    await repo.updateRef(input.ref, commit!, input.expectedTip);
    return commit!;
  } finally {
    repo.close();
    // Nothing of this call outlives it (a caller may remove the repository next).
    await repo.settled();
  }
}
