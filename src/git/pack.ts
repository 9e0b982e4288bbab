// Writing a group of objects as one git pack (version 2, every object whole, none as a delta)
// with its index (version 2), the way `git index-pack` leaves them: a note write's blob, trees
// and commit cost two files instead of one file per object. Works for SHA-1 and SHA-256
// repositories (ids, checksums and index entries in the repository's hash).
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { asDiskFull } from '../util/disk-full.js';
import { idBytes, type ObjectFormat, type ObjectType } from './objects.js';

const TYPE_CODE: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3 };

export interface PackObject {
  id: string;
  type: ObjectType;
  body: Buffer;
}

/** An entry's header: type and size, the size in 4 bits then 7-bit groups, low bits first. */
function entryHeader(type: ObjectType, size: number): Buffer {
  const bytes: number[] = [];
  let c = (TYPE_CODE[type] << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(c | 0x80);
    c = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(c);
  return Buffer.from(bytes);
}

/** Adler-32 of the bytes (zlib's checksum), summed in runs short enough not to overflow. */
function adler32(data: Buffer): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < data.length; ) {
    const end = Math.min(i + 5552, data.length);
    for (; i < end; i++) {
      a += data[i]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/**
 * The bytes as a zlib stream of stored (uncompressed) blocks. Git reads any zlib stream; storing
 * costs a copy and a checksum, where deflating even at level 1 was an eighth of a note write's
 * time (much of it setting up zlib per object). A pack is some 20 % larger for it (a notes tree is
 * mostly raw object ids, which do not compress); `git gc` recompresses and deltifies.
 */
export function storedZlib(data: Buffer): Buffer {
  const blocks = Math.max(1, Math.ceil(data.length / 0xffff));
  const out = Buffer.allocUnsafe(2 + blocks * 5 + data.length + 4);
  out[0] = 0x78; // deflate, 32 KiB window
  out[1] = 0x01; // no dictionary, fastest; (0x78 << 8 | 0x01) % 31 === 0 as zlib requires
  let pos = 2;
  for (let i = 0; i < blocks; i++) {
    const start = i * 0xffff;
    const len = Math.min(0xffff, data.length - start);
    out[pos] = i === blocks - 1 ? 1 : 0; // BFINAL on the last block, BTYPE 00 (stored)
    out.writeUInt16LE(len, pos + 1);
    out.writeUInt16LE(~len & 0xffff, pos + 3);
    data.copy(out, pos + 5, start, start + len);
    pos += 5 + len;
  }
  out.writeUInt32BE(adler32(data), pos);
  return out;
}

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** The pack's bytes and its index's bytes, for objects with distinct ids. */
export function encodePack(format: ObjectFormat, objects: readonly PackObject[]): { pack: Buffer; index: Buffer; name: string } {
  const parts: Buffer[] = [Buffer.from('PACK', 'latin1'), u32(2), u32(objects.length)];
  let offset = 12;
  const entries: { id: string; crc: number; offset: number }[] = [];
  for (const o of objects) {
    const head = entryHeader(o.type, o.body.length);
    const data = storedZlib(o.body);
    entries.push({ id: o.id, crc: crc32(data, crc32(head)), offset });
    parts.push(head, data);
    offset += head.length + data.length;
  }
  // Offsets past 2 GiB need the index's large-offset table; a group is far smaller.
  if (offset >= 0x80000000) throw new Error('pack too large');
  const body = Buffer.concat(parts);
  const checksum = createHash(format).update(body).digest();
  const pack = Buffer.concat([body, checksum]);

  entries.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const size = idBytes(format);
  const n = entries.length;
  const idx = Buffer.alloc(8 + 256 * 4 + n * (size + 8) + size);
  idx.writeUInt32BE(0xff744f63, 0); // "\377tOc"
  idx.writeUInt32BE(2, 4);
  const fanout = new Array<number>(256).fill(0);
  for (const e of entries) fanout[parseInt(e.id.slice(0, 2), 16)]!++;
  let total = 0;
  for (let i = 0; i < 256; i++) {
    total += fanout[i]!;
    idx.writeUInt32BE(total, 8 + i * 4);
  }
  let pos = 8 + 256 * 4;
  for (const e of entries) pos += idx.write(e.id, pos, size, 'hex');
  for (const e of entries) pos = idx.writeUInt32BE(e.crc >>> 0, pos);
  for (const e of entries) pos = idx.writeUInt32BE(e.offset, pos);
  checksum.copy(idx, pos);
  const index = Buffer.concat([idx, createHash(format).update(idx).digest()]);
  return { pack, index, name: `pack-${checksum.toString('hex')}` };
}

/** Writes `name` whole or not at all; a write cut short (a full disk) leaves no temporary file behind. */
function writeFileAtomically(dir: string, name: string, data: Buffer): void {
  const tmp = join(dir, `tmp_pack_${randomBytes(6).toString('hex')}`);
  try {
    // Read-only, like git's packs, and the server's alone (a hosted repository is 0700/0600).
    writeFileSync(tmp, data, { mode: 0o400, flag: 'wx' });
    renameSync(tmp, join(dir, name));
  } catch (err) {
    rmSync(tmp, { force: true });
    throw asDiskFull(err, 'writing a pack of git objects') ?? err;
  }
}

/**
 * Writes the objects as one pack in `objects/pack/`. Each file is written whole under a temporary
 * name (`tmp_pack_`, which git's prune removes if a writer died) and renamed into place; the
 * index last, since git finds a pack by its index. No fsync, as git's default for objects.
 */
export function writePack(gitDir: string, format: ObjectFormat, objects: readonly PackObject[]): void {
  if (objects.length === 0) return;
  const { pack, index, name } = encodePack(format, objects);
  const dir = join(gitDir, 'objects', 'pack');
  // A pack of the same name holds the same objects: one already there (written before) stays.
  const packFile = join(dir, `${name}.pack`);
  const had = existsSync(packFile);
  writeFileAtomically(dir, `${name}.pack`, pack);
  try {
    writeFileAtomically(dir, `${name}.idx`, index);
  } catch (err) {
    // A pack without its index is garbage to git (count-objects lists it): not left behind.
    if (!had) rmSync(packFile, { force: true });
    throw err;
  }
}
