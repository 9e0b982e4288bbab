// Writes a long answer to stdout page by page: waits while the reader is behind (so memory
// holds one page, however many there are), and turns a reader that has gone (`| head -1`:
// EPIPE) into OutputClosed, which the verbs end on quietly with status 0.
import type { Writable } from 'node:stream';

/** The reader closed stdout: stop fetching and writing; not an error (status 0). */
export class OutputClosed extends Error {
  constructor() {
    super('stdout closed by its reader');
    this.name = 'OutputClosed';
  }
}

export function isOutputClosed(err: unknown): boolean {
  return err instanceof OutputClosed || (err instanceof Error && err.name === 'OutputClosed');
}

/** Errors that mean the reader has gone, not that something failed. */
const GONE = new Set(['EPIPE', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END', 'ECONNRESET']);

export class OutputSink {
  private failure: Error | undefined;
  private closed = false;
  private readonly onError = (err: NodeJS.ErrnoException): void => {
    if (err.code !== undefined && GONE.has(err.code)) this.closed = true;
    else this.failure ??= err;
  };

  constructor(private readonly stream: Writable) {
    // A listener of our own: a stream that errors with none attached throws from its emit.
    stream.on('error', this.onError);
  }

  /** Writes one piece; resolves when the stream can take more. Throws OutputClosed once the reader has gone. */
  async write(text: string): Promise<void> {
    this.check();
    if (text === '') return;
    const more = this.stream.write(text, (err) => {
      if (err) this.onError(err);
    });
    if (!more) await this.settled();
    this.check();
  }

  /**
   * Stops listening (the process-wide handler of commands/root/main.ts stays), unless the reader
   * has gone: the stream's own error may still be on its way, and must find a listener.
   */
  release(): void {
    if (!this.closed && !this.stream.destroyed) this.stream.off('error', this.onError);
  }

  private check(): void {
    if (this.failure) throw this.failure;
    if (this.closed || this.stream.destroyed || this.stream.writableEnded) throw new OutputClosed();
  }

  /** Until the stream drains, fails or closes: whichever comes first. */
  private settled(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.stream.off('drain', done);
        this.stream.off('error', done);
        this.stream.off('close', done);
        resolve();
      };
      this.stream.on('drain', done);
      this.stream.on('error', done);
      this.stream.on('close', done);
    });
  }
}

/** Runs `body` with a sink on `stream`; a reader that went away ends it quietly. */
export async function withSink(stream: Writable, body: (sink: OutputSink) => Promise<void>): Promise<void> {
  const sink = new OutputSink(stream);
  try {
    await body(sink);
  } catch (err) {
    if (!isOutputClosed(err)) throw err;
  } finally {
    sink.release();
  }
}
