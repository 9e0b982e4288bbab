// Issue 7 "a progress bar (ink) on a terminal": drawn on stderr when stderr is a TTY, nothing
// at all (and ink never loaded) in a pipe.
import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createFactory } from '../../../src/cli/factory.js';
import { progressFor } from '../../../commands/sync/shared.js';
import { fakeIO } from '../../helpers/fake-io.js';

// ink's chalk takes its colour level from this process's stdout (a pipe under the test runner)
// when ink first loads, which progressFor does lazily: force it, so that a bar drawn without
// NO_COLOR shows colours and the NO_COLOR run proves something.
vi.hoisted(() => {
  process.env.FORCE_COLOR = '1';
});

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

  it('colours the bar unless NO_COLOR is set to a non-empty value (no-color.org)', async () => {
    {
      const SGR = new RegExp(`${String.fromCharCode(27)}\\[(?:3[0-9]|9[0-7])m`);
      const draw = async (env: NodeJS.ProcessEnv): Promise<string> => {
        const err = ttyStderr();
        const bar = await progressFor(createFactory({ ...fakeIO({ env }), stderr: err.stream }));
        bar.update({ phase: 'download', done: 5, total: 10 });
        bar.update({ phase: 'download', done: 10, total: 10 });
        await new Promise((r) => setTimeout(r, 50));
        bar.stop();
        return err.text();
      };
      expect(await draw({})).toMatch(SGR);
      expect(await draw({ NO_COLOR: '' })).toMatch(SGR);
      const plain = await draw({ NO_COLOR: '1' });
      expect(plain).toMatch(/100%/);
      expect(plain).not.toMatch(SGR);
    }
  });

  it('in a pipe: nothing is written', async () => {
    const io = fakeIO();
    const bar = await progressFor(createFactory(io));
    bar.update({ phase: 'download', done: 5, total: 10 });
    bar.stop();
    expect(io.err()).toBe('');
  });
});
