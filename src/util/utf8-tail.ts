// The end of a byte buffer that holds UTF-8 text, cut where a character starts: the tail of a
// job's log, kept by `mkt monitor run` and by the monitor's ping route alike.

/** The last `max` bytes of `buf` (fewer when the cut would fall inside a character). */
export function tailBytes(buf: Buffer, max: number): Buffer {
  if (buf.length <= max) return buf;
  let start = buf.length - max;
  // Continuation bytes are 10xxxxxx: step past them to the start of a character.
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start);
}
