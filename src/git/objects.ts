// Git objects made and written straight from node, so a note write starts no git process: loose
// objects (zlib-deflated `<type> <size>\0<body>`, named by SHA-1 or SHA-256 per the repository's
// object format) written as git writes them, to a temporary file renamed into place, and the
// binary tree and commit formats git would produce for the same input.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';

export type ObjectFormat = 'sha1' | 'sha256';
export type ObjectType = 'blob' | 'tree' | 'commit';

/** The format whose object ids have this many hex digits (40: SHA-1, 64: SHA-256). */
export function formatOfId(id: string): ObjectFormat {
  return id.length === 64 ? 'sha256' : 'sha1';
}

/** Raw bytes of an object id in this format. */
export function idBytes(format: ObjectFormat): number {
  return format === 'sha256' ? 32 : 20;
}

/** The id `git update-ref` reads as "the ref must not exist yet". */
export function zeroId(format: ObjectFormat): string {
  return '0'.repeat(idBytes(format) * 2);
}

function header(type: ObjectType, size: number): Buffer {
  return Buffer.from(`${type} ${size}\0`, 'latin1');
}

/** The id git gives an object of this type and body. */
export function objectId(format: ObjectFormat, type: ObjectType, body: Buffer): string {
  return createHash(format).update(header(type, body.length)).update(body).digest('hex');
}

/**
 * Writes one loose object and returns its id. Like git: deflated at git's loose-object level
 * (Z_BEST_SPEED), read-only, written whole to a temporary file in the object's directory and
 * renamed to its name, so a reader sees the whole object or none (an object that exists already
 * is replaced by the same bytes). No fsync, as git's default (`core.fsync` leaves loose objects
 * to the file system).
 */
export function writeObject(gitDir: string, format: ObjectFormat, type: ObjectType, body: Buffer): string {
  const head = header(type, body.length);
  const id = createHash(format).update(head).update(body).digest('hex');
  const dir = join(gitDir, 'objects', id.slice(0, 2));
  const file = join(dir, id.slice(2));
  // `tmp_obj_` is the prefix git's prune removes when a writer died between write and rename.
  const tmp = join(dir, `tmp_obj_${randomBytes(6).toString('hex')}`);
  const data = deflateSync(Buffer.concat([head, body]), { level: 1 });
  try {
    writeFileSync(tmp, data, { mode: 0o444, flag: 'wx' });
  } catch (err) {
    // The fan-out directory does not exist yet (or `git prune` removed it when it emptied).
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(dir, { recursive: true });
    writeFileSync(tmp, data, { mode: 0o444, flag: 'wx' });
  }
  try {
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return id;
}

export interface TreeEntry {
  /** The mode as git stores it: `100644`, `40000` (a tree), `160000`, ... */
  mode: string;
  /** The name's bytes as latin1 (one char per byte), so any name survives a rewrite unchanged. */
  name: string;
  oid: string;
}

export const TREE_MODE = '40000';
export const BLOB_MODE = '100644';

/** Entries of a tree object (`<mode> <name>\0<raw id>` repeated). */
export function parseTree(body: Buffer, format: ObjectFormat): TreeEntry[] {
  const size = idBytes(format);
  const entries: TreeEntry[] = [];
  let pos = 0;
  while (pos < body.length) {
    const sp = body.indexOf(0x20, pos);
    const nul = body.indexOf(0x00, sp);
    if (sp < 0 || nul < 0 || nul + 1 + size > body.length) throw new Error('malformed tree object');
    entries.push({ mode: body.toString('latin1', pos, sp), name: body.toString('latin1', sp + 1, nul), oid: body.toString('hex', nul + 1, nul + 1 + size) });
    pos = nul + 1 + size;
  }
  return entries;
}

/** Git's order of tree entries: by name bytes, a tree's name read as if it ended in `/`. */
function sortKey(e: TreeEntry): string {
  return e.mode === TREE_MODE ? `${e.name}/` : e.name;
}

/** A tree object's body for these entries, sorted as git sorts them. */
export function encodeTree(entries: TreeEntry[], format: ObjectFormat): Buffer {
  const sorted = entries.map((e) => ({ e, key: sortKey(e) })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const size = idBytes(format);
  let length = 0;
  for (const { e } of sorted) length += e.mode.length + 1 + e.name.length + 1 + size;
  const out = Buffer.allocUnsafe(length);
  let pos = 0;
  for (const { e } of sorted) {
    pos += out.write(`${e.mode} ${e.name}\0`, pos, 'latin1');
    pos += out.write(e.oid, pos, size, 'hex');
  }
  return out;
}

/** Characters git strips from both ends of an identity's name and email (ident.c `crud`). */
function crud(code: number): boolean {
  return code <= 32 || '.,:;<>"\\\''.includes(String.fromCharCode(code));
}

/**
 * A name or email as git writes it in a commit: what the API always removed (`<`, `>`, line
 * breaks, NUL), then git's own rule (crud stripped from both ends; `<`, `>` and newlines dropped).
 */
export function identPart(s: string): string {
  const cleaned = s.replace(/[<>\n\r\0]/g, '');
  let start = 0;
  let end = cleaned.length;
  while (start < end && crud(cleaned.charCodeAt(start))) start++;
  while (end > start && crud(cleaned.charCodeAt(end - 1))) end--;
  return cleaned.slice(start, end);
}

export interface CommitInput {
  tree: string;
  parent: string | null;
  name: string;
  email: string;
  /** Unix seconds, for both the author and the committer date (written in UTC). */
  seconds: number;
  message: string;
}

/** A commit object's body, as `git commit-tree` writes it with this author as committer too. */
export function encodeCommit(c: CommitInput): Buffer {
  const who = `${identPart(c.name) || 'unknown'} <${identPart(c.email)}> ${Math.trunc(c.seconds)} +0000`;
  const parent = c.parent ? `parent ${c.parent}\n` : '';
  return Buffer.from(`tree ${c.tree}\n${parent}author ${who}\ncommitter ${who}\n\n${c.message}`, 'utf8');
}
