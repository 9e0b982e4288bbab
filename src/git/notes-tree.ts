// Reading git notes trees with git's own plumbing: `ls-tree`/`diff-tree` to list notes and what
// changed (at any fan-out), `cat-file --batch` to read note blobs, `log --raw` for attribution.
// Writing is src/git/notes-write.ts.
import { spawn } from 'node:child_process';
import { gitEnv, runGit } from './run.js';

/** A notes tree path (`ab/cd/ef01…` at any fan-out) to the annotated object id, else undefined. */
export function pathToTarget(path: string): string | undefined {
  const id = path.replaceAll('/', '');
  return /^([0-9a-f]{40}|[0-9a-f]{64})$/.test(id) ? id : undefined;
}

export interface TreeNote {
  target: string;
  blob: string;
}

/** Every note in the notes tree of `commit`. */
export async function listNotes(gitDir: string, commit: string): Promise<TreeNote[]> {
  const r = await runGit(gitDir, ['ls-tree', '-r', '-z', '--full-tree', commit]);
  if (r.code !== 0) throw new Error(`git ls-tree failed: ${r.stderr.trim()}`);
  const out: TreeNote[] = [];
  for (const rec of r.stdout.toString('utf8').split('\0')) {
    // `<mode> <type> <oid>\t<path>`
    const tab = rec.indexOf('\t');
    if (tab < 0) continue;
    const [, type, oid] = rec.slice(0, tab).split(' ');
    const target = pathToTarget(rec.slice(tab + 1));
    if (type === 'blob' && oid && target) out.push({ target, blob: oid });
  }
  return out;
}

export interface NoteChange {
  target: string;
  /** The note blob after the change; null when the note was removed. */
  blob: string | null;
}

/**
 * The notes that differ between two notes commits. A note moved by a fan-out change shows up
 * as removed at one path and added at another; the addition wins.
 */
export async function diffNotes(gitDir: string, from: string, to: string): Promise<NoteChange[]> {
  const r = await runGit(gitDir, ['diff-tree', '-r', '-z', '--no-abbrev', '--no-renames', from, to]);
  if (r.code !== 0) throw new Error(`git diff-tree failed: ${r.stderr.trim()}`);
  const fields = r.stdout.toString('utf8').split('\0');
  const byTarget = new Map<string, string | null>();
  // -z raw format: `:<modes> <oids> <status>` NUL `<path>` NUL, repeated.
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const meta = fields[i]!.split(' ');
    const target = pathToTarget(fields[i + 1]!);
    if (!target || meta.length < 5) continue;
    const status = meta[4]!;
    const newBlob = meta[3]!;
    if (status.startsWith('D')) {
      if (!byTarget.has(target)) byTarget.set(target, null);
    } else byTarget.set(target, newBlob);
  }
  return [...byTarget].map(([target, blob]) => ({ target, blob }));
}

/** Streams ids through one `git cat-file` process; `batch` gives contents, `batch-check` types and sizes. */
async function catFile(gitDir: string, mode: '--batch' | '--batch-check', ids: string[]): Promise<Map<string, { type: string; size: number; body?: Buffer }>> {
  const out = new Map<string, { type: string; size: number; body?: Buffer }>();
  if (ids.length === 0) return out;
  const child = spawn('git', ['--git-dir', gitDir, 'cat-file', mode], { env: gitEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => chunks.push(b));
  child.stdin.on('error', () => undefined);
  const done = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? -1));
  });
  child.stdin.end(ids.join('\n') + '\n');
  const code = await done;
  if (code !== 0) throw new Error(`git cat-file ${mode} failed (exit ${code})`);
  const buf = Buffer.concat(chunks);
  let pos = 0;
  for (const id of ids) {
    const nl = buf.indexOf(0x0a, pos);
    if (nl < 0) break;
    const header = buf.subarray(pos, nl).toString('utf8').split(' ');
    pos = nl + 1;
    if (header[1] === 'missing' || header.length < 3) continue;
    const size = Number(header[2]);
    if (mode === '--batch') {
      out.set(id, { type: header[1]!, size, body: buf.subarray(pos, pos + size) });
      pos += size + 1;
    } else out.set(id, { type: header[1]!, size });
  }
  return out;
}

/**
 * Contents of blobs as UTF-8 text, all read whole: callers pass only blobs whose sizes they
 * checked with objectInfo (the indexer never reads a note over the size limit).
 */
export async function readBlobs(gitDir: string, blobs: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(blobs)];
  const res = await catFile(gitDir, '--batch', unique);
  return new Map([...res].map(([id, v]) => [id, v.body?.toString('utf8') ?? '']));
}

/** Types and sizes of objects, without reading them; missing objects are left out. */
export async function objectInfo(gitDir: string, ids: string[]): Promise<Map<string, { type: string; size: number }>> {
  return catFile(gitDir, '--batch-check', [...new Set(ids)]);
}

/** Object types (`commit`, `tree`, `blob`, `tag`) of ids; missing objects are left out. */
export async function objectTypes(gitDir: string, ids: string[]): Promise<Map<string, string>> {
  const res = await objectInfo(gitDir, ids);
  return new Map([...res].map(([id, v]) => [id, v.type]));
}

// RFC 3339 (the `date-time` format of `at`) writes years 0000 to 9999 only.
const EARLIEST_MS = -62167219200000; // 0000-01-01T00:00:00Z
const LATEST_MS = 253402300799000; // 9999-12-31T23:59:59Z

