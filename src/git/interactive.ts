// One git process answering several requests in turn over stdin/stdout (`cat-file
// --batch-command`, `update-ref --stdin`), so many operations pay for one process start instead
// of one each. Requests are queued and answered in order; close() ends the process. An idle
// session does not keep node running: its pipes hold the event loop only while a request waits.
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
  /** The end of the queue of requests: each one starts when the one before has its answer. */
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  constructor(gitDir: string, args: string[]) {
    this.child = spawn('git', ['--git-dir', gitDir, ...args], { env: gitEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (b: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, b]) : b;
      this.waiting?.();
    });
    this.child.stderr.on('data', (b: Buffer) => (this.stderr = (this.stderr + b.toString('utf8')).slice(-4000)));
    this.child.stdin.on('error', () => undefined);
    const fail = (err: Error) => {
      this.failure ??= err;
      this.waiting?.();
    };
    this.child.on('error', fail);
    this.child.on('close', (code) => fail(new GitSessionExit(args[0] ?? '', code, this.stderr)));
    this.idle();
  }

  /** Whether the process has exited or failed: a new session is needed for further requests. */
  get dead(): boolean {
    return this.failure !== undefined;
  }

  /** Sends `input` once every earlier request is answered, and reads its answer. */
  request<T>(input: string | Buffer, parse: AnswerParser<T>): Promise<T> {
    if (this.pending++ === 0) this.busy();
    const run = this.tail.then(() => this.exchange(input, parse));
    this.tail = run.catch(() => undefined);
    return run.finally(() => {
      if (--this.pending === 0) this.idle();
    });
  }

  private async exchange<T>(input: string | Buffer, parse: AnswerParser<T>): Promise<T> {
    if (this.failure) throw this.failure;
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

  private busy(): void {
    this.child.ref();
    handle(this.child.stdout).ref?.();
  }

  private idle(): void {
    this.child.unref();
    for (const s of [this.child.stdin, this.child.stdout, this.child.stderr]) handle(s).unref?.();
  }

  close(): void {
    this.child.stdin.end();
  }
}

/** A child's pipe is a net.Socket, which can stop holding the event loop; the stream types do not say so. */
function handle(stream: object): { ref?: () => void; unref?: () => void } {
  return stream as { ref?: () => void; unref?: () => void };
}

/** The session's process ended; `stderr` holds what git said last. */
export class GitSessionExit extends Error {
  constructor(
    command: string,
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`git ${command} exited (${code}): ${stderr.trim().split('\n').slice(-1)[0] ?? ''}`);
  }
}

/** `n` answers in a row, for `n` requests sent at once (one write, one wake-up of git). */
export function answers<T>(parse: AnswerParser<T>, n: number): AnswerParser<T[]> {
  return (buf) => {
    const values: T[] = [];
    let pos = 0;
    while (values.length < n) {
      const got = parse(pos === 0 ? buf : buf.subarray(pos));
      if (!got) return undefined;
      values.push(got.value);
      pos += got.length;
    }
    return { value: values, length: pos };
  };
}

/** A line answer. */
export const lineAnswer: AnswerParser<string> = (buf) => {
  const nl = buf.indexOf(0x0a);
  return nl < 0 ? undefined : { value: buf.subarray(0, nl).toString('utf8'), length: nl + 1 };
};

/** A `cat-file --batch` (or `--batch-command` `contents`) answer: `<oid> <type> <size>\n<body>\n`, or `<name> missing\n`. */
export const objectAnswer: AnswerParser<{ type: string; body: Buffer } | undefined> = (buf) => {
  const nl = buf.indexOf(0x0a);
  if (nl < 0) return undefined;
  const header = buf.subarray(0, nl).toString('utf8').split(' ');
  if (header.length < 3) return { value: undefined, length: nl + 1 };
  const size = Number(header[2]);
  if (buf.length < nl + 1 + size + 1) return undefined;
  return { value: { type: header[1]!, body: buf.subarray(nl + 1, nl + 1 + size) }, length: nl + 1 + size + 1 };
};

/** A `cat-file --batch-check` (or `--batch-command` `info`) answer: `<oid> <type> <size>\n`, or `<name> missing\n`. */
export const infoAnswer: AnswerParser<{ type: string; size: number } | undefined> = (buf) => {
  const nl = buf.indexOf(0x0a);
  if (nl < 0) return undefined;
  const header = buf.subarray(0, nl).toString('utf8').split(' ');
  return { value: header.length < 3 ? undefined : { type: header[1]!, size: Number(header[2]) }, length: nl + 1 };
};
