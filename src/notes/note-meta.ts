// What the index keeps about a note besides its text (issue 36): who last changed it and when,
// read from the notes ref's history, and the subject and author of the commit it annotates.
// One `git log` over the ref (or over the commits a catch-up adds) attributes every note at
// once; one `git log --no-walk --stdin` reads every annotated commit at once.
import { commitTime, pathToTarget } from '../git/notes-tree.js';
import { runGit } from '../git/run.js';
import type { RepoGit } from '../git/repo-git.js';
import type { NoteMeta } from '../store/notes.js';

/** Who changed a note last and when (ms since the epoch). */
export interface NoteChanger {
  note_author: string;
  note_email: string;
  note_at: number;
}

/** A commit's subject line and author name. */
export interface CommitSummary {
  subject: string;
  author: string;
}

interface Touch {
  before: string | null;
  after: string | null;
}

/** Who last changed a note, and the blob that change gave it (the note's blob at the tip). */
export interface NoteChange extends NoteChanger {
  blob: string;
}

/**
 * Who last changed each note, walking the ref's first-parent history newest first from `tip`
 * (down to, not including, `from` when given): the newest commit whose change gave the note its
 * blob at the tip from another one or from nothing. A move between fan-out paths keeps the blob
 * and is walked past. `wanted` (target → blob at the tip) limits the walk to those notes; without
 * it every note the walked commits touched and the tip still holds is reported, its blob taken
 * from its newest change (what a catch-up uses to see notes removed and added back unchanged).
 * Notes no walked commit changed are left out. Throws when git fails.
 */
export async function noteChangers(gitDir: string, tip: string, wanted?: ReadonlyMap<string, string>, from?: string): Promise<Map<string, NoteChange>> {
  const out = new Map<string, NoteChange>();
  if (wanted?.size === 0) return out;
  const args = ['log', '--first-parent', '--root', '-r', '--raw', '--no-abbrev', '--no-renames', '-z', '--format=%x01%H%x00%at%x00%an%x00%ae', tip];
  if (from !== undefined) args.push(`^${from}`);
  const r = await runGit(gitDir, args);
  if (r.code !== 0) throw new Error(`git log of the notes ref failed: ${r.stderr.trim()}`);
  const tokens = r.stdout.toString('utf8').split('\0');
  /** Target → its blob at the tip (null: the tip has no note there), once known. */
  const atTip = new Map<string, string | null>(wanted);
  const done = new Set<string>();
  let i = 0;
  while (i < tokens.length && (wanted === undefined || done.size < wanted.size)) {
    const head = tokens[i]!.replace(/^\n/, '');
    if (!head.startsWith('\x01')) {
      i++;
      continue;
    }
    // Read by position: a name may hold any character but NUL.
    const who: NoteChanger = { note_author: tokens[i + 2] ?? '', note_email: tokens[i + 3] ?? '', note_at: Date.parse(commitTime(tokens[i + 1] ?? '')) };
    i += 4;
    const touched = new Map<string, Touch>();
    for (;;) {
      const meta = (tokens[i] ?? '').replace(/^\n/, '');
      if (!meta.startsWith(':')) break;
      const target = pathToTarget(tokens[i + 1] ?? '');
      i += 2;
      const parts = meta.split(' ');
      if (!target || parts.length < 5 || done.has(target) || (wanted !== undefined && !wanted.has(target))) continue;
      const t = touched.get(target) ?? { before: null, after: null };
      const status = parts[4]!;
      if (status.startsWith('D')) t.before = parts[2]!;
      else if (status.startsWith('A')) t.after = parts[3]!;
      else {
        t.before = parts[2]!;
        t.after = parts[3]!;
      }
      touched.set(target, t);
    }
    for (const [target, t] of touched) {
      if (!atTip.has(target)) atTip.set(target, t.after);
      const blob = atTip.get(target)!;
      if (blob === null) done.add(target);
      else if (t.after === blob && t.before !== blob) {
        out.set(target, { ...who, blob });
        done.add(target);
      }
    }
  }
  return out;
}

/** git's whitespace (its own `isspace`: space, tab, LF and CR; not VT or FF). */
const GIT_SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

function blank(line: Buffer): boolean {
  for (const b of line) if (!GIT_SPACE.has(b)) return false;
  return true;
}

/** `line` without its trailing whitespace. */
function trimEnd(line: Buffer): Buffer {
  let end = line.length;
  while (end > 0 && GIT_SPACE.has(line[end - 1]!)) end--;
  return line.subarray(0, end);
}

/**
 * A raw commit's subject and author name as `git log --format=%s` and `%an` print them: the
 * author's name is its ident line up to the `<`, trailing whitespace dropped (empty without a
 * `<`); the subject is the message's first paragraph after any blank lines, each line's trailing
 * whitespace dropped, joined by spaces. Undefined for a commit that declares an encoding other
 * than UTF-8, which git log re-encodes: the caller asks git for those.
 */
