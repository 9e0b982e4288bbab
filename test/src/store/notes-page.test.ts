// SqlNotesIndex.searchPage, countBy and missing on both engines (issue 36): every filter against
// a reference computed here from the notes written, keyset paging that returns every row once
// (id order, and score order with ties), exact literal search (message ids, URLs, SHAs, case,
// short literals, regex candidates with and without case folding), counts, commits without a
// note, field rows that follow every change of their note, and a note full of trailers.
import { expect, it } from 'vitest';
import { describeEngines } from '../../helpers/engines.js';
import { SqlNotesIndex } from '../../../src/store/notes-sql.js';
import { parseQuery } from '../../../src/notes/query.js';
import { parseFields, MAX_FIELDS } from '../../../src/notes/fields.js';
import type { IndexMatch, IndexRow, NoteFilter, NoteUpsert, PageRequest } from '../../../src/store/notes.js';
import type { SqlDatabase } from '../../../src/store/sql.js';

const T = (n: number) => n.toString(16).padStart(40, '0');
const DAY = 86_400_000;
const AUTHORS = [
  ['Ana Lima', 'ana@example.org'],
  ['Bo Chen', 'BO@example.org'],
  ['José Núñez', 'jose@example.org'],
] as const;

interface Spec extends NoteUpsert {
  namespace: string;
}

/** 90 notes in two namespaces: trailers, key=value lines and JSON lines, three authors, a day apart. */
function corpus(): Spec[] {
  const out: Spec[] = [];
  for (let i = 0; i < 90; i++) {
    const [name, email] = AUTHORS[i % 3]!;
    const shape = i % 3;
    const content =
      shape === 0
        ? `Build ${i} passed\n\nReviewed-by: ${AUTHORS[(i + 1) % 3]![0]} <${AUTHORS[(i + 1) % 3]![1]}>\nCode-Review+${i % 2 ? 2 : 1}: ok`
        : shape === 1
          ? `status=${i % 4 ? 'green' : 'RED'}\nduration=${i}\nlink=https://ci.example.org/run/${i}?a=b`
          : `{"perf": ${i}, "suite": "s${i % 5}", "ok": ${i % 2 === 0}}\nMessage-Id: <2026010${i % 9}.abc${i}@example.org>`;
    out.push({
      namespace: i % 4 === 3 ? 'ci' : 'commits',
      target: T(i + 1),
      object_type: i % 10 === 9 ? 'tag' : 'commit',
      blob: `blob-${i}`,
      content,
      note_author: name,
      note_email: email,
      note_at: Date.UTC(2026, 0, 1) + i * DAY,
      commit_subject: i % 10 === 9 ? null : `subject ${i}`,
      commit_author: i % 10 === 9 ? null : 'Dev',
    });
  }
  return out;
}

async function load(db: SqlDatabase, specs: Spec[]): Promise<SqlNotesIndex> {
  const index = await SqlNotesIndex.open(db);
  for (const ns of new Set(specs.map((s) => s.namespace))) {
    await index.apply('r', ns, { from: null, to: `tip-${ns}` }, specs.filter((s) => s.namespace === ns), []);
  }
  // Another repository's notes never leak into r's answers.
  await index.apply('other', 'commits', { from: null, to: 't' }, specs.slice(0, 10).map((s) => ({ ...s })), []);
  return index;
}

/** Every row of a search, page by page (keyset), checking that no row comes twice. */
async function all(index: SqlNotesIndex, match: IndexMatch, filter: NoteFilter, limit = 7, extra: Partial<PageRequest> = {}): Promise<IndexRow[]> {
  const out: IndexRow[] = [];
  let after: PageRequest['after'];
  for (let pages = 0; pages < 1000; pages++) {
    const page = await index.searchPage('r', match, filter, { after, limit, ...extra });
    out.push(...page);
    if (page.length < limit) break;
    const last = page[page.length - 1]!;
    after = { id: last.id, score: last.score };
  }
  expect(new Set(out.map((r) => r.id)).size).toBe(out.length);
  return out;
}

