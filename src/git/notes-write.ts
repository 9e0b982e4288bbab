// Writing one note as one notes commit by rewriting only the trees on the note's path (root,
// then the fan-out subtrees it lives under): one `cat-file --batch` reads them and one
// `mktree --batch` writes them back, so a write costs five git processes whatever the number of
// notes. The ref moves with `git update-ref <new> <old>`, an atomic compare-and-swap: a ref moved
// by someone else fails the write with RefMovedError, a ref in the way (`a` beside `a/b`) with
// RefConflictError.
import { git, runGit } from './run.js';
import { GitSession, lineAnswer, objectAnswer } from './interactive.js';

export interface NoteAuthor {
  name: string;
  email: string;
}

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

/** A tree level holding more entries than this gets new notes in a two-hex-digit subtree. */
export const FANOUT_THRESHOLD = 256;

interface Entry {
  mode: string;
  type: string;
  oid: string;
  name: string;
}

/** Entries of a tree object in git's binary format (`<mode> <name>\0<raw id>` repeated). */
function parseTree(body: Buffer, idBytes: number): Entry[] {
  const entries: Entry[] = [];
  let pos = 0;
  while (pos < body.length) {
    const sp = body.indexOf(0x20, pos);
    const nul = body.indexOf(0x00, sp);
    const rawMode = body.subarray(pos, sp).toString('latin1');
    const name = body.subarray(sp + 1, nul).toString('utf8');
    const oid = body.subarray(nul + 1, nul + 1 + idBytes).toString('hex');
    const isTree = rawMode === '40000';
    entries.push({ mode: isTree ? '040000' : rawMode, type: isTree ? 'tree' : rawMode === '160000' ? 'commit' : 'blob', oid, name });
    pos = nul + 1 + idBytes;
  }
  return entries;
}

async function readTree(reader: GitSession, tree: string | null, idBytes: number): Promise<Entry[]> {
  if (tree === null) return [];
  const obj = await reader.request(`${tree}\n`, objectAnswer);
  if (!obj || obj.type !== 'tree') throw new Error(`notes tree ${tree} cannot be read`);
  return parseTree(obj.body, idBytes);
}

async function writeTree(writer: GitSession, entries: Entry[]): Promise<string> {
  const input = entries.map((e) => `${e.mode} ${e.type} ${e.oid}\t${e.name}\n`).join('') + '\n';
  return writer.request(input, lineAnswer);
}

function clean(s: string): string {
  return s.replace(/[<>\n\r\0]/g, '').trim();
}

type WriteInput = { ref: string; target: string; content: string | null; expectedTip: string | null; author: NoteAuthor; message: string; nowSeconds: number };

/**
 * Adds, replaces (content given) or removes (content null) the note on `target` in `ref`, as one
 * notes commit whose parent is `expectedTip` (null: the ref must not exist yet). Resolves with the
 * new commit id; rejects with RefMovedError when the ref no longer points at `expectedTip`.
 * An existing note is found at whatever fan-out it was written; a new one goes into the deepest
 * existing subtree on its path, or a new subtree when that tree is already large.
 */
export async function writeNote(gitDir: string, input: WriteInput): Promise<string> {
  // The blob is written while the trees are read (independent git processes).
  const blobWritten = input.content === null ? Promise.resolve(null) : git(gitDir, ['hash-object', '-w', '--stdin'], { input: Buffer.from(input.content, 'utf8') });
  blobWritten.catch(() => undefined);
  const idBytes = input.target.length / 2;
  // One cat-file process reads every tree on the path; one mktree process writes them back.
  const reader = new GitSession(gitDir, ['cat-file', '--batch']);
  const writer = new GitSession(gitDir, ['mktree', '--batch', '--missing']);
  try {
    return await writeWith(gitDir, reader, writer, idBytes, blobWritten, input);
  } finally {
    reader.close();
    writer.close();
  }
}

async function writeWith(gitDir: string, reader: GitSession, writer: GitSession, idBytes: number, blobWritten: Promise<string | null>, input: WriteInput): Promise<string> {
  // levels[i] is the tree at fan-out depth i on the target's path.
  const levels: Entry[][] = [];
  let tree: string | null = input.expectedTip ? `${input.expectedTip}^{tree}` : null;
  let depth = 0;
  let foundAt = -1;
  for (;;) {
    const entries = await readTree(reader, tree, idBytes);
    levels.push(entries);
    const rest = input.target.slice(depth * 2);
    if (entries.some((e) => e.type === 'blob' && e.name === rest)) {
      foundAt = depth;
      break;
    }
    const sub = entries.find((e) => e.type === 'tree' && e.name === rest.slice(0, 2));
    if (!sub || rest.length <= 2) break;
    tree = sub.oid;
    depth++;
  }
  const blob = await blobWritten;
  if (blob === null && foundAt < 0) throw new Error('no note to remove'); // callers check first
  let at = foundAt >= 0 ? foundAt : levels.length - 1;
  if (foundAt < 0 && levels[at]!.length >= FANOUT_THRESHOLD && input.target.length - at * 2 > 2) {
    // Grow the fan-out for this note: a fresh subtree below the crowded level.
    levels.push([]);
    at++;
  }
  // Rebuild bottom-up.
  let child: { name: string; oid: string | null } | undefined;
  for (let d = levels.length - 1; d >= 0; d--) {
    let entries = levels[d]!;
    if (d === at) {
      const name = input.target.slice(d * 2);
      entries = entries.filter((e) => e.name !== name);
      if (blob) entries.push({ mode: '100644', type: 'blob', oid: blob, name });
    } else if (child) {
      const c = child;
      entries = entries.filter((e) => e.name !== c.name);
      if (c.oid) entries.push({ mode: '040000', type: 'tree', oid: c.oid, name: c.name });
    }
    const oid = entries.length === 0 && d > 0 ? null : await writeTree(writer, entries);
    child = { name: input.target.slice((d - 1) * 2, d * 2), oid };
  }
  const rootTree = child!.oid!;
  const when = `@${input.nowSeconds} +0000`;
  const name = clean(input.author.name) || 'unknown';
  const email = clean(input.author.email);
  const env = { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_AUTHOR_DATE: when, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email, GIT_COMMITTER_DATE: when };
  const commit = await git(gitDir, ['commit-tree', rootTree, ...(input.expectedTip ? ['-p', input.expectedTip] : []), '-F', '-'], { input: input.message, env });
  const r = await runGit(gitDir, ['update-ref', '-m', 'mkt: note written through the API', input.ref, commit, input.expectedTip ?? '']);
  if (r.code !== 0) {
    // A ref on the new ref's path is not a race: retrying cannot help.
    const conflict = /'([^']+)' exists; cannot create|blocking reference '([^']+)'/.exec(r.stderr);
    if (conflict) throw new RefConflictError(input.ref, `${conflict[1] ?? conflict[2]} exists`);
    if (/cannot lock ref|but expected|already exists|is at/i.test(r.stderr)) throw new RefMovedError(input.ref);
    throw new Error(`git update-ref failed: ${r.stderr.trim()}`);
  }
  return commit;
}
