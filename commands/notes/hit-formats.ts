// The text of search hits and exported notes for scripts: NDJSON, a streamed JSON array, TSV,
// JSON lines and CSV (RFC 4180). Pure functions of one hit or one page; the verbs write them.
import type { SearchHit } from '../../src/schemas/notes.js';

/**
 * The fields a script may rely on (issue 36), in this order. A projection rather than the answer
 * as is, so that a field the server adds later does not change what `--format ndjson` prints.
 */
export interface StableHit {
  repo: string;
  namespace: string;
  object: string;
  object_type: string;
  note_author: string | null;
  note_email: string | null;
  note_at: string | null;
  commit_subject: string | null;
  commit_author: string | null;
  snippet: string;
  lines: { n: number; text: string }[];
  fields: Record<string, string[]>;
}

/** A hit as an older server may send it: the issue-36 fields may be absent. */
export type AnyHit = Partial<SearchHit> & Pick<SearchHit, 'namespace' | 'target' | 'object_type' | 'snippet'>;

export function stableHit(h: AnyHit, repo = ''): StableHit {
  return {
    repo: h.repo ?? repo,
    namespace: h.namespace,
    object: h.object ?? h.target,
    object_type: h.object_type,
    note_author: h.note_author ?? null,
    note_email: h.note_email ?? null,
    note_at: h.note_at ?? null,
    commit_subject: h.commit_subject ?? null,
    commit_author: h.commit_author ?? null,
    snippet: h.snippet,
    lines: h.lines ?? [],
    fields: h.fields ?? {},
  };
}

/** `--format ndjson`: one hit object a line. */
export function ndjsonPage(hits: AnyHit[], repo?: string): string {
  let s = '';
  for (const h of hits) s += JSON.stringify(stableHit(h, repo)) + '\n';
  return s;
}

/**
 * A JSON array written in pieces, `[`, the items, `]`, so that it never has to be held whole:
 * `--format json` (and `--json --all`, inside its object). One item a line.
 */
export class JsonArrayText {
  private count = 0;
  /** The text for these items, after those already given. */
  items(values: unknown[]): string {
    let s = '';
    for (const v of values) s += (this.count++ === 0 ? '\n' : ',\n') + JSON.stringify(v);
    return s;
  }
  /** The closing bracket (on its own line when there were items). */
  close(): string {
    return this.count === 0 ? ']' : '\n]';
  }
  get length(): number {
    return this.count;
  }
}

/**
 * A TSV cell that cannot break its row: backslash, tab, newline and carriage return written as
 * `\\`, `\t`, `\n`, `\r` (PostgreSQL COPY's text format), so a reader can undo it exactly.
 */
export function tsvCell(v: string | null | undefined): string {
  if (v === null || v === undefined) return '';
  return v.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** `--format tsv`: repo, namespace, object, note_author, note_at, snippet; one hit a line, no header. */
export function tsvPage(hits: AnyHit[], repo?: string): string {
  let s = '';
  for (const raw of hits) {
    const h = stableHit(raw, repo);
    s += [h.repo, h.namespace, h.object, h.note_author, h.note_at, h.snippet].map(tsvCell).join('\t') + '\n';
  }
  return s;
}

/** The columns of `mkt notes export`, in order: the JSON-lines keys and the CSV header. */
export const EXPORT_COLUMNS = [
  'repo',
  'namespace',
  'object',
  'object_type',
  'note_author',
  'note_email',
  'note_at',
  'commit_subject',
  'commit_author',
  'fields',
  'content',
] as const;

/** An exported note: the stable fields but the snippet and lines, and its whole text. */
export type ExportRecord = Omit<StableHit, 'snippet' | 'lines'> & { content: string };

export function exportRecord(raw: AnyHit, repo?: string): ExportRecord {
  const h = stableHit(raw, repo);
  return {
    repo: h.repo,
    namespace: h.namespace,
    object: h.object,
    object_type: h.object_type,
    note_author: h.note_author,
    note_email: h.note_email,
    note_at: h.note_at,
    commit_subject: h.commit_subject,
    commit_author: h.commit_author,
    fields: h.fields,
    content: raw.content ?? '',
  };
}

/** `export --format jsonl`: one note a line. */
export function jsonlPage(hits: AnyHit[], repo?: string): string {
  let s = '';
  for (const h of hits) s += JSON.stringify(exportRecord(h, repo)) + '\n';
  return s;
}

/**
 * One CSV field (RFC 4180): quoted when it holds a quote, a comma, CR or LF (or starts or ends
 * with a space, which some readers trim), quotes doubled; null is the empty field.
 */
export function csvCell(v: string | null): string {
  if (v === null) return '';
  return /[",\r\n]|^\s|\s$/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** One CSV record, ended by CRLF as RFC 4180 writes it. */
export function csvRow(cells: (string | null)[]): string {
  return cells.map(csvCell).join(',') + '\r\n';
}

export const CSV_HEADER = csvRow([...EXPORT_COLUMNS]);

/** `export --format csv`: the records of one page (`fields` as JSON text). */
export function csvPage(hits: AnyHit[], repo?: string): string {
  let s = '';
  for (const h of hits) {
    const r = exportRecord(h, repo);
    s += csvRow(EXPORT_COLUMNS.map((c) => (c === 'fields' ? JSON.stringify(r.fields) : r[c])));
  }
  return s;
}
