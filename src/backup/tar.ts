// A small POSIX tar (ustar + pax) writer and a strict streaming reader, for backup files: only
// regular files and directories, 512-byte headers, pax 'x' records for long or non-ASCII names
// and sizes beyond ustar's 8 GiB. The reader refuses anything it did not write (bad checksum,
// links, devices, non-zero padding, bytes after the end): a backup is checked, not guessed at.
import { createHash } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';

const BLOCK = 512;
/** ustar's size field: 11 octal digits. */
const USTAR_MAX_SIZE = 0o77777777777;
const ZERO_BLOCK = Buffer.alloc(BLOCK);

export type TarEntryType = 'file' | 'dir';

export interface TarHeader {
  /** The member's path inside the archive (no trailing slash for directories). */
  name: string;
  type: TarEntryType;
  /** Permission bits (0o7777 at most). */
  mode: number;
  size: number;
  /** Seconds since the epoch. */
  mtime: number;
}

/** A tar stream that is not one this reader accepts: damaged, truncated, or holding what a backup never does. */
export class TarFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TarFormatError';
  }
}

function octal(value: number, width: number): string {
  // width - 1 digits and a NUL, as GNU tar and bsdtar write them.
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

/** One pax record: "<len> key=value\n", where len counts the whole record, itself included. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body);
  return `${len}${body}`;
}

function headerBlock(name: string, typeflag: string, mode: number, size: number, mtime: number): Buffer {
  const b = Buffer.alloc(BLOCK);
  b.write(name, 0, 100, 'utf8');
  b.write(octal(mode & 0o7777, 8), 100, 'ascii');
  b.write(octal(0, 8), 108, 'ascii');
  b.write(octal(0, 8), 116, 'ascii');
  b.write(octal(size, 12), 124, 'ascii');
  b.write(octal(Math.max(0, Math.floor(mtime)), 12), 136, 'ascii');
  b.fill(0x20, 148, 156);
  b.write(typeflag, 156, 'ascii');
  b.write('ustar\0', 257, 'ascii');
  b.write('00', 263, 'ascii');
  let sum = 0;
  for (const byte of b) sum += byte;
  b.write(octal(sum, 7) + ' ', 148, 'ascii');
  return b;
}

const isAsciiShort = (name: string): boolean => /^[\x20-\x7e]*$/.test(name) && name.length <= 100;

/** The header blocks of one member: a pax 'x' record first when ustar cannot say the name or size. */
export function encodeHeader(h: TarHeader): Buffer {
  const name = h.type === 'dir' ? `${h.name}/` : h.name;
  const pax: string[] = [];
  if (!isAsciiShort(name)) pax.push(paxRecord('path', name));
  if (h.size > USTAR_MAX_SIZE) pax.push(paxRecord('size', String(h.size)));
  const main = headerBlock(isAsciiShort(name) ? name : Buffer.from(name).subarray(0, 99).toString('latin1').replace(/[^\x20-\x7e]/g, '_'), h.type === 'dir' ? '5' : '0', h.mode, h.size > USTAR_MAX_SIZE ? 0 : h.size, h.mtime);
  if (pax.length === 0) return main;
  const data = Buffer.from(pax.join(''));
  return Buffer.concat([headerBlock('PaxHeader', 'x', 0o644, data.length, h.mtime), data, padding(data.length), main]);
}

function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return rest === 0 ? Buffer.alloc(0) : Buffer.alloc(BLOCK - rest);
}

/** Writes to a stream with its backpressure: waits for 'drain' when its buffer is full. */
async function write(out: Writable, chunk: Buffer): Promise<void> {
  if (out.write(chunk)) return;
  await new Promise<void>((resolve, reject) => {
    const onDrain = (): void => {
      out.off('error', onError);
      resolve();
    };
    const onError = (err: Error): void => {
      out.off('drain', onDrain);
      reject(err);
    };
    out.once('drain', onDrain);
    out.once('error', onError);
  });
}

/** Writes members one at a time; file bodies are streamed through, never held whole. */
export class TarWriter {
  /** Bytes written so far (for the progress line). */
  written = 0;

  constructor(private readonly out: Writable) {}

  private async put(chunk: Buffer): Promise<void> {
    this.written += chunk.length;
    await write(this.out, chunk);
  }

  async directory(name: string, mode: number, mtime: number): Promise<void> {
    await this.put(encodeHeader({ name, type: 'dir', mode, size: 0, mtime }));
  }

