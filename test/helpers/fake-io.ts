// Fake IOStreams for run-level CLI tests: captured stdout/stderr, scripted stdin and env.
import { PassThrough, Readable } from 'node:stream';
import type { IOStreams } from '../../src/cli/io.js';

export interface FakeIO extends IOStreams {
  out(): string;
  err(): string;
}

export function fakeIO(opts: { stdin?: string; env?: NodeJS.ProcessEnv; cwd?: string; tty?: boolean } = {}): FakeIO {
  const stdout = new PassThrough() as PassThrough & { isTTY?: boolean };
  const stderr = new PassThrough() as PassThrough & { isTTY?: boolean };
  stdout.isTTY = opts.tty ?? false;
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return {
    stdin: Readable.from([opts.stdin ?? '']),
    stdout,
    stderr,
    env: opts.env ?? {},
    cwd: opts.cwd ?? process.cwd(),
    out: () => out,
    err: () => err,
  };
}