export function summaryOfCommit(body: Buffer): CommitSummary | undefined {
  const end = body.indexOf('\n\n');
  const headers = body.subarray(0, end < 0 ? body.length : end).toString('utf8').split('\n');
  let author = '';
  let seenAuthor = false;
  for (const h of headers) {
    if (h.startsWith('encoding ') && !/^utf-?8$/i.test(h.slice('encoding '.length))) return undefined;
    if (!seenAuthor && h.startsWith('author ')) {
      seenAuthor = true;
      const ident = h.slice('author '.length);
      const lt = ident.indexOf('<');
      author = lt < 0 ? '' : ident.slice(0, lt).replace(/[ \t\r]+$/, '');
    }
  }
  const lines: Buffer[] = [];
  if (end >= 0) {
    let pos = end + 2;
    let started = false;
    while (pos < body.length) {
      const nl = body.indexOf(0x0a, pos);
      const line = body.subarray(pos, nl < 0 ? body.length : nl);
      pos = nl < 0 ? body.length : nl + 1;
      if (blank(line)) {
        if (started) break;
        continue;
      }
      started = true;
      lines.push(trimEnd(line));
    }
  }
  return { author, subject: Buffer.concat(lines.flatMap((l, i) => (i === 0 ? [l] : [Buffer.from(' '), l]))).toString('utf8') };
}

/**
 * Subjects and author names of commits (ids the caller knows are commits), in one git process.
 * A commit git cannot read is left out.
 */
export async function commitSummaries(gitDir: string, commits: readonly string[]): Promise<Map<string, CommitSummary>> {
  const out = new Map<string, CommitSummary>();
  const unique = [...new Set(commits)];
  if (unique.length === 0) return out;
  const r = await runGit(gitDir, ['log', '--no-walk=unsorted', '--stdin', '-z', '--format=%H%x00%an%x00%s'], { input: unique.join('\n') + '\n' });
  if (r.code !== 0) {
    // One unreadable commit fails the whole run: read them one by one then (rare).
    if (unique.length === 1) return out;
    for (const c of unique) for (const [k, v] of await commitSummaries(gitDir, [c])) out.set(k, v);
    return out;
  }
  const tokens = r.stdout.toString('utf8').split('\0');
  for (let i = 0; i + 2 < tokens.length; i += 3) out.set(tokens[i]!.replace(/^\n/, ''), { author: tokens[i + 1]!, subject: tokens[i + 2]! });
  return out;
}

/**
 * The metadata of notes about to be indexed from the ref at `tip`: who changed each last (from
 * `known`, a catch-up's walk of the commits it adds, when it saw the note's blob; else one walk of
 * the ref's whole history) and, for notes on commits, the commit's subject and author. A note
 * whose changer is not found gets no note_at (the index keeps what it had).
 */
export async function readNoteMeta(
  gitDir: string,
  tip: string,
  notes: readonly { target: string; blob: string; object_type: string }[],
  known?: ReadonlyMap<string, NoteChange>,
): Promise<Map<string, NoteMeta>> {
  const changers = new Map<string, NoteChanger>();
  const rest = new Map<string, string>();
  for (const n of notes) {
    const k = known?.get(n.target);
    if (k && k.blob === n.blob) changers.set(n.target, k);
    else rest.set(n.target, n.blob);
  }
  if (rest.size > 0) for (const [t, c] of await noteChangers(gitDir, tip, rest)) changers.set(t, c);
  const summaries = await commitSummaries(gitDir, notes.filter((n) => n.object_type === 'commit').map((n) => n.target));
  const out = new Map<string, NoteMeta>();
  for (const n of notes) {
    const who = changers.get(n.target);
    if (!who) continue;
    const c = summaries.get(n.target);
    out.set(n.target, { note_author: who.note_author, note_email: who.note_email, note_at: who.note_at, commit_subject: c?.subject ?? null, commit_author: c?.author ?? null });
  }
  return out;
}

/** The largest commit object read whole through cat-file for its summary; a larger one goes to git log. */
export const COMMIT_READ_MAX = 64 * 1024;

/**
 * commitSummaries through a repository's long-lived `cat-file` (src/git/repo-git.ts): no process
 * started. A note write read its annotated commit with a `git log` of its own, and starting it took
 * a fifth of the daemon's thread under 8 concurrent writers (bench/README.md, "GET /tickets/{id}
 * and the key rows taken before fastify"). A commit in another encoding still goes to git log,
 * which re-encodes it, and so does one over COMMIT_READ_MAX.
 */
export async function commitSummariesThrough(git: RepoGit, commits: readonly string[]): Promise<Map<string, CommitSummary>> {
  const out = new Map<string, CommitSummary>();
  const foreign: string[] = [];
  // Sized first: a pushed commit may carry a message of any length, and only git log reads just
  // its subject without holding the whole object in the daemon's memory.
  const unique = [...new Set(commits)];
  const sizes = await Promise.all(unique.map((c) => git.info(c)));
  const small = unique.filter((_, i) => sizes[i]?.type === 'commit' && sizes[i]!.size <= COMMIT_READ_MAX);
  foreign.push(...unique.filter((_, i) => sizes[i]?.type === 'commit' && sizes[i]!.size > COMMIT_READ_MAX));
  for (const [oid, body] of await git.readCommits(small)) {
    const summary = summaryOfCommit(body);
    if (summary) out.set(oid, summary);
    else foreign.push(oid);
  }
  if (foreign.length > 0) for (const [k, v] of await commitSummaries(git.gitDir, foreign)) out.set(k, v);
  return out;
}
