// Issue 7 "a progress bar (ink) on a terminal": drawn on stderr when stderr is a TTY, nothing
// at all (and ink never loaded) in a pipe.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createFactory } from '../../../src/cli/factory.js';
import { progressFor } from '../../../commands/sync/shared.js';
import { fakeIO } from '../../helpers/fake-io.js';

function ttyStderr(): { stream: PassThrough & { isTTY: boolean; columns: number }; text(): string } {
  const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 100 });
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString()));
  return { stream, text: () => text };
}

describe('blob progress bar', () => {
  it('on a terminal: the phase, a bar, the percentage and the bytes, ending at 100%', async () => {
    const err = ttyStderr();
    const io = { ...fakeIO(), stderr: err.stream };
    const bar = await progressFor(createFactory(io));
    bar.update({ phase: 'upload', done: 0, total: 8 * 1024 * 1024 });
    bar.update({ phase: 'upload', done: 8 * 1024 * 1024, total: 8 * 1024 * 1024 });
    await new Promise((r) => setTimeout(r, 50));
    bar.stop();
    const ESC = String.fromCharCode(27);
    const out = err.text().replace(new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]`, 'g'), '');
    expect(out).toMatch(/uploading/);
    expect(out).toMatch(/█{30}/);
    expect(out).toMatch(/100%\s+8 MiB \/ 8 MiB/);
  });

  it('in a pipe: nothing is written', async () => {
    const io = fakeIO();
    const bar = await progressFor(createFactory(io));
    bar.update({ phase: 'download', done: 5, total: 10 });
    bar.stop();
    expect(io.err()).toBe('');
  });
});
