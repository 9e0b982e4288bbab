// Git objects made in node, so a note write starts no git process: ids (the SHA-1 or SHA-256 of
// `<type> <size>\0<body>`, per the repository's object format) and the binary tree and commit
// formats git would produce for the same input. src/git/pack.ts writes them to disk.
import { createHash } from 'node:crypto';

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

export interface TreeEntry {
  /** The mode as git stores it: `100644`, `40000` (a tree), `160000`, ... */
  mode: string;
  /** The name's bytes as latin1 (one char per byte), so any name survives a rewrite unchanged. */
  name: string;
  oid: string;
  /** The entry's bytes in the tree it was read from: a rewritten tree copies them as they are. */
  raw?: Buffer;
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
    const end = nul + 1 + size;
    entries.push({ mode: body.toString('latin1', pos, sp), name: body.toString('latin1', sp + 1, nul), oid: body.toString('hex', nul + 1, end), raw: body.subarray(pos, end) });
    pos = end;
  }
  return entries;
}

/** Git's order of tree entries: by name bytes, a tree's name read as if it ended in `/`. */
function sortKey(e: TreeEntry): string {
  return e.mode === TREE_MODE ? `${e.name}/` : e.name;
}

/**
 * A copy of git-ordered entries without any entry named `name`, and with `entry` (if given) in
 * its place in git's order.
 */
export function withEntry(entries: readonly TreeEntry[], name: string, entry: TreeEntry | null): TreeEntry[] {
  const out = entries.filter((e) => e.name !== name);
  if (!entry) return out;
  const key = sortKey(entry);
  let lo = 0;
  let hi = out.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sortKey(out[mid]!) < key) lo = mid + 1;
    else hi = mid;
  }
  out.splice(lo, 0, entry);
  return out;
}

/** A tree object's body for entries already in git's order (withEntry keeps them so). */
export function encodeTree(entries: readonly TreeEntry[], format: ObjectFormat): Buffer {
  const size = idBytes(format);
  const parts: Buffer[] = entries.map((e) => {
    if (e.raw) return e.raw;
    const head = Buffer.from(`${e.mode} ${e.name}\0`, 'latin1');
    // Memory of its own, not a slice of Node's shared 8 KiB pool: remembered trees keep their
    // entries, and a pool slice would keep its whole slab alive for a 70-byte entry (the soak found
    // every note write pinning ~8 KiB this way: bench/README.md, "Soak").
    const out = Buffer.allocUnsafeSlow(head.length + size);
    head.copy(out);
    out.write(e.oid, head.length, size, 'hex');
    return (e.raw = out);
  });
  let length = 0;
  for (const p of parts) length += p.length;
  // Also its own: a staged tree read back before its flush is parsed into entries that view this body.
  const out = Buffer.allocUnsafeSlow(length);
  // Entries read from one tree sit side by side in its body: copy each such run at once (a
  // rewritten tree is a few runs, not one copy per entry).
  let pos = 0;
  for (let i = 0; i < parts.length; ) {
    const first = parts[i]!;
    let end = first.byteOffset + first.length;
    let j = i + 1;
    while (j < parts.length && parts[j]!.buffer === first.buffer && parts[j]!.byteOffset === end) end += parts[j++]!.length;
    const run = Buffer.from(first.buffer, first.byteOffset, end - first.byteOffset);
    pos += run.copy(out, pos);
    i = j;
  }
  return out;
}

/** `buf`'s bytes in memory of their own (not a view of a larger buffer, nor of Node's shared pool). */
export function ownBytes(buf: Buffer): Buffer {
  const out = Buffer.allocUnsafeSlow(buf.length);
  buf.copy(out);
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
