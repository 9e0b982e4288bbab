// The writers of `mkt notes search|export` (issue 36) without a server: NDJSON's stable fields,
// a JSON array written in pieces, TSV escaping that can be undone, CSV as RFC 4180 quotes it,
// URL-sized commit chunks, the page walk (every page, or until enough hits), and a reader that
// closes stdout (EPIPE) ending the writing quietly.
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CSV_HEADER, EXPORT_COLUMNS, JsonArrayText, csvCell, csvPage, jsonlPage, ndjsonPage, stableHit, tsvCell, tsvPage, type AnyHit } from '../../../commands/notes/hit-formats.js';
import { OutputSink, isOutputClosed, withSink } from '../../../commands/notes/output-sink.js';
import { CountSum, chunkIds, walkPages, type FetchPage } from '../../../commands/notes/search-pages.js';
import type { SearchResponse } from '../../../src/schemas/notes.js';

const A = 'a'.repeat(40);
const hit = (over: Partial<AnyHit> = {}): AnyHit => ({
  repo: 'ana/widgets',
  namespace: 'review',
  git_ref: 'refs/notes/review',
  target: A,
  object: A,
  object_type: 'commit',
  note_author: 'Ana',
  note_email: 'ana@example.com',
  note_at: '2026-11-29T13:00:00.000Z',
  commit_subject: 'fix: the race',
  commit_author: 'Bo <bo@example.com>',
  snippet: 'Code-Review+2',
  score: 0,
  lines: [{ n: 1, text: 'Code-Review+2: looks good' }],
  fields: { 'Code-Review': ['+2 looks good'] },
  ...over,
});

describe('hit formats', () => {
  it('ndjson: one object a line with exactly the stable fields, in their order', () => {
    const text = ndjsonPage([hit(), hit({ namespace: 'ci' })]);
    const lines = text.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    const first = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(Object.keys(first)).toEqual(['repo', 'namespace', 'object', 'object_type', 'note_author', 'note_email', 'note_at', 'commit_subject', 'commit_author', 'snippet', 'lines', 'fields']);
    expect(first.fields).toEqual({ 'Code-Review': ['+2 looks good'] });
    expect(JSON.parse(lines[1]!)).toMatchObject({ namespace: 'ci' });
  });

  it("a hit of an older server (no issue-36 fields) still gives every stable field: nulls, [], {}, the repo asked", () => {
    const old: AnyHit = { namespace: 'commits', git_ref: 'refs/notes/commits', target: A, object_type: 'blob', snippet: 's', score: 1 };
    expect(stableHit(old, 'ana/widgets')).toEqual({
      repo: 'ana/widgets', namespace: 'commits', object: A, object_type: 'blob', note_author: null, note_email: null, note_at: null, commit_subject: null, commit_author: null, snippet: 's', lines: [], fields: {},
    });
  });

  it('JSON array in pieces: valid JSON whatever the pages, empty included', () => {
    const empty = new JsonArrayText();
    expect(JSON.parse('[' + empty.close())).toEqual([]);
    const arr = new JsonArrayText();
    const text = '[' + arr.items([1, { a: 'x' }]) + arr.items([]) + arr.items(['y']) + arr.close();
    expect(JSON.parse(text)).toEqual([1, { a: 'x' }, 'y']);
    expect(arr.length).toBe(3);
  });

  it('tsv: six columns; tab, newline, CR and backslash escaped so that each hit is one line and can be undone', () => {
    const snippet = 'a\tb\nc\r\\d';
    const line = tsvPage([hit({ snippet, note_author: null })]);
    expect(line.split('\n')).toHaveLength(2);
    const cols = line.slice(0, -1).split('\t');
    expect(cols).toEqual(['ana/widgets', 'review', A, '', '2026-11-29T13:00:00.000Z', 'a\\tb\\nc\\r\\\\d']);
    const undo = (s: string): string => s.replace(/\\(.)/g, (_, c: string) => (c === 't' ? '\t' : c === 'n' ? '\n' : c === 'r' ? '\r' : c));
    expect(undo(cols[5]!)).toBe(snippet);
    expect(tsvCell(undefined)).toBe('');
  });

  it('csv: RFC 4180 quoting (quotes doubled; commas, CR, LF quoted), CRLF records, a header, fields as JSON text', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('cr\r')).toBe('"cr\r"');
    expect(csvCell(' lead')).toBe('" lead"');
    expect(csvCell(null)).toBe('');
    expect(CSV_HEADER).toBe(EXPORT_COLUMNS.join(',') + '\r\n');
    const content = 'Reviewed-by: Ana\n{"perf": 1.5, "name": "a,b"}\n';
    const rows = parseCsv(CSV_HEADER + csvPage([hit({ content, note_email: null })]));
    expect(rows).toHaveLength(2);
    const rec = Object.fromEntries(EXPORT_COLUMNS.map((c, i) => [c, rows[1]![i]]));
    expect(rec.content).toBe(content);
    expect(rec.note_email).toBe('');
    expect(JSON.parse(rec.fields!)).toEqual({ 'Code-Review': ['+2 looks good'] });
  });

  it('jsonl export: the export columns as keys, content included', () => {
    const rec = JSON.parse(jsonlPage([hit({ content: 'x=1\n' })]).trim()) as Record<string, unknown>;
    expect(Object.keys(rec)).toEqual([...EXPORT_COLUMNS]);
    expect(rec.content).toBe('x=1\n');
  });
});

