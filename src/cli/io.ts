// IOStreams: the only way commands touch stdin/stdout/stderr, so tests can hand in fakes.
import type { Readable, Writable } from 'node:stream';

export interface IOStreams {
  stdin: Readable & { isTTY?: boolean; setRawMode?: (on: boolean) => unknown };
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export function systemIO(): IOStreams {
  return {
    // A getter: process.stdin builds a read stream (and on a file, loads fs/promises and
    // readline) that most commands never read; only a command that reads stdin pays for it.
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
  };
}

export function stdoutIsTTY(io: IOStreams): boolean {
  return Boolean(io.stdout.isTTY);
}

/** Colour on a terminal, unless NO_COLOR is set to a non-empty value (no-color.org) or TERM is dumb. */
export function colorEnabled(io: IOStreams): boolean {
  return stdoutIsTTY(io) && !io.env.NO_COLOR && io.env.TERM !== 'dumb';
}

/** Reads all of stdin as UTF-8. */
export async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Reads a secret: from a hidden prompt on a terminal, otherwise the first line of stdin.
 * Never from argv, so secrets stay out of shell history and process titles.
 */
export async function readSecret(io: IOStreams, prompt: string): Promise<string> {
  if (!io.stdin.isTTY || !io.stdin.setRawMode) {
    const all = await readAll(io.stdin);
    return (all.split(/\r?\n/)[0] ?? '').trim();
  }
  io.stderr.write(prompt);
  const stdin = io.stdin;
  stdin.setRawMode!(true);
  stdin.resume();
  return await new Promise<string>((resolve, reject) => {
    let value = '';
    const onData = (buf: Buffer): void => {
      for (const ch of buf.toString('utf8')) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          finish();
          resolve(value.trim());
          return;
        }
        if (ch === '\u0003') {
          finish();
          reject(new Error('cancelled'));
          return;
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    const finish = (): void => {
      stdin.off('data', onData);
      stdin.setRawMode!(false);
      stdin.pause();
      io.stderr.write('\n');
    };
    stdin.on('data', onData);
  });
}