/**
 * A commit's unix time (`%at`) as an RFC 3339 UTC time. Git stores whatever a commit says: a time
 * past year 9999 (or past what a JS Date can hold) is clamped to 9999-12-31T23:59:59Z, one before
 * year 0 to 0000-01-01T00:00:00Z, and one git cannot read (it prints nothing or garbage) is the
 * epoch, which is how git itself reads an unparseable date.
 */
export function commitTime(unixSeconds: string): string {
  const s = unixSeconds.trim();
  if (!/^-?\d+$/.test(s)) return new Date(0).toISOString();
  const ms = Number(s) * 1000;
  return new Date(Math.min(LATEST_MS, Math.max(EARLIEST_MS, ms))).toISOString();
}

export interface Attribution {
  commit: string;
  name: string;
  email: string;
  at: string;
  exact: boolean;
}

/** One commit of a notes ref's first-parent history that changed the note on a target. */
export interface NoteTouch {
  commit: string;
  name: string;
  email: string;
  at: string;
  /** The note's blob before and after the commit (null: no note). */
  before: string | null;
  after: string | null;
}

/** What one bounded walk of a notes ref saw of a target. */
export interface NoteWalk {
  /** The commits that changed the note, newest first. */
  touches: NoteTouch[];
  /** The oldest commit walked (undefined: none could be read). */
  oldest?: Omit<NoteTouch, 'before' | 'after'>;
  /** How many commits were walked. */
  walked: number;
  /** Whether the walk reached the ref's root commit (false: it stopped at its bound). */
  complete: boolean;
}

/**
 * The one bounded walk of a notes ref that attribution and history share: at most `limit` commits
 * (first parents, newest first, one `git log` whose output stops there, however long the ref's
 * history), and of each the change it made to the note on `target`. Moves between fan-out paths
 * keep the blob (before equals after). Merge commits of `git notes merge` are seen through their
 * first parent (what the merge brought in shows as the merge commit's change).
 */
export async function walkNote(gitDir: string, tip: string, target: string, limit: number): Promise<NoteWalk | undefined> {
  const r = await runGit(gitDir, ['log', '--first-parent', '--root', '-r', '--raw', '--no-abbrev', '--no-renames', '-z', `--max-count=${limit}`, '--format=%x01%H%x00%an%x00%ae%x00%at', tip]);
  if (r.code !== 0) return undefined;
  const commits = r.stdout.toString('utf8').split('\x01').filter(Boolean);
  const walk: NoteWalk = { touches: [], walked: commits.length, complete: commits.length < limit };
  for (const rec of commits) {
    const fields = rec.split('\0');
    const [hash, name, email, at] = fields as [string, string, string, string];
    walk.oldest = { commit: hash, name, email, at: commitTime(at) };
    let before: string | null | undefined; // undefined: this commit did not touch the note
    let after: string | null | undefined;
    for (let i = 4; i + 1 < fields.length; i += 2) {
      const meta = fields[i]!.replace(/^\n/, '').split(' ');
      if (meta.length < 5 || pathToTarget(fields[i + 1]!) !== target) continue;
      const status = meta[4]!;
      if (status.startsWith('D')) before = meta[2]!;
      else if (status.startsWith('A')) after = meta[3]!;
      else {
        before = meta[2]!;
        after = meta[3]!;
      }
    }
    if (before === undefined && after === undefined) continue;
    walk.touches.push({ ...walk.oldest, before: before ?? null, after: after ?? null });
  }
  return walk;
}

/**
 * Who set the note on `target` to its current blob: in one bounded walk (walkNote), the newest
 * commit whose change gave the note its current blob from a different one (or from nothing).
 * Moves between fan-out paths keep the blob and are walked past. `exact: false` when the walk hit
 * its bound first.
 */
export async function noteAttribution(gitDir: string, tip: string, target: string, currentBlob: string, limit: number): Promise<Attribution | undefined> {
  const walk = await walkNote(gitDir, tip, target, limit);
  if (!walk) return undefined;
  const who = (t: Omit<NoteTouch, 'before' | 'after'>, exact: boolean): Attribution => ({ commit: t.commit, name: t.name, email: t.email, at: t.at, exact });
  for (const t of walk.touches) if (t.after === currentBlob && t.before !== currentBlob) return who(t, true);
  const lastTouch = walk.touches[walk.touches.length - 1];
  if (walk.complete && lastTouch) return who(lastTouch, true);
  const guess = lastTouch ?? walk.oldest;
  return guess ? who(guess, false) : undefined;
}

/** One version of a note: its blob (null: the commit removed it) and the commit that made it. */
export interface NoteVersion {
  commit: string;
  name: string;
  email: string;
  at: string;
  blob: string | null;
}

/**
 * The versions of the note on `target`, newest first, from one bounded walk (walkNote): each
 * commit that gave the note a different blob, or removed it. A move between fan-out paths (same
 * blob) is not a version. At most `max` versions; `complete` false when older versions may exist
 * (the walk stopped at its bound, or `max` was reached first).
 */
export async function noteVersions(gitDir: string, tip: string, target: string, walkLimit: number, max: number): Promise<{ versions: NoteVersion[]; complete: boolean } | undefined> {
  const walk = await walkNote(gitDir, tip, target, walkLimit);
  if (!walk) return undefined;
  const versions: NoteVersion[] = [];
  for (const t of walk.touches) {
    if (t.before === t.after) continue;
    if (versions.length === max) return { versions, complete: false };
    versions.push({ commit: t.commit, name: t.name, email: t.email, at: t.at, blob: t.after });
  }
  return { versions, complete: walk.complete };
}
