// The request line written as bytes straight into the log batch (daemon/log-batch.ts): no string
// is built for it, appended, flattened and encoded again, which was most of what the line cost a
// request (bench/README.md, "The request line as bytes, issue 37"). The bytes are those of the
// template in plugins/request-log.ts; whatever this writer cannot write exactly as JSON would (an
// id with a character to escape, a status outside 100-999, a duration past V8's small integers)
// it declines, and the caller writes the line from its template.
import type { LineBatch } from './log-batch.js';

const encode = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));
const HEAD = encode('{"level":30,"time":');
const REQ_ID = encode(',"reqId":"');
const STATUS = encode(',"status":');
const MS = encode(',"ms":');
const TAIL = encode(',"msg":"request"}\n');
/** The fixed parts, the quote after the id, and the numbers at their longest (time 16, status 3, ms 11). */
const FIXED = HEAD.length + REQ_ID.length + 1 + STATUS.length + MS.length + TAIL.length + 16 + 3 + 11;
/** Route parts kept as bytes: one per route and method, so few; past this many the map starts again. */
const MAX_PARTS = 4096;
const DOT = 0x2e;
const ZERO = 0x30;

/** One logger's request lines as bytes: its bindings and routes' parts encoded once. */
export class RequestLineBytes {
  private bindings = '';
  private bindingBytes = new Uint8Array(0);
  private readonly parts = new Map<string, Uint8Array>();
  private time = -1;
  private timeBytes = new Uint8Array(0);

  /**
   * Writes the line into `batch`; false, with nothing written, when it cannot be written exactly
   * here. `bindings` is pino's chindings text (`,"pid":…`), `part` the route's `,"method":…,"route":…`.
   */
  put(batch: LineBatch, now: number, bindings: string, reqId: string, part: string, status: number, ms: number): boolean {
    if (!(status >= 100 && status <= 999 && (status | 0) === status)) return false;
    const tenths = Math.round(ms * 10);
    if (!(tenths >= 0 && tenths <= 0x3fffffff)) return false;
    if (bindings !== this.bindings) {
      this.bindings = bindings;
      this.bindingBytes = encode(bindings);
    }
    let partBytes = this.parts.get(part);
    if (partBytes === undefined) {
      if (this.parts.size >= MAX_PARTS) this.parts.clear();
      this.parts.set(part, (partBytes = encode(part)));
    }
    if (now !== this.time) {
      this.time = now;
      this.timeBytes = encode(String(now));
    }
    const start = batch.room(FIXED + this.bindingBytes.length + reqId.length + partBytes.length + this.timeBytes.length);
    if (start < 0) return false;
    const buf = batch.buffer;
    let p = start;
    buf.set(HEAD, p);
    p += HEAD.length;
    buf.set(this.timeBytes, p);
    p += this.timeBytes.length;
    buf.set(this.bindingBytes, p);
    p += this.bindingBytes.length;
    buf.set(REQ_ID, p);
    p += REQ_ID.length;
    for (let i = 0; i < reqId.length; i++) {
      const c = reqId.charCodeAt(i);
      // JSON escapes these; the ids fastify and the lanes make never hold them.
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
      buf[p++] = c;
    }
    buf[p++] = 0x22;
    buf.set(partBytes, p);
    p += partBytes.length;
    buf.set(STATUS, p);
    p += STATUS.length;
    buf[p] = ZERO + ((status / 100) | 0);
    buf[p + 1] = ZERO + (((status / 10) | 0) % 10);
    buf[p + 2] = ZERO + (status % 10);
    p += 3;
    buf.set(MS, p);
    p += MS.length;
    const whole = (tenths / 10) | 0;
    p = digits(buf, p, whole);
    const rest = tenths - whole * 10;
    if (rest !== 0) {
      buf[p] = DOT;
      buf[p + 1] = ZERO + rest;
      p += 2;
    }
    buf.set(TAIL, p);
    batch.advance(p + TAIL.length);
    return true;
  }
}

/** Writes the decimal digits of `n` (a non-negative small integer) at `p`; returns the end. */
function digits(buf: Uint8Array, p: number, n: number): number {
  let len = 1;
  for (let m = n; m >= 10; m = (m / 10) | 0) len++;
  const end = p + len;
  for (let i = end - 1; i >= p; i--) {
    const q = (n / 10) | 0;
    buf[i] = ZERO + (n - q * 10);
    n = q;
  }
  return end;
}
