// The bounded memory of a multipart upload: a fixed pool of slabs that sealed bytes wait in until
// the kernel has sent them, a count of PUTs at once, and the queue that feeds one part's slabs to
// its PUT. Every wait ends with an error once the upload has failed.

/** Remembers the first failure of an upload and wakes everything that waits. */
export class Stop {
  error: { cause: unknown } | undefined;
  private readonly sleepers = new Set<() => void>();

  fail(cause: unknown): void {
    this.error ??= { cause };
    for (const wake of this.sleepers) wake();
    this.sleepers.clear();
  }

  check(): void {
    if (this.error) throw this.error.cause;
  }

  /** Waits for `wake` to be called (through `park`) or for the upload to fail. */
  async sleep(park: (wake: () => void) => void): Promise<void> {
    this.check();
    await new Promise<void>((resolve) => {
      this.sleepers.add(resolve);
      park(() => {
        this.sleepers.delete(resolve);
        resolve();
      });
    });
    this.check();
  }
}

/** `count` slabs of `bytes` each, made on first need and reused. */
export class SlabPool {
  private readonly free: Buffer[] = [];
  private made = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly count: number,
    readonly bytes: number,
    private readonly stop: Stop,
  ) {}

  async take(): Promise<Buffer> {
    for (;;) {
      this.stop.check();
      const b = this.free.pop();
      if (b) return b;
      if (this.made < this.count) {
        this.made++;
        return Buffer.allocUnsafe(this.bytes);
      }
      await this.stop.sleep((wake) => this.waiting.push(wake));
    }
  }

  give(b: Buffer): void {
    this.free.push(b);
    this.waiting.shift()?.();
  }
}

/** At most `count` holders at once. */
export class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly count: number,
    private readonly stop: Stop,
  ) {}

  async take(): Promise<void> {
    while (this.used >= this.count) await this.stop.sleep((wake) => this.waiting.push(wake));
    this.stop.check();
    this.used++;
  }

  give(): void {
    this.used--;
    this.waiting.shift()?.();
  }
}

/**
 * One part's sealed bytes, slab by slab, in order: filled by the sealing pass, read by the PUT
 * (before the part is complete when its checksum was known beforehand). A slab goes back to
 * the pool once the PUT's socket has taken it.
 */
export class PartBody implements AsyncIterable<Buffer> {
  /** Full slabs, as views of their filled length, not yet handed to the PUT. */
  private readonly ready: Buffer[] = [];
  private readonly slabOf = new Map<Buffer, Buffer>();
  private ended = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly pool: SlabPool,
    private readonly stop: Stop,
  ) {}

  push(slab: Buffer, used: number): void {
    const view = slab.subarray(0, used);
    this.slabOf.set(view, slab);
    this.ready.push(view);
    this.nudge();
  }

  end(): void {
    this.ended = true;
    this.nudge();
  }

  /** The PUT's socket has taken `view`: its slab is free again. */
  readonly flushed = (view: Buffer): void => {
    const slab = this.slabOf.get(view);
    if (!slab) return;
    this.slabOf.delete(view);
    this.pool.give(slab);
  };

  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    for (;;) {
      const next = this.ready.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.ended) return;
      await this.stop.sleep((wake) => (this.wake = wake));
    }
  }

  private nudge(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}

/** Copies sealed bytes into the slabs of one part's body after another's. */
export class SlabFiller {
  private slab: Buffer | undefined;
  private used = 0;

  constructor(private readonly pool: SlabPool) {}

  /**
   * Copies up to `room` bytes (what the part still lacks) of `piece` into `body`; a slab goes to
   * the body when it is full or the part is. Returns how many bytes of `piece` it took.
   */
  async fill(body: PartBody, piece: Buffer, room: number): Promise<number> {
    let off = 0;
    while (off < piece.length && room > 0) {
      this.slab ??= await this.pool.take();
      const k = Math.min(piece.length - off, this.slab.length - this.used, room);
      piece.copy(this.slab, this.used, off, off + k);
      this.used += k;
      off += k;
      room -= k;
      if (this.used === this.slab.length || room === 0) {
        body.push(this.slab, this.used);
        this.slab = undefined;
        this.used = 0;
      }
    }
    return off;
  }
}