  /**
   * A regular file of exactly `size` bytes from `body`, returning its SHA-256 (hex). A body that
   * ends early (a file truncated while it is read) is an error: the header already promised `size`.
   */
  async file(name: string, mode: number, mtime: number, size: number, body: AsyncIterable<Buffer | string> | Iterable<Buffer>): Promise<string> {
    await this.put(encodeHeader({ name, type: 'file', mode, size, mtime }));
    const hash = createHash('sha256');
    let left = size;
    for await (const raw of body) {
      if (left === 0) break;
      const chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
      const part = chunk.length > left ? chunk.subarray(0, left) : chunk;
      hash.update(part);
      left -= part.length;
      await this.put(part);
    }
    if (left > 0) throw new Error(`${name} became shorter while it was read (${left} bytes missing)`);
    const pad = padding(size);
    if (pad.length > 0) await this.put(pad);
    return hash.digest('hex');
  }

  async buffer(name: string, mode: number, mtime: number, data: Buffer): Promise<string> {
    return this.file(name, mode, mtime, data.length, [data]);
  }

  /** The end of the archive: two zero blocks. */
  async finish(): Promise<void> {
    await this.put(Buffer.concat([ZERO_BLOCK, ZERO_BLOCK]));
  }
}

/** Exact reads from a byte stream (an async iterator of chunks), with a count of what was read. */
class ByteSource {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private done = false;
  offset = 0;

  constructor(private readonly it: AsyncIterator<Buffer | string>) {}

  private async fill(n: number): Promise<void> {
    while (this.bufferedBytes < n && !this.done) {
      const next = await this.it.next();
      if (next.done) {
        this.done = true;
        break;
      }
      const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      this.buffered.push(chunk);
      this.bufferedBytes += chunk.length;
    }
  }

  /** Up to `max` bytes (fewer only at the end of the stream; empty there). */
  async some(max: number): Promise<Buffer> {
    await this.fill(1);
    if (this.bufferedBytes === 0) return Buffer.alloc(0);
    const first = this.buffered[0]!;
    const take = first.length <= max ? first : first.subarray(0, max);
    if (take === first) this.buffered.shift();
    else this.buffered[0] = first.subarray(max);
    this.bufferedBytes -= take.length;
    this.offset += take.length;
    return take;
  }

  /** Exactly `n` bytes, or a TarFormatError saying the file is truncated. */
  async exact(n: number, what: string): Promise<Buffer> {
    await this.fill(n);
    if (this.bufferedBytes < n) throw new TarFormatError(`the backup is truncated (it ends inside ${what}, at byte ${this.offset + this.bufferedBytes})`);
    const all = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.buffered = rest.length > 0 ? [rest] : [];
    this.bufferedBytes = rest.length;
    this.offset += n;
    return out;
  }

  async atEnd(): Promise<boolean> {
    await this.fill(1);
    return this.bufferedBytes === 0;
  }
}

function readOctal(b: Buffer, start: number, width: number, field: string, at: number): number {
  const text = b.toString('ascii', start, start + width).replace(/[\0 ]+$/, '').replace(/^ +/, '');
  if (!/^[0-7]*$/.test(text)) throw new TarFormatError(`damaged tar header at byte ${at}: the ${field} field is not octal`);
  return text === '' ? 0 : parseInt(text, 8);
}

function checksumOf(b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : b[i]!;
  return sum;
}

function parsePax(data: Buffer, at: number): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(0x20, i);
    const len = space < 0 ? NaN : Number(data.toString('ascii', i, space));
    if (!Number.isInteger(len) || len <= 0 || i + len > data.length || data[i + len - 1] !== 0x0a) throw new TarFormatError(`damaged pax record at byte ${at}`);
    const record = data.toString('utf8', space + 1, i + len - 1);
    const eq = record.indexOf('=');
    if (eq <= 0) throw new TarFormatError(`damaged pax record at byte ${at}`);
    out.set(record.slice(0, eq), record.slice(eq + 1));
    i += len;
  }
  return out;
}

export interface TarEntry extends TarHeader {
  /** The body, streamed; it must be read to the end (or drained) before the next entry. */
  body: AsyncIterable<Buffer>;
}

/**
 * The members of a tar stream, one at a time. Each entry's body must be consumed before asking
 * for the next; the generator drains what was left. Throws TarFormatError on any damage.
 */