/** A small RFC 4180 reader (the test's own, so the writer is checked against the grammar, not itself). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let i = 0;
  let quoted = false;
  const endCell = (): void => {
    row.push(cell);
    cell = '';
  };
  while (i < text.length) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      cell += '"';
      i += 2;
    } else if (quoted && c === '"') {
      quoted = false;
      i++;
    } else if (quoted) {
      cell += c;
      i++;
    } else if (c === '"') {
      quoted = true;
      i++;
    } else if (c === ',') {
      endCell();
      i++;
    } else if (c === '\r' && text[i + 1] === '\n') {
      endCell();
      rows.push(row);
      row = [];
      i += 2;
    } else {
      cell += c;
      i++;
    }
  }
  expect(cell).toBe('');
  return rows;
}

describe('commit chunks', () => {
  it('keeps each request under the URL budget and in order, SHA-1 and SHA-256 alike', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => i.toString(16).padStart(40, '0'));
    const chunks = chunkIds(ids);
    expect(chunks.flat()).toEqual(ids);
    for (const c of chunks) expect(c.length * 43).toBeLessThanOrEqual(8192);
    expect(chunks[0]).toHaveLength(190);
    const long = chunkIds(Array.from({ length: 300 }, (_, i) => i.toString(16).padStart(64, '0')));
    expect(long[0]).toHaveLength(122);
    expect(chunkIds([])).toEqual([]);
    expect(chunkIds(ids, 1_000_000, 300).map((c) => c.length)).toEqual([300, 300, 300, 100]);
  });
});

/** A search of `n` hits answered `size` at a time, recording what was asked. */
function pagedSource(n: number, size: number, per: (commits?: string[]) => number = () => n) {
  const asked: { commits?: string[]; cursor?: string; limit?: number }[] = [];
  const fetch: FetchPage = async (req) => {
    asked.push(req);
    const total = per(req.commits);
    const from = req.cursor === undefined ? 0 : Number(req.cursor);
    const take = Math.min(size, req.limit ?? size);
    const data = Array.from({ length: Math.max(0, Math.min(take, total - from)) }, (_, i) => hit({ snippet: `${req.commits?.[0] ?? ''}#${from + i}` })) as SearchResponse['data'];
    const end = from + data.length;
    return { data, next_cursor: end < total ? String(end) : null, indexed: true, total: data.length };
  };
  return { fetch, asked };
}

describe('page walk', () => {
  it('--all: follows next_cursor to the end, one request at a time, a page handed on before the next is asked', async () => {
    const src = pagedSource(450, 200);
    const seen: number[] = [];
    for await (const page of walkPages(src.fetch, { all: true, limit: 50, pageSize: 200 })) {
      seen.push(page.hits.length);
      expect(src.asked).toHaveLength(seen.length);
    }
    expect(seen).toEqual([200, 200, 50]);
    expect(src.asked.map((a) => a.cursor)).toEqual([undefined, '200', '400']);
  });

  it('without --all: at most --limit hits, past short pages (a regex page may hold none) and across chunks; says when more remain', async () => {
    const src = pagedSource(3, 200, (commits) => (commits?.[0] === 'c1' ? 0 : 3));
    const pages = [];
    for await (const p of walkPages(src.fetch, { chunks: [['c1'], ['c2'], ['c3']], all: false, limit: 5 })) pages.push(p);
    expect(pages.map((p) => p.hits.length)).toEqual([0, 3, 2]);
    expect(pages.at(-1)!.more).toBe(true);
    expect(src.asked.map((a) => a.limit)).toEqual([5, 5, 2]);
    const exact = pagedSource(5, 200);
    const last = [];
    for await (const p of walkPages(exact.fetch, { all: false, limit: 5 })) last.push(p);
    expect(last.at(-1)!.more).toBe(false);
  });

  it('counts of several chunks are summed by key, largest first then by key', () => {
    const sum = new CountSum();
    sum.add({ groups: [{ key: '+2', count: 3 }, { key: '-1', count: 1 }], indexed: true, truncated: false });
    sum.add({ groups: [{ key: '-1', count: 2 }, { key: '+1', count: 3 }], indexed: false, truncated: true });
    expect(sum.groups()).toEqual([{ key: '+1', count: 3 }, { key: '+2', count: 3 }, { key: '-1', count: 3 }].sort((a, b) => (a.key < b.key ? -1 : 1)));
    expect(sum.indexed).toBe(false);
    expect(sum.truncated).toBe(true);
  });
});

describe('a reader that closes stdout', () => {
  it('EPIPE ends the writing with OutputClosed, which withSink turns into a quiet end', async () => {
    const out = new PassThrough();
    let pages = 0;
    await withSink(out, async (sink) => {
      for (;;) {
        await sink.write(`page ${pages}\n`);
        pages++;
        if (pages === 3) out.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      }
    });
    expect(pages).toBe(3);
  });

  it('waits for a slow reader (backpressure) instead of buffering, then goes on', async () => {
    const chunks: string[] = [];
    let release: (() => void) | undefined;
    const slow = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _enc, cb) {
        chunks.push(chunk.toString());
        release = cb;
      },
    });
    const sink = new OutputSink(slow);
    let second = false;
    const first = sink.write('x'.repeat(64));
    const done = first.then(() => sink.write('y')).then(() => (second = true));
    await new Promise((r) => setImmediate(r));
    expect(chunks).toEqual(['x'.repeat(64)]);
    expect(second).toBe(false);
    release!();
    await new Promise((r) => setImmediate(r));
    release!();
    await done;
    expect(chunks.join('')).toBe('x'.repeat(64) + 'y');
    sink.release();
  });

  it('another write error is not swallowed', async () => {
    const out = new PassThrough();
    const err = await withSink(out, async (sink) => {
      out.emit('error', Object.assign(new Error('disk full'), { code: 'ENOSPC' }));
      await sink.write('x');
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('disk full');
    expect(isOutputClosed(err)).toBe(false);
  });
});
