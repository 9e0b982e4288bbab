// Log lines gathered into one string before they reach the destination (sonic-boom on stdout).
// sonic-boom measures the byte length of its whole pending buffer at every write: 2.7 µs a line
// with 4 KiB pending, as much as everything else the request line costs together, while a string
// append costs 0.07 µs (bench/README.md, "The floor, issue 37"). Lines go on in order, in chunks.
import type { DestinationStream } from 'pino';

/** What the batch needs of its destination: sonic-boom's writes and flushes. */
export interface BatchTarget extends NodeJS.EventEmitter {
  write(chunk: string): unknown;
  flush?(cb: (err?: Error) => void): void;
  flushSync?(): void;
}

/**
 * Every batch of the process, for the exit hooks: weakly, so that a logger dropped (tests make
 * many) takes its batch with it, and two hooks serve them all.
 */
const batches = new Set<WeakRef<LineBatch>>();
let hooked = false;

function drainAll(): void {
  for (const ref of batches) {
    const batch = ref.deref();
    if (batch === undefined) batches.delete(ref);
    else {
      try {
        batch.drain();
      } catch {
        // A destination already ended (a line logged after the logger's stream closed): an exit
        // hook that throws would print a stack over the end of the log and change the exit code.
      }
    }
  }
}

export class LineBatch implements DestinationStream {
  private pending = '';
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param target where the chunks go
   * @param bytes how much is gathered before it is handed on (counted in UTF-16 units: a line of
   *   non-ASCII text goes on a little later than its byte count would say, never lost)
   * @param maxWaitMs the longest a line waits when fewer than `bytes` arrive
   */
  constructor(
    readonly target: BatchTarget,
    private readonly bytes: number,
    private readonly maxWaitMs: number,
  ) {
    // Lines still gathered when the process ends are handed on before pino's own exit hook
    // flushes (and ends) the destination: prepended, so it runs first whoever registered earlier.
    if (!hooked) {
      hooked = true;
      process.prependListener('beforeExit', drainAll);
      process.prependListener('exit', drainAll);
    }
    batches.add(new WeakRef(this));
  }

  write(line: string): boolean {
    this.pending += line;
    if (this.pending.length >= this.bytes) this.drain();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.drain(), this.maxWaitMs);
      // Waiting lines must not hold a stopping process open: the exit hooks above write them.
      this.timer.unref();
    }
    return true;
  }

  /** Hands every gathered line to the destination now. */
  drain(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pending === '') return;
    const chunk = this.pending;
    this.pending = '';
    this.target.write(chunk);
  }

  /** Hands the lines on and waits until the destination has written them (pino's `logger.flush`). */
  flush(cb: (err?: Error) => void): void {
    this.drain();
    if (this.target.flush) this.target.flush(cb);
    else cb();
  }

  flushSync(): void {
    this.drain();
    this.target.flushSync?.();
  }
}
