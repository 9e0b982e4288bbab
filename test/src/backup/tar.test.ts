// The tar writer and reader (src/backup/tar.ts): round trips of files and directories, long and
// non-ASCII names through pax records, and the reader's refusals (a flipped header byte,
// non-zero padding, a truncated stream, links, data after the end).
import { Readable, PassThrough } from 'node:stream';
import { spawn } from 'node:child_process';
import { writeFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeHeader, readTar, TarFormatError, TarWriter } from '../../../src/backup/tar.js';
import { tempDir } from '../../helpers/tmp.js';

async function write(members: { name: string; type: 'file' | 'dir'; data?: Buffer; mode?: number }[]): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const tar = new TarWriter(out);
  for (const m of members) {
    if (m.type === 'dir') await tar.directory(m.name, m.mode ?? 0o755, 1_700_000_000);
    else await tar.buffer(m.name, m.mode ?? 0o644, 1_700_000_000, m.data ?? Buffer.alloc(0));
  }
  await tar.finish();
  out.end();
  return Buffer.concat(chunks);
}

async function read(bytes: Buffer, chunkSize = 700): Promise<{ name: string; type: string; mode: number; data: Buffer }[]> {
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunkSize) parts.push(bytes.subarray(i, i + chunkSize));
  const out = [];
  for await (const e of readTar(Readable.from(parts))) {
    const data: Buffer[] = [];
    for await (const c of e.body) data.push(c);
    out.push({ name: e.name, type: e.type, mode: e.mode, data: Buffer.concat(data) });
  }
  return out;
}

const LONG = `data/${'deep/'.repeat(40)}file-é.txt`;

describe('tar', () => {
  it('round trip: files, directories, an empty file, a long non-ASCII name, odd sizes, in any chunking', async () => {
    const big = Buffer.alloc(1024 * 64 + 7, 0xab);
    const members = [
      { name: 'data', type: 'dir' as const, mode: 0o700 },
      { name: 'data/empty', type: 'file' as const, data: Buffer.alloc(0) },
      { name: 'data/token', type: 'file' as const, data: Buffer.from('s3cret\n'), mode: 0o600 },
      { name: LONG, type: 'file' as const, data: big },
    ];
    const bytes = await write(members);
    expect(bytes.length % 512).toBe(0);
    for (const size of [1, 511, 512, 4096, bytes.length]) {
      const got = await read(bytes, size);
      expect(got.map((g) => [g.name, g.type, g.mode])).toEqual([
        ['data', 'dir', 0o700],
        ['data/empty', 'file', 0o644],
        ['data/token', 'file', 0o600],
        [LONG, 'file', 0o644],
      ]);
      expect(got[3]!.data.equals(big)).toBe(true);
      expect(got[2]!.data.toString()).toBe('s3cret\n');
    }
  });

  it('GNU tar reads what it writes (the format is plain POSIX tar)', async () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'a.tar');
      writeFileSync(file, await write([{ name: 'data', type: 'dir' }, { name: LONG, type: 'file', data: Buffer.from('hello') }]));
      mkdirSync(join(dir.path, 'x'));
      const code = await new Promise<number | null>((res) => spawn('tar', ['-xf', file, '-C', join(dir.path, 'x')]).on('close', res));
      expect(code).toBe(0);
      expect(readFileSync(join(dir.path, 'x', LONG), 'utf8')).toBe('hello');
    } finally {
      dir.remove();
    }
  });

  it('a flipped byte anywhere in a header, or in padding, is refused', async () => {
    const bytes = await write([{ name: 'data/a', type: 'file', data: Buffer.from('abc') }]);
    for (const at of [0, 50, 100, 124, 148, 156, 257, 300, 511]) {
      const bad = Buffer.from(bytes);
      bad[at] = bad[at]! ^ 0x01;
      await expect(read(bad), `byte ${at}`).rejects.toThrow(TarFormatError);
    }
    const badPad = Buffer.from(bytes);
    badPad[512 + 10] = 1; // inside the padding after the 3 data bytes
    await expect(read(badPad)).rejects.toThrow(/padding/);
    const badEnd = Buffer.from(bytes);
    badEnd[bytes.length - 1] = 1;
    await expect(read(badEnd)).rejects.toThrow(TarFormatError);
  });

  it('a truncated stream is refused wherever it is cut, and so is data after the end', async () => {
    const bytes = await write([{ name: 'data/a', type: 'file', data: Buffer.alloc(2000, 1) }]);
    for (const cut of [0, 100, 512, 1000, 2560, bytes.length - 512]) {
      await expect(read(bytes.subarray(0, cut)), `cut at ${cut}`).rejects.toThrow(/truncated/);
    }
    await expect(read(Buffer.concat([bytes, Buffer.from('extra')]))).rejects.toThrow(/after the end/);
    // Zeros after the end (a tool padding to a 10 KiB record) are fine.
    await expect(read(Buffer.concat([bytes, Buffer.alloc(4096)]))).resolves.toHaveLength(1);
  });

  it('links and devices are refused: a backup holds only files and directories', async () => {
    const bytes = await write([{ name: 'data/a', type: 'file', data: Buffer.from('x') }]);
    for (const [flag, what] of [['2', /symbolic link/], ['1', /hard link/], ['3', /type/], ['6', /type/]] as const) {
      const h = encodeHeader({ name: 'data/evil', type: 'file', mode: 0o644, size: 0, mtime: 0 });
      h.write(flag, 156, 'ascii');
      h.write('/etc/passwd', 157, 'ascii');
      let sum = 0;
      h.fill(0x20, 148, 156);
      for (const b of h) sum += b;
      h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii');
      await expect(read(Buffer.concat([h, bytes]))).rejects.toThrow(what);
    }
  });
});
