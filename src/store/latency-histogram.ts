// LatencyHistogram: a mergeable histogram of response times (whole milliseconds) for the
// monitor's rollups. Values below 128 ms have a bucket each, so they are exact; above, buckets
// grow by 2 % (like DDSketch or HdrHistogram's log buckets), so a percentile read from merged
// rollups is within 1 % (plus rounding to the whole millisecond) of the value a sort of the raw
// rows gives. Stored as a small blob.
import type { LatencyStats } from '../schemas/monitor.js';

const EXACT = 128;
const GROWTH = 1.02;
const LOG_GROWTH = Math.log(GROWTH);
/** The bucket of Number.MAX_SAFE_INTEGER ms: no real response time lies beyond. */
const MAX_BUCKET = EXACT + Math.ceil(Math.log(Number.MAX_SAFE_INTEGER / EXACT) / LOG_GROWTH);

/** The bucket of a response time in ms (> 0). */
export function bucketOf(ms: number): number {
  const v = Math.max(1, Math.round(ms));
  if (v < EXACT) return v;
  return EXACT + Math.floor(Math.log(v / EXACT) / LOG_GROWTH + 1e-9);
}

/** The value a bucket stands for: its own value below 128 ms, else the geometric middle of its range. */
export function valueOf(bucket: number): number {
  if (bucket < EXACT) return bucket;
  const low = EXACT * GROWTH ** (bucket - EXACT);
  return Math.round(low * Math.sqrt(GROWTH));
}

/** Nearest-rank position (0-based) of percentile p among n sorted values. */
export function rankOf(n: number, p: number): number {
  return Math.max(0, Math.ceil((p / 100) * n) - 1);
}

export class LatencyHistogram {
  /**
   * bucket → count, dense: buckets grow logarithmically (a 60 s response is bucket ~440), and
   * merging 24 hourly rollups into an array is several times faster than into a Map.
   */
  private readonly counts: number[] = [];
  count = 0;
  sum = 0;
  min = Infinity;
  max = -Infinity;

  add(ms: number, n = 1): void {
    if (!(ms > 0) || n <= 0) return;
    this.bump(bucketOf(ms), n);
    this.count += n;
    this.sum += ms * n;
    if (ms < this.min) this.min = ms;
    if (ms > this.max) this.max = ms;
  }

  private bump(b: number, n: number): void {
    while (this.counts.length <= b) this.counts.push(0);
    this.counts[b]! += n;
  }

  merge(o: LatencyHistogram): void {
    if (o.count === 0) return;
    o.counts.forEach((n, b) => {
      if (n) this.bump(b, n);
    });
    this.count += o.count;
    this.sum += o.sum;
    if (o.min < this.min) this.min = o.min;
    if (o.max > this.max) this.max = o.max;
  }

  /** Nearest-rank percentile, clamped to the exact min and max. */
  quantile(p: number): number {
    if (this.count === 0) return 0;
    const want = rankOf(this.count, p);
    let seen = 0;
    for (let b = 0; b < this.counts.length; b++) {
      seen += this.counts[b]!;
      if (seen > want) return Math.min(this.max, Math.max(this.min, valueOf(b)));
    }
    return this.max;
  }

  stats(): LatencyStats | null {
    if (this.count === 0) return null;
    return {
      count: this.count,
      min: this.min,
      mean: Math.round((this.sum / this.count) * 10) / 10,
      p50: this.quantile(50),
      p95: this.quantile(95),
      p99: this.quantile(99),
      max: this.max,
    };
  }

  /** Sorted (bucket, count) pairs as unsigned LEB128 varints, buckets delta-coded: ~2-4 bytes a bucket. */
  encode(): Buffer {
    const out: number[] = [];
    const push = (v: number): void => {
      while (v >= 0x80) {
        out.push((v % 0x80) | 0x80);
        v = Math.floor(v / 0x80);
      }
      out.push(v);
    };
    let prev = 0;
    this.counts.forEach((n, b) => {
      if (!n) return;
      push(b - prev);
      push(n);
      prev = b;
    });
    return Buffer.from(out);
  }

  /**
   * Adds the buckets of an encoded histogram; count, sum, min and max come from their own columns.
   * A truncated or corrupt blob throws rather than counting garbage.
   */
  addEncoded(blob: Uint8Array | null, count: number, sum: number, min: number | null, max: number | null): void {
    if (!blob || count <= 0) return;
    let i = 0;
    const read = (): number => {
      let v = 0;
      let scale = 1;
      for (;;) {
        if (i >= blob.length) throw new Error('corrupt latency histogram');
        const byte = blob[i++]!;
        v += (byte & 0x7f) * scale;
        if (byte < 0x80) return v;
        scale *= 0x80;
      }
    };
    let b = 0;
    let total = 0;
    while (i < blob.length) {
      b += read();
      const n = read();
      // A corrupt delta could name a bucket far out: refuse it before it sizes the array.
      if (b > MAX_BUCKET) throw new Error('corrupt latency histogram');
      this.bump(b, n);
      total += n;
    }
    if (total !== count) throw new Error(`corrupt latency histogram: ${total} values for a count of ${count}`);
    this.count += count;
    this.sum += sum;
    if (min !== null && min < this.min) this.min = min;
    if (max !== null && max > this.max) this.max = max;
  }
}