export async function* readTar(input: Readable | AsyncIterable<Buffer | string>): AsyncGenerator<TarEntry> {
  const src = new ByteSource((input as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]());
  let pax: Map<string, string> | undefined;
  for (;;) {
    const at = src.offset;
    if (await src.atEnd()) throw new TarFormatError(`the backup is truncated (no end-of-archive marker after byte ${at})`);
    const block = await src.exact(BLOCK, 'a header');
    if (block.equals(ZERO_BLOCK)) {
      const second = await src.exact(BLOCK, 'the end-of-archive marker');
      if (!second.equals(ZERO_BLOCK)) throw new TarFormatError(`damaged end-of-archive marker at byte ${at + BLOCK}`);
      if (pax) throw new TarFormatError(`a pax header at the end of the archive (byte ${at})`);
      // Only zeros may follow (some tools pad to a 10 KiB record); anything else is damage.
      for (;;) {
        const rest = await src.some(64 * 1024);
        if (rest.length === 0) return;
        if (rest.some((x) => x !== 0)) throw new TarFormatError(`data after the end-of-archive marker (near byte ${src.offset - rest.length})`);
      }
    }
    const stored = readOctal(block, 148, 8, 'checksum', at);
    if (stored !== checksumOf(block)) throw new TarFormatError(`damaged tar header at byte ${at} (checksum mismatch)`);
    if (block.toString('ascii', 257, 263) !== 'ustar\0' || block.toString('ascii', 263, 265) !== '00') throw new TarFormatError(`not a ustar header at byte ${at}`);
    const typeflag = String.fromCharCode(block[156]!);
    let size = readOctal(block, 124, 12, 'size', at);
    const rawName = block.subarray(0, 100);
    const nul = rawName.indexOf(0);
    let name = rawName.toString('utf8', 0, nul < 0 ? 100 : nul);
    const prefixRaw = block.subarray(345, 500);
    const pnul = prefixRaw.indexOf(0);
    const prefix = prefixRaw.toString('utf8', 0, pnul < 0 ? 155 : pnul);
    if (prefix) name = `${prefix}/${name}`;
    if (typeflag === 'x') {
      if (pax) throw new TarFormatError(`two pax headers in a row at byte ${at}`);
      if (size > 1024 * 1024) throw new TarFormatError(`a pax header of ${size} bytes at byte ${at}`);
      const data = await src.exact(size, 'a pax header');
      const pad = await src.exact(padding(size).length, 'padding');
      if (pad.some((x) => x !== 0)) throw new TarFormatError(`damaged padding after byte ${at}`);
      pax = parsePax(data, at);
      continue;
    }
    if (typeflag !== '0' && typeflag !== '\0' && typeflag !== '5') {
      const what = typeflag === '1' ? 'a hard link' : typeflag === '2' ? 'a symbolic link' : `a member of type ${JSON.stringify(typeflag)}`;
      throw new TarFormatError(`${what} at byte ${at} (${JSON.stringify(name)}): a backup holds only files and directories`);
    }
    if (pax?.has('path')) name = pax.get('path')!;
    if (pax?.has('size')) {
      const s = pax.get('size')!;
      if (!/^\d+$/.test(s)) throw new TarFormatError(`damaged pax size at byte ${at}`);
      size = Number(s);
    }
    pax = undefined;
    const type: TarEntryType = typeflag === '5' ? 'dir' : 'file';
    if (type === 'dir') {
      if (size !== 0) throw new TarFormatError(`a directory with a size at byte ${at}`);
      name = name.replace(/\/+$/, '');
    }
    const mode = readOctal(block, 100, 8, 'mode', at) & 0o7777;
    const mtime = readOctal(block, 136, 12, 'mtime', at);
    let left = size;
    const next = async (): Promise<IteratorResult<Buffer>> => {
      if (left === 0) return { done: true, value: undefined };
      const chunk = await src.some(Math.min(left, 256 * 1024));
      if (chunk.length === 0) throw new TarFormatError(`the backup is truncated (it ends inside ${JSON.stringify(name)})`);
      left -= chunk.length;
      return { done: false, value: chunk };
    };
    // Not a generator: a consumer that stops early (break) must not close it, so the rest can be skipped below.
    const body: AsyncIterable<Buffer> = { [Symbol.asyncIterator]: () => ({ next }) };
    yield { name, type, mode, size, mtime, body };
    // Whatever the consumer left unread is skipped (hashing nothing: the caller chose not to look).
    while (!(await next()).done);
    const pad = await src.exact(padding(size).length, `the padding of ${JSON.stringify(name)}`);
    if (pad.some((x) => x !== 0)) throw new TarFormatError(`damaged padding after ${JSON.stringify(name)}`);
  }
}
