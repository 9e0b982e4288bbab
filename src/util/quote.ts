// quoteForError: a short, JSON-quoted rendering of an offending value for an error text, so
// that a 1 MiB field gets a one-line answer (and a one-line log record), never an echo of itself.

/** `"abc"` for short values; `"abcd…" (1048576 characters)` when cut. Never throws. */
export function quoteForError(value: unknown, max = 80): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else {
    try {
      // undefined, functions and symbols stringify to undefined; deep or cyclic values throw.
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = Object.prototype.toString.call(value);
    }
    if (text.length <= max) return text;
  }
  if (text.length <= max) return JSON.stringify(text);
  // Cut on a code point boundary: a lone surrogate would come out as an escape, not a character.
  let cut = Math.max(0, max);
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return `${JSON.stringify(text.slice(0, cut) + '…')} (${text.length} characters)`;
}
