// How deep a JSON text nests, counted before it is parsed: a value nested thousands of levels
// deep parses, but JSON.stringify overflows the stack on it later (a stored value pulled, a cached
// peer answer served again, a --json print), so the servers' body parser and the HTTP client
// refuse it up front.

/**
 * Deepest nesting of arrays and objects accepted in an answer read from another party. Twice
 * the bound the servers put on request bodies (MAX_JSON_DEPTH in daemon/plugins/body.ts), so a
 * value stored at that depth still fits inside the answer's own objects; JSON.stringify
 * overflows near 4,500 levels.
 */
export const MAX_ANSWER_JSON_DEPTH = 1024;

/**
 * Whether `text` nests `[`/`{` deeper than `max`, counted outside strings: one linear pass,
 * jumping over string contents with indexOf, so it costs little next to JSON.parse itself.
 */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // The closing quote: one preceded by an even number of backslashes.
      let q = i;
      for (;;) {
        q = text.indexOf('"', q + 1);
        if (q < 0) return false; // unterminated: JSON.parse answers that
        let slashes = 0;
        while (text.charCodeAt(q - 1 - slashes) === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
      }
      i = q;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
