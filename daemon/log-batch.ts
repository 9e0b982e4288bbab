// Log lines gathered as bytes before they reach the destination (sonic-boom on stdout).
// sonic-boom measures the byte length of its whole pending buffer at every write: 2.7 µs a line
// with 4 KiB pending, as much as everything else the request line costs together (bench/README.md,
// "The floor, issue 37"). The request line is written here as bytes, never made a string
// (daemon/request-line-bytes.ts); pino's other lines are encoded in. Lines go on in order, in chunks.
import type { DestinationStream } from 'pino';

/**
 * What the batch needs of its destination: sonic-boom's writes (in its buffer mode: a chunk given
 * is the destination's from then on) and flushes.
 */
export interface BatchTarget extends NodeJS.EventEmitter {
  write(chunk: Buffer): unknown;
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

/** Room past the threshold: a line of up to this many bytes never makes a chunk hand on early. */
const HEADROOM = 4096;

export class LineBatch implements DestinationStream {
  /** The gathered bytes, `buffer[0, pos)`. */
  buffer: Buffer;
  private pos = 0;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param target where the chunks go
   * @param bytes how many bytes are gathered before they are handed on
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
    this.buffer = Buffer.allocUnsafe(bytes + HEADROOM);
  }

  write(line: string): boolean {
    // At most 3 bytes a UTF-16 unit; a line that cannot fit even an empty buffer goes on alone.
    const start = this.room(line.length * 3);
    if (start < 0) {
      this.target.write(Buffer.from(line, 'utf8'));
      return true;
    }
    this.advance(start + this.buffer.write(line, start));
    return true;
  }

  /**
   * Where `max` bytes can be written now (`buffer` from there on): the gathered lines are handed on
   * first if they would not leave the room; -1 if the buffer could never hold them.
   */
  room(max: number): number {
    if (this.pos + max <= this.buffer.length) return this.pos;
    this.drain();
    return max <= this.buffer.length ? 0 : -1;
  }

  /** Takes the bytes written up to `end` (from `room`'s start) as gathered lines. */
  advance(end: number): void {
    this.pos = end;
    if (end >= this.bytes) this.drain();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.drain(), this.maxWaitMs);
      // Waiting lines must not hold a stopping process open: the exit hooks above write them.
      this.timer.unref();
    }
  }

  /** Hands every gathered line to the destination now. */
  drain(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pos === 0) return;
    // The chunk is handed over, not copied: sonic-boom keeps it until written, so the batch
    // gathers in a new buffer (one allocation a chunk, against a copy and an encoding of a string).
    const chunk = this.buffer.subarray(0, this.pos);
    this.buffer = Buffer.allocUnsafeSlow(this.buffer.length);
    this.pos = 0;
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
