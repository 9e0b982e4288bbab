// The structured fields a note carries, read line by line: trailers (`Key: value`, Gerrit's
// `Code-Review+2: …`), `key=value` lines and one-line JSON objects. The index stores them so
// searches can filter on them; the parse is bounded so a hostile note costs a fixed amount.

/** One field: the key as written, the value trimmed (JSON strings are kept exactly). */
export interface NoteField {
  key: string;
  value: string;
}

/** Fields kept per note: the first ones, in line order. */
export const MAX_FIELDS = 1000;
/** A longer key (UTF-8 bytes) is not a field: it is text that happens to look like one. */
export const MAX_KEY_BYTES = 100;
/** A longer value (UTF-8 bytes) is cut at a character boundary. */
export const MAX_VALUE_BYTES = 1024;

// A trailer as git interpret-trailers writes it, at the start of a line. The separator must be
// followed by a blank or the line's end, so that a URL (`https://…`) is not read as a trailer.
// Gerrit writes votes into the key (`Code-Review+2: Jane <j@x>`, `Verified-1: …`): a trailing
// `+N`/`-N` belongs to the value, which then reads `+2 Jane <j@x>`.
const TRAILER = /^([A-Za-z0-9][A-Za-z0-9-]*?)([+-]\d{1,3})?:(?:[ \t](.*))?$/s;
// `key=value` with nothing between the key and `=` (closes-issues=12,14).
const KEY_VALUE = /^([A-Za-z0-9_.-]+)=(.*)$/s;

/** The fields of a note's text; at most MAX_FIELDS, keys and values bounded as above. */
export function parseFields(content: string): NoteField[] {
  const out: NoteField[] = [];
  let start = 0;
  while (start <= content.length && out.length < MAX_FIELDS) {
    let end = content.indexOf('\n', start);
    if (end < 0) end = content.length;
    let line = content.slice(start, end);
    if (line.endsWith('\r')) line = line.slice(0, -1);
    parseLine(line, out);
    start = end + 1;
  }
  return out;
}

function parseLine(line: string, out: NoteField[]): void {
  if (line === '') return;
  const t = TRAILER.exec(line);
  if (t) {
    const rest = (t[3] ?? '').trim();
    const value = t[2] ? (rest ? `${t[2]} ${rest}` : t[2]) : rest;
    add(out, t[1]!, value);
    return;
  }
  const kv = KEY_VALUE.exec(line);
  if (kv) {
    add(out, kv[1]!, kv[2]!.trim());
    return;
  }
  const trimmed = line.trim();
  if (trimmed.startsWith('{') && trimmed.endsWith('}')) jsonFields(trimmed, out);
}

// Top-level scalars of a JSON object: strings as they are, numbers and booleans as JSON text,
// null skipped; an array of scalars gives one field per element; nested objects are skipped.
function jsonFields(text: string, out: NoteField[]): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return;
  for (const [key, v] of Object.entries(parsed as Record<string, unknown>)) {
    if (out.length >= MAX_FIELDS) return;
    if (key.trim() === '') continue;
    if (Array.isArray(v)) {
      for (const e of v) {
        if (out.length >= MAX_FIELDS) return;
        const s = scalar(e);
        if (s !== undefined) add(out, key, s);
      }
    } else {
      const s = scalar(v);
      if (s !== undefined) add(out, key, s);
    }
  }
}

function scalar(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  return undefined;
}

function add(out: NoteField[], key: string, value: string): void {
  if (out.length >= MAX_FIELDS || utf8Bytes(key, MAX_KEY_BYTES + 1) > MAX_KEY_BYTES) return;
  out.push({ key, value: cutUtf8(value, MAX_VALUE_BYTES) });
}

/** UTF-8 length of a code point starting at `s[i]`, and the UTF-16 units it takes. */
function codePoint(s: string, i: number): [bytes: number, units: number] {
  const c = s.charCodeAt(i);
  if (c < 0x80) return [1, 1];
  if (c < 0x800) return [2, 1];
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return [4, 2];
  }
  return [3, 1]; // other BMP characters, and lone surrogates (encoded as U+FFFD, 3 bytes)
}

/** UTF-8 bytes of `s`, counting no further than `stop` (the caller only compares). */
function utf8Bytes(s: string, stop: number): number {
  let n = 0;
  for (let i = 0; i < s.length && n < stop; ) {
    const [b, u] = codePoint(s, i);
    n += b;
    i += u;
  }
  return n;
}

/** The longest prefix of `s` within `max` UTF-8 bytes that does not split a character. */
export function cutUtf8(s: string, max: number): string {
  if (s.length * 3 <= max) return s; // no character takes more than 3 bytes per UTF-16 unit
  let n = 0;
  let i = 0;
  while (i < s.length) {
    const [b, u] = codePoint(s, i);
    if (n + b > max) return s.slice(0, i);
    n += b;
    i += u;
  }
  return s;
}

/** Fields grouped for a hit: key → values in note order (keys exactly as written). */
export function fieldsObject(fields: readonly NoteField[]): Record<string, string[]> {
  // A Map, then fromEntries: a key such as `__proto__` (from a JSON line) stays a plain key.
  const m = new Map<string, string[]>();
  for (const f of fields) {
    const vs = m.get(f.key);
    if (vs) vs.push(f.value);
    else m.set(f.key, [f.value]);
  }
  return Object.fromEntries(m);
}
