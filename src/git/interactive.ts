// One git process answering several requests in turn over stdin/stdout (`cat-file --batch`,
// `mktree --batch`), so a multi-step operation pays for one process start instead of one per
// step. Requests are strictly sequential; close() ends the process.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { gitEnv } from './run.js';

/** Reads one answer from the front of the buffer: its value and length, or undefined if incomplete. */
export type AnswerParser<T> = (buf: Buffer) => { value: T; length: number } | undefined;

export class GitSession {
  private readonly child: ChildProcessWithoutNullStreams;
  private buf = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  private failure: Error | undefined;
  private stderr = '';

  constructor(gitDir: string, args: string[]) {
    this.child = spawn('git', ['--git-dir', gitDir, ...args], { env: gitEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (b: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, b]) : b;
      this.waiting?.();
    });
    this.child.stderr.on('data', (b: Buffer) => (this.stderr += b.toString('utf8').slice(0, 2000)));
    this.child.stdin.on('error', () => undefined);
    const fail = (err: Error) => {
      this.failure ??= err;
      this.waiting?.();
    };
    this.child.on('error', fail);
    this.child.on('close', (code) => fail(new Error(`git ${args[0]} exited (${code}): ${this.stderr.trim().split('\n').slice(-1)[0] ?? ''}`)));
  }

  async request<T>(input: string | Buffer, parse: AnswerParser<T>): Promise<T> {
    this.child.stdin.write(input);
    for (;;) {
      const got = parse(this.buf);
      if (got) {
        this.buf = this.buf.subarray(got.length);
        return got.value;
      }
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = undefined;
    }
  }

  close(): void {
    this.child.stdin.end();
  }
}

/** A line answer (`mktree --batch` prints one tree id per tree). */
export const lineAnswer: AnswerParser<string> = (buf) => {
  const nl = buf.indexOf(0x0a);
  return nl < 0 ? undefined : { value: buf.subarray(0, nl).toString('utf8'), length: nl + 1 };
};

/** A `cat-file --batch` answer: `<oid> <type> <size>\n<body>\n`, or `<name> missing\n`. */
export const objectAnswer: AnswerParser<{ type: string; body: Buffer } | undefined> = (buf) => {
  const nl = buf.indexOf(0x0a);
  if (nl < 0) return undefined;
  const header = buf.subarray(0, nl).toString('utf8').split(' ');
  if (header[1] === 'missing' || header.length < 3) return { value: undefined, length: nl + 1 };
  const size = Number(header[2]);
  if (buf.length < nl + 1 + size + 1) return undefined;
  return { value: { type: header[1]!, body: buf.subarray(nl + 1, nl + 1 + size) }, length: nl + 1 + size + 1 };
};
