// A search hit as the API answers it, built from an index row: the repository, the note's
// metadata (note_at as RFC 3339), its fields, the lines that matched (words: lines holding a query
// token as the index tokenizes; literal: lines containing it; regex: matching lines) and the snippet.
import { fieldsObject } from '../../../../src/notes/fields.js';
import { ftsQueryTokens, ftsTokens } from '../../../../src/notes/fts-tokens.js';
import type { NotesQuery } from '../../../../src/notes/query.js';
import type { IndexRow } from '../../../../src/store/notes.js';
import { HIT_LINE_MAX_CHARS, HIT_MAX_LINES, type MatchedLine, type SearchHit } from '../../../../src/schemas/notes.js';

/** Characters of a snippet outside words mode. */
export const SNIPPET_MAX_CHARS = 200;
/** Lines tokenized in one call when looking for a words query's lines (one FTS5 round each). */
const TOKENIZE_CHUNK = 64;

/** The first `max` UTF-16 units of `s`, never splitting a surrogate pair. */
export function cutChars(s: string, max: number): string {
  if (s.length <= max) return s;
  const last = s.charCodeAt(max - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Which lines a hit shows, as `lines`; the snippet outside words mode is the first of them. */
export type LineFinder = (content: string) => MatchedLine[];

/**
 * Lines of `content` holding a token of the query's positive phrases (excluded terms never match a
 * hit). Tokens are the index's own (FTS5's), asked for in chunks; a line that cannot hold one (all
 * ASCII, and no ASCII token in it, ignoring case) is never tokenized, so a long note costs little.
 */
export function wordLines(query: NotesQuery): LineFinder {
  const wanted = new Set(ftsQueryTokens(query.groups.flat().map((words) => words.join(' '))).flat());
  const ascii = [...wanted].every(isAscii);
  const list = [...wanted];
  const mayHold = (line: string) => {
    if (!ascii || !isAscii(line)) return true;
    const lower = line.toLowerCase();
    return list.some((t) => lower.includes(t));
  };
  return (content) => {
    const out: MatchedLine[] = [];
    let chunk: { n: number; text: string }[] = [];
    const flush = () => {
      const tokens = ftsTokens(chunk.map((l) => l.text));
      for (let j = 0; j < chunk.length && out.length < HIT_MAX_LINES; j++) {
        if (tokens[j]!.some((t) => wanted.has(t))) out.push({ n: chunk[j]!.n, text: cutChars(chunk[j]!.text, HIT_LINE_MAX_CHARS) });
      }
      chunk = [];
    };
    let n = 0;
    for (const line of content.split('\n')) {
      n++;
      const text = stripCr(line);
      if (mayHold(text)) chunk.push({ n, text });
      if (chunk.length === TOKENIZE_CHUNK) flush();
      if (out.length >= HIT_MAX_LINES) return out;
    }
    if (chunk.length) flush();
    return out;
  };
}

/** The lines (1-based numbers, CR dropped, cut) for which `test` holds, the first `max` of them. */
export function findLines(content: string, test: (line: string) => boolean, max = HIT_MAX_LINES): MatchedLine[] {
  const out: MatchedLine[] = [];
  let n = 0;
  // As grep: a final newline ends the last line rather than starting an empty one.
  for (let start = 0; (start < content.length || n === 0) && out.length < max; n++) {
    const end = content.indexOf('\n', start);
    const line = stripCr(content.slice(start, end < 0 ? content.length : end));
    if (test(line)) out.push({ n: n + 1, text: cutChars(line, HIT_LINE_MAX_CHARS) });
    if (end < 0) break;
    start = end + 1;
  }
  return out;
}

/** A CRLF note's lines end in CR; a line shown (or tested) is the text before it. */
export function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/**
 * The hit of `row` in `repo`, with the lines `lines` found (none without a query). `opts.text` is
 * the note's text when the row was read without it.
 */
export function buildHit(repo: string, row: IndexRow, lines: MatchedLine[], opts: { words: boolean; content: boolean; text?: string }): SearchHit {
  const text = opts.text ?? row.content ?? '';
  // Outside words mode: the first matched line, or (no query) the note's first line.
  const snippet = opts.words && row.snippet !== '' ? row.snippet : cutChars(lines[0]?.text ?? stripCr(text.split('\n', 1)[0]!), SNIPPET_MAX_CHARS);
  const hit: SearchHit = {
    repo,
    namespace: row.namespace,
    git_ref: `refs/notes/${row.namespace}`,
    target: row.target,
    object: row.target,
    object_type: row.object_type,
    note_author: row.note_author,
    note_email: row.note_email,
    note_at: row.note_at === null ? null : new Date(row.note_at).toISOString(),
    commit_subject: row.commit_subject,
    commit_author: row.commit_author,
    snippet,
    score: opts.words ? row.score : 0,
    lines,
    fields: fieldsObject(row.fields),
  };
  if (opts.content) hit.content = text;
  return hit;
}