const targets = (rows: { target: string }[]) => rows.map((r) => r.target);

/** The reference: the corpus's notes meeting a filter, by its own reading of fields. */
function reference(specs: Spec[], f: NoteFilter, text?: (content: string) => boolean): string[] {
  return specs
    .filter((s) => {
      if (f.namespace !== undefined && s.namespace !== f.namespace) return false;
      if (f.commitsOnly && s.object_type !== 'commit') return false;
      const fields = parseFields(s.content);
      for (const ff of f.fields ?? []) {
        const values = fields.filter((x) => x.key.toLowerCase() === ff.key.toLowerCase()).map((x) => x.value);
        if (!values.some((v) => (ff.op === '=' ? v === ff.value : v.toLowerCase().includes(ff.value.toLowerCase())))) return false;
      }
      if (f.author !== undefined && s.note_author!.toLowerCase() !== f.author.toLowerCase() && s.note_email!.toLowerCase() !== f.author.toLowerCase()) return false;
      if (f.since !== undefined && s.note_at! < f.since) return false;
      if (f.until !== undefined && s.note_at! >= f.until) return false;
      if (f.commits !== undefined && !f.commits.includes(s.target)) return false;
      return text ? text(s.content) : true;
    })
    .map((s) => s.target);
}

describeEngines('SqlNotesIndex.searchPage', (open) => {
  it('pages every note once in id order, with metadata, fields and content, under each filter', async () => {
    const specs = corpus();
    const index = await load(await open(), specs);
    const rows = await all(index, { kind: 'all' }, {}, 7, { withContent: true });
    expect(rows.map((r) => r.id)).toEqual([...rows.map((r) => r.id)].sort((a, b) => a - b));
    expect(new Set(targets(rows))).toEqual(new Set(specs.map((s) => s.target)));
    const byTarget = new Map(specs.map((s) => [s.target, s]));
    for (const r of rows) {
      const s = byTarget.get(r.target)!;
      expect(r).toMatchObject({ namespace: s.namespace, object_type: s.object_type, score: 0, snippet: '', note_author: s.note_author, note_email: s.note_email, note_at: s.note_at, commit_subject: s.commit_subject, commit_author: s.commit_author, content: s.content });
      expect(r.fields).toEqual(parseFields(s.content).map((f) => ({ key: f.key, value: f.value })));
    }
    expect((await index.searchPage('r', { kind: 'all' }, {}, { limit: 3 }))[0]).not.toHaveProperty('content');

    const filters: NoteFilter[] = [
      { namespace: 'ci' },
      { commitsOnly: true },
      { fields: [{ key: 'status', op: '=', value: 'green' }] },
      { fields: [{ key: 'STATUS', op: '=', value: 'red' }] }, // the key folds, an exact value does not
      { fields: [{ key: 'status', op: '~', value: 'RE' }] },
      { fields: [{ key: 'reviewed-by', op: '~', value: 'bo chen' }, { key: 'Code-Review', op: '=', value: '+2 ok' }] },
      { fields: [{ key: 'suite', op: '=', value: 's3' }, { key: 'ok', op: '=', value: 'true' }] },
      { fields: [{ key: 'link', op: '~', value: '' }] },
      { fields: [{ key: 'nothing', op: '~', value: '' }] },
      { author: 'ana lima' },
      { author: 'bo@EXAMPLE.org' },
      { author: 'JOSÉ NÚÑEZ' },
      { since: Date.UTC(2026, 0, 10), until: Date.UTC(2026, 0, 20) },
      { since: Date.UTC(2026, 1, 1) },
      { commits: [T(5), T(1), T(44), T(999)] },
      { namespace: 'commits', commitsOnly: true, author: 'ana@example.org', since: Date.UTC(2026, 0, 15), fields: [{ key: 'reviewed-by', op: '~', value: 'BO' }] },
    ];
    for (const f of filters) {
      const want = reference(specs, f);
      // Ids follow insertion (namespace by namespace), the reference the corpus: compared as sorted lists.
      expect(targets(await all(index, { kind: 'all' }, f)).sort(), JSON.stringify(f)).toEqual([...want].sort());
      expect(want.length, JSON.stringify(f)).toBeLessThan(specs.length); // every filter narrows
    }
    expect(reference(specs, filters[2]!).length).toBeGreaterThan(0);
    // NUL in a filter matches nothing on both engines (PostgreSQL text could not even bind it).
    for (const f of [{ author: 'a\0' }, { fields: [{ key: 'status', op: '~' as const, value: '\0' }] }, { namespace: 'ci\0' }]) {
      expect(await index.searchPage('r', { kind: 'all' }, f, { limit: 5 })).toEqual([]);
    }
  });

  it('pages a ranked word search by score then id, ties included, in the order and with the snippets of search()', async () => {
    const specs = corpus();
    // Ties: identical notes score alike; the page boundary falls among them.
    for (let i = 0; i < 9; i++) specs.push({ namespace: 'commits', target: T(500 + i), object_type: 'commit', blob: `tie-${i}`, content: 'deploy parser tie' });
    const index = await load(await open(), specs);
    for (const q of ['passed', 'deploy or green', 'example', 'parser tie']) {
      const query = parseQuery(q);
      const rows = await all(index, { kind: 'words', query }, {}, 4);
      const legacy = await index.search('r', query, { limit: 200 });
      expect(rows.length, q).toBe(legacy.length);
      for (let i = 1; i < rows.length; i++) {
        const [a, b] = [rows[i - 1]!, rows[i]!];
        expect(a.score > b.score || (a.score === b.score && a.id < b.id), q).toBe(true);
      }
      // search() ties by namespace and target, pages by id: the same scores in the same order, the same snippets.
      expect(rows.map((r) => r.score)).toEqual(legacy.map((h) => h.score));
      const snippet = new Map(legacy.map((h) => [`${h.namespace}/${h.target}`, h.snippet]));
      for (const r of rows) expect(r.snippet).toBe(snippet.get(`${r.namespace}/${r.target}`));
    }
    const ties = await all(index, { kind: 'words', query: parseQuery('tie') }, {}, 2);
    expect(targets(ties)).toEqual(Array.from({ length: 9 }, (_, i) => T(500 + i)));
    // Filters apply to ranked search too.
    const ci = await all(index, { kind: 'words', query: parseQuery('example') }, { namespace: 'ci', author: 'bo chen' }, 3);
    expect(new Set(targets(ci))).toEqual(new Set(reference(specs, { namespace: 'ci', author: 'bo chen' }, (c) => /example/i.test(c))));
  });

  it('finds exact literals: message ids, URLs, SHAs; case-sensitive; short ones; all of several', async () => {
    const sha = 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3';
    const specs: Spec[] = [
      'From: <20260101.abc@example.org> and more',
      'see https://example.org/a?b=c&d=%20 for the log',
      `cherry picked from commit ${sha}`,
      `mentions ${sha.slice(0, 12)} only`,
      'ABC upper and 100% sure_ok',
      'abc lower',
      'x',
      'nul\0inside <20260101.abc@example.org>',
      'ünïcödé text 日本語テキスト',
    ].map((content, i) => ({ namespace: 'n', target: T(i + 1), object_type: 'commit', blob: `b${i}`, content }));
    const index = await load(await open(), specs);
    const lit = async (text: string) => targets(await all(index, { kind: 'literal', text }, {}, 2));
    const ref = (text: string) => specs.filter((s) => s.content.includes(text)).map((s) => s.target);
    for (const text of ['<20260101.abc@example.org>', '20260101.abc@', 'https://example.org/a?b=c&d=%20', sha, sha.slice(0, 12), 'ABC', 'abc', 'Abc', '100%', '_ok', '%', '_', 'x', 'ab', 'ü', '日本', '語テキ', 'nul', 'not there at all', '"quoted"']) {
      expect(await lit(text), text).toEqual(ref(text));
    }
    expect(await lit('ABC')).toEqual([T(5)]);
    expect(await lit('a\0b')).toEqual([]); // NUL in a literal matches nothing, on both engines
    // Literals: every text, case-sensitive.
    const lits = async (texts: string[], caseInsensitive = false) => targets(await all(index, { kind: 'literals', texts }, {}, 3, { caseInsensitive }));
    expect(await lits(['example.org', '<2026'])).toEqual([T(1), T(8)]);
    expect(await lits(['example.org', 'nul'])).toEqual([T(8)]);
    expect(await lits([])).toEqual(specs.map((s) => s.target));
    // Case-insensitive: ASCII texts narrow as ASCII folded, others narrow nothing (the regex decides).
    expect(await lits(['abc'], true)).toEqual([T(1), T(5), T(6), T(8)]);
    expect(await lits(['ABC UPPER'], true)).toEqual([T(5)]);
    expect(await lits(['Ü'], true)).toEqual(specs.map((s) => s.target));
    // With filters.
    expect(targets(await all(index, { kind: 'literal', text: 'example.org' }, { commits: [T(2), T(8)] }))).toEqual([T(2), T(8)]);
  });

  it('counts per namespace, author and field value, largest first then by key, bounded', async () => {
    const specs = corpus();
    const index = await load(await open(), specs);
    const count = (keys: string[]) => {
      const m = new Map<string, number>();
      for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
      return [...m].map(([key, n]) => ({ key, count: n })).sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    };
    expect(await index.countBy('r', { kind: 'all' }, {}, 'namespace', 10)).toEqual(count(specs.map((s) => s.namespace)));
    expect(await index.countBy('r', { kind: 'all' }, { namespace: 'ci' }, 'note_author', 10)).toEqual(count(specs.filter((s) => s.namespace === 'ci').map((s) => s.note_author!)));
    const suites = specs.flatMap((s) => parseFields(s.content).filter((f) => f.key === 'suite').map((f) => f.value));
    expect(await index.countBy('r', { kind: 'all' }, {}, { field: 'SUITE' }, 100)).toEqual(count(suites));
    expect(await index.countBy('r', { kind: 'all' }, {}, { field: 'suite' }, 2)).toEqual(count(suites).slice(0, 2));
    const passed = specs.filter((s) => /\bpassed\b/.test(s.content));
    expect(await index.countBy('r', { kind: 'words', query: parseQuery('passed') }, {}, 'namespace', 10)).toEqual(count(passed.map((s) => s.namespace)));
    expect(await index.countBy('r', { kind: 'literal', text: 'RED' }, {}, { field: 'status' }, 10)).toEqual([{ key: 'RED', count: specs.filter((s) => s.content.includes('status=RED')).length }]);
    expect(await index.countBy('r', { kind: 'all' }, {}, { field: 'absent' }, 10)).toEqual([]);
  });

  it('lists the commits without a note in the order given', async () => {
    const index = await load(await open(), corpus());
    expect(await index.missing('r', 'ci', [T(4), T(999), T(1), T(8), T(998)])).toEqual([T(999), T(1), T(998)]);
    expect(await index.missing('r', 'commits', [])).toEqual([]);
    expect(await index.missing('r', 'nope', [T(2), T(1)])).toEqual([T(2), T(1)]);
  });

  it('reads notes\' texts by id, of the repository asked only', async () => {
    const specs = corpus();
    const index = await load(await open(), specs);
    const rows = (await index.searchPage('r', { kind: 'all' }, {}, { limit: 5, withContent: true })).slice(0, 5);
    const mine = await index.contents('r', rows.map((r) => r.id));
    expect([...mine.keys()].sort()).toEqual(rows.map((r) => r.id).sort());
    for (const r of rows) expect(mine.get(r.id)).toBe(r.content);
    const others = (await index.searchPage('other', { kind: 'all' }, {}, { limit: 3 })).map((r) => r.id);
    expect((await index.contents('r', others)).size).toBe(0);
    expect((await index.contents('r', [])).size).toBe(0);
  });

  it('keeps field rows in step with their notes through apply, replaceRef, dropRef and dropRepo; bounds a note full of trailers', async () => {
    const db = await open();
    const index = await SqlNotesIndex.open(db);
    const fieldRows = async () => Number(await db.value<number>('SELECT COUNT(*) FROM note_fields'));
    const n = (i: number, content: string): NoteUpsert => ({ target: T(i), object_type: 'commit', blob: `b${i}-${content.length}-${content.slice(0, 8)}`, content });
    await index.apply('r', 'a', { from: null, to: 't1' }, [n(1, 'k=1\nj=2'), n(2, 'Signed-off-by: x')], []);
    expect(await fieldRows()).toBe(3);
    await index.apply('r', 'a', { from: 't1', to: 't2' }, [n(1, 'k=3')], [T(2)]);
    expect(await fieldRows()).toBe(1);
    expect((await index.searchPage('r', { kind: 'all' }, { fields: [{ key: 'k', op: '=', value: '3' }] }, { limit: 5 })).map((r) => r.fields)).toEqual([[{ key: 'k', value: '3' }]]);
    expect(await index.searchPage('r', { kind: 'all' }, { fields: [{ key: 'k', op: '=', value: '1' }] }, { limit: 5 })).toEqual([]);
    await index.replaceRef('r', 'a', { from: 't2', to: 't3' }, [n(5, 'a=1\nb=2\nc=3')]);
    await index.apply('r', 'b', { from: null, to: 'u1' }, [n(6, 'z=9')], []);
    expect(await fieldRows()).toBe(4);
    await index.dropRef('r', 'b', 'u1');
    expect(await fieldRows()).toBe(3);
    // A note of trailers: the first MAX_FIELDS are kept, in order.
    const many = Array.from({ length: MAX_FIELDS + 500 }, (_, i) => `Field-${i}-x: value ${i}`).join('\n');
    await index.apply('r', 'a', { from: 't3', to: 't4' }, [n(7, many)], []);
    expect(await fieldRows()).toBe(3 + MAX_FIELDS);
    const [row] = await index.searchPage('r', { kind: 'all' }, { fields: [{ key: 'field-999-x', op: '~', value: 'VALUE 999' }] }, { limit: 5 });
    expect(row!.fields).toHaveLength(MAX_FIELDS);
    expect(row!.fields[MAX_FIELDS - 1]).toEqual({ key: `Field-${MAX_FIELDS - 1}-x`, value: `value ${MAX_FIELDS - 1}` });
    expect(await index.searchPage('r', { kind: 'all' }, { fields: [{ key: `field-${MAX_FIELDS}-x`, op: '~', value: '' }] }, { limit: 5 })).toEqual([]);
    // Metadata: an upsert without note_at keeps it; one with it replaces it.
    await index.apply('r', 'a', { from: 't4', to: 't5' }, [{ ...n(5, 'a=1\nb=2\nc=3'), note_author: 'A', note_email: 'a@x', note_at: 5 }], []);
    await index.apply('r', 'a', { from: 't5', to: 't6' }, [n(5, 'a=1\nb=2\nc=3')], []);
    const [meta] = await index.searchPage('r', { kind: 'all' }, { author: 'a@X' }, { limit: 5 });
    expect(meta).toMatchObject({ target: T(5), note_author: 'A', note_at: 5 });
    // Keys and values neither engine stores as given (NUL, a lone surrogate) are stored alike.
    await index.apply('r', 'a', { from: 't6', to: 't7' }, [n(8, '{"odd\\u0000key": "nul\\u0000inside", "s": "\\ud800x"}')], []);
    const [odd] = await index.searchPage('r', { kind: 'all' }, { commits: [T(8)] }, { limit: 5 });
    expect(odd!.fields).toEqual(parseFields('{"odd\\u0000key": "nul\\u0000inside", "s": "\\ud800x"}').map((f) => ({ key: f.key.replaceAll('\0', ''), value: Buffer.from(f.value.replaceAll('\0', ''), 'utf8').toString('utf8') })));
    await index.dropRepo('r');
    expect(await fieldRows()).toBe(0);
  });
});
