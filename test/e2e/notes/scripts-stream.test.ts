// Issue 36, notes search for scripts, on a repository of 10,000 notes in three shapes (trailers,
// key=value lines, JSON lines): every hit exactly once through the API's pages and through
// `mkt notes search --all --format ndjson` (compared with `git notes list`), each hit's metadata
// and fields against the fixture's own reference, counts, `missing` against `git rev-list`, and
// `mkt notes export` parsed back (JSON lines and CSV) equal to the notes git holds. The CLI is the
// built binary: needs `npm run build`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNotesServer, type NotesServer } from '../../helpers/notes-server.js';
import { tempDir } from '../../helpers/tmp.js';
import { MAX_COMMITS } from '../../../src/schemas/notes.js';
import {
  buildNotesFixture,
  fieldsByKey,
  fixtureGit,
  getJson,
  hostFixture,
  gitNotesList,
  gitNotesText,
  hasField,
  runMkt,
  searchAll,
  type ApiHit,
  type FixtureCommit,
  type NotesFixture,
} from '../../helpers/notes-fixture.js';

const REPO = 'ana/big';
const SEARCH = `/api/git/${REPO}/notes/search`;
/** The keys of a `--format ndjson` hit, in order (issue 36's stable fields). */
const STABLE_KEYS = ['repo', 'namespace', 'object', 'object_type', 'note_author', 'note_email', 'note_at', 'commit_subject', 'commit_author', 'snippet', 'lines', 'fields'];
const EXPORT_KEYS = ['repo', 'namespace', 'object', 'object_type', 'note_author', 'note_email', 'note_at', 'commit_subject', 'commit_author', 'fields', 'content'];

let s: NotesServer;
let work: { path: string; remove(): void };
let home: string;
let fx: NotesFixture;
const bySha = new Map<string, FixtureCommit>();
/** Every note git holds in the clone, `namespace object`, sorted. */
let gitKeys: string[];

const mkt = (args: string[]) => runMkt(args, { cwd: fx.dir, home, url: s.url });
const keyOf = (namespace: string, object: string): string => `${namespace} ${object}`;
const refKeys = (keep: (c: FixtureCommit) => boolean): string[] => fx.commits.filter(keep).map((c) => keyOf(c.note.namespace, c.sha)).sort();
const hitKeys = (hits: { namespace: string; object: string }[]): string[] => hits.map((h) => keyOf(h.namespace, h.object)).sort();

/** What a hit must say of its note, from the fixture (not from the server's parser). */
function expectedHit(c: FixtureCommit) {
  return {
    repo: REPO,
    namespace: c.note.namespace,
    object: c.sha,
    object_type: 'commit',
    note_author: c.note.author.name,
    note_email: c.note.author.email,
    note_at: c.note.at,
    commit_subject: c.subject,
    commit_author: c.author.name,
    fields: fieldsByKey(c.note.fields),
  };
}

function actualHit(h: Pick<ApiHit, 'repo' | 'namespace' | 'object' | 'object_type' | 'note_author' | 'note_email' | 'note_at' | 'commit_subject' | 'commit_author' | 'fields'>) {
  return {
    repo: h.repo,
    namespace: h.namespace,
    object: h.object,
    object_type: h.object_type,
    note_author: h.note_author,
    note_email: h.note_email,
    note_at: h.note_at === null ? null : Date.parse(h.note_at),
    commit_subject: h.commit_subject,
    commit_author: h.commit_author,
    fields: h.fields,
  };
}

/** Compares hits with the fixture note by note (sorted by key, so a failure shows the first difference). */
function expectHitsMatchFixture(hits: Parameters<typeof actualHit>[0][]): void {
  const sorted = [...hits].sort((a, b) => keyOf(a.namespace, a.object).localeCompare(keyOf(b.namespace, b.object)));
  const want = sorted.map((h) => bySha.get(h.object)).map((c) => (c ? expectedHit(c) : undefined));
  const got = sorted.map(actualHit);
  // The first difference alone: a diff of 10,000 objects says less.
  const at = got.findIndex((g, i) => JSON.stringify(g) !== JSON.stringify(want[i]));
  if (at >= 0) expect({ at, hit: got[at] }).toEqual({ at, hit: want[at] });
  const differ = got.filter((g, i) => JSON.stringify(g) !== JSON.stringify(want[i])).length;
  expect(differ).toBe(0);
}

function ndjson(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** RFC 4180: quoted fields with doubled quotes, CR LF or LF between records. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += ch;
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

beforeAll(async () => {
  s = await startNotesServer();
  work = tempDir('mkt-notes-scripts-');
  home = work.path;
  fx = await buildNotesFixture(work.path);
  for (const c of fx.commits) bySha.set(c.sha, c);
  await hostFixture(s, REPO, fx);
  // OWNER/REPO for the CLI comes from the clone's origin.
  await fixtureGit(fx.dir, ['remote', 'add', 'origin', `${s.url}/${REPO}.git`]);
  gitKeys = [];
  for (const ns of fx.namespaces) for (const target of (await gitNotesList(fx.dir, ns)).keys()) gitKeys.push(keyOf(ns, target));
  gitKeys.sort();
});

afterAll(async () => {
  await s?.close();
  work?.remove();
});

describe('every hit, streamed', () => {
  it('the API pages (no query, limit 200) give every note once, as git lists them, with metadata and fields', async () => {
    expect(gitKeys).toHaveLength(10_000);
    expect(gitKeys).toEqual(refKeys(() => true));
    const { hits, pages } = await searchAll(s.url, SEARCH, [['limit', '200']]);
    expect(hitKeys(hits)).toEqual(gitKeys);
    expect(pages.every((p) => p.indexed && p.data.length <= 200 && p.total === p.data.length)).toBe(true);
    // Every page but the last is full: index order has no holes to page over.
    expect(pages.slice(0, -1).every((p) => p.data.length === 200)).toBe(true);
    expect(hits.every((h) => h.target === h.object && h.git_ref === `refs/notes/${h.namespace}` && h.score === 0 && h.lines.length === 0 && h.content === undefined)).toBe(true);
    expectHitsMatchFixture(hits);
  });

  it('content=true carries each note exactly as git holds it', async () => {
    const { hits } = await searchAll(s.url, SEARCH, [['namespace', 'perf'], ['content', 'true'], ['limit', '200']]);
    const fromGit = await gitNotesText(fx.dir, 'perf');
    expect(new Map(hits.map((h) => [h.object, h.content]))).toEqual(fromGit);
  });

  it('default and capped page sizes hold with a cursor too (50 by default, 200 at most)', async () => {
    const first = await getJson<{ data: ApiHit[]; next_cursor: string | null }>(`${s.url}${SEARCH}`);
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(50);
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await getJson<{ data: ApiHit[] }>(`${s.url}${SEARCH}?limit=100000&cursor=${encodeURIComponent(first.body.next_cursor!)}`);
    expect(second.status).toBe(200);
    expect(second.body.data).toHaveLength(200);
    // The second page starts after the first: no note twice.
    const seen = new Set(first.body.data.map((h) => keyOf(h.namespace, h.object)));
    expect(second.body.data.some((h) => seen.has(keyOf(h.namespace, h.object)))).toBe(false);
  });

  it('`mkt notes search --all --format ndjson` writes every note once, one stable object a line', async () => {
    const r = await mkt(['notes', 'search', '--all', '--format', 'ndjson']);
    expect(r.code, r.stderr).toBe(0);
    const hits = ndjson(r.stdout);
    expect(hits).toHaveLength(10_000);
    expect(hits.every((h) => JSON.stringify(Object.keys(h)) === JSON.stringify(STABLE_KEYS))).toBe(true);
    expect(hitKeys(hits as unknown as ApiHit[])).toEqual(gitKeys);
    expectHitsMatchFixture(hits as unknown as ApiHit[]);
  });

  it('the CLI filters by field and namespace, and --range resolves A..B in the clone (more commits than one request holds)', async () => {
    const alice = await mkt(['notes', 'search', '--all', '--format', 'ndjson', '--namespace', 'review', '--field', 'Reviewed-by~alice']);
    expect(alice.code, alice.stderr).toBe(0);
    const want = refKeys((c) => c.note.namespace === 'review' && hasField(c.note.fields, 'Reviewed-by', '~', 'alice'));
    expect(want.length).toBeGreaterThan(100);
    expect(hitKeys(ndjson(alice.stdout) as unknown as ApiHit[])).toEqual(want);

    const a = fx.commits[100]!.sha;
    const b = fx.commits[2600]!.sha;
    const inRange = new Set((await fixtureGit(fx.dir, ['rev-list', `${a}..${b}`])).trim().split('\n'));
    expect(inRange.size).toBe(2500);
    const ranged = await mkt(['notes', 'search', '--all', '--format', 'ndjson', '--range', `${a}..${b}`, '--namespace', 'ci']);
    expect(ranged.code, ranged.stderr).toBe(0);
    const ciNotes = await gitNotesList(fx.dir, 'ci');
    const wantRange = [...inRange].filter((sha) => ciNotes.has(sha)).map((sha) => keyOf('ci', sha)).sort();
    expect(hitKeys(ndjson(ranged.stdout) as unknown as ApiHit[])).toEqual(wantRange);
  });

  it('--format tsv and --format json carry the same hits', async () => {
    const tsv = await mkt(['notes', 'search', '--all', '--format', 'tsv', '--namespace', 'ci', '--field', 'build=failed']);
    expect(tsv.code, tsv.stderr).toBe(0);
    const rows = tsv.stdout.split('\n').filter((l) => l !== '').map((l) => l.split('\t'));
    const want = refKeys((c) => c.note.namespace === 'ci' && hasField(c.note.fields, 'build', '=', 'failed'));
    expect(rows.every((r) => r[0] === REPO && r.length === 6)).toBe(true);
    expect(rows.map((r) => keyOf(r[1]!, r[2]!)).sort()).toEqual(want);
    const json = await mkt(['notes', 'search', '--all', '--format', 'json', '--namespace', 'ci', '--field', 'build=failed']);
    expect(json.code, json.stderr).toBe(0);
    expect(hitKeys(JSON.parse(json.stdout) as ApiHit[])).toEqual(want);
  });
});

describe('counts', () => {
  /** Groups as the contract orders them: count descending; ties by key (compared as a set). */
  function expectGroups(got: { key: string; count: number }[], want: Map<string, number>): void {
    for (let i = 1; i < got.length; i++) expect(got[i - 1]!.count).toBeGreaterThanOrEqual(got[i]!.count);
    expect(new Map(got.map((g) => [g.key, g.count]))).toEqual(want);
    expect(got).toHaveLength(want.size);
  }
  function tally(values: string[]): Map<string, number> {
    const m = new Map<string, number>();
    for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
    return m;
  }
  const count = async (qs: string) => getJson<{ groups: { key: string; count: number }[]; truncated: boolean; indexed: boolean }>(`${s.url}${SEARCH}?${qs}`);

  it('count_by namespace, note_author and field:KEY (a note with two values counts in both)', async () => {
    const ns = await count('count_by=namespace');
    expect(ns.status).toBe(200);
    expect(ns.body.groups).toEqual([
      { key: 'review', count: 3334 },
      { key: 'ci', count: 3333 },
      { key: 'perf', count: 3333 },
    ]);
    expect(ns.body).toMatchObject({ truncated: false, indexed: true });

    expectGroups((await count('count_by=note_author')).body.groups, tally(fx.commits.map((c) => c.note.author.name)));

    const votes = await count('count_by=field:Code-Review');
    expectGroups(votes.body.groups, tally(fx.commits.flatMap((c) => c.note.fields.filter((f) => f.key === 'Code-Review').map((f) => f.value))));
    // Keys ignore case; JSON arrays give one value per element.
    const tags = await count('count_by=field:TAGS&namespace=perf');
    expectGroups(tags.body.groups, tally(fx.commits.flatMap((c) => c.note.fields.filter((f) => f.key === 'tags').map((f) => f.value))));
    const reviewers = await count('count_by=field:reviewed-by');
    expectGroups(reviewers.body.groups, tally(fx.commits.flatMap((c) => c.note.fields.filter((f) => f.key === 'Reviewed-by').map((f) => f.value))));
  });

  it('count_by applies the filters, and the CLI prints key<TAB>count', async () => {
    const arm = await count(`count_by=namespace&field=${encodeURIComponent('platform=arm64')}`);
    expect(arm.body.groups).toEqual([{ key: 'ci', count: fx.commits.filter((c) => hasField(c.note.fields, 'platform', '=', 'arm64')).length }]);
    const r = await mkt(['notes', 'search', '--count-by', 'field:Code-Review', '--field', 'Reviewed-by~carol']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n').filter((l) => l !== '').map((l) => l.split('\t'));
    const want = tally(fx.commits.filter((c) => hasField(c.note.fields, 'Reviewed-by', '~', 'carol')).flatMap((c) => c.note.fields.filter((f) => f.key === 'Code-Review').map((f) => f.value)));
    expectGroups(
      lines.map(([key, n]) => ({ key: key!, count: Number(n) })),
      want,
    );
  });
});

describe('missing', () => {
  it('the API answers the commits given that have no note in the namespace, in the order given', async () => {
    const given = fx.commits.slice(0, MAX_COMMITS).map((c) => c.sha).reverse();
    const r = await getJson<{ data: { object: string }[]; namespace: string }>(`${s.url}/api/git/${REPO}/notes/missing?namespace=ci&commits=${given.join(',')}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.namespace).toBe('ci');
    expect(r.body.data.map((d) => d.object)).toEqual(given.filter((sha) => bySha.get(sha)!.note.namespace !== 'ci'));
    // No namespace: the default one, where the fixture wrote nothing.
    const dflt = await getJson<{ data: { object: string }[]; namespace: string }>(`${s.url}/api/git/${REPO}/notes/missing?commits=${given.slice(0, 5).join(',')}`);
    expect(dflt.body).toMatchObject({ namespace: 'commits', data: given.slice(0, 5).map((object) => ({ object })) });
  });

  it('the API refuses a missing or oversized commit list (400)', async () => {
    expect((await getJson(`${s.url}/api/git/${REPO}/notes/missing?namespace=ci`)).status).toBe(400);
    const many = fx.commits.slice(0, MAX_COMMITS + 1).map((c) => c.sha).join(',');
    const r = await getJson<{ error: string }>(`${s.url}/api/git/${REPO}/notes/missing?namespace=ci&commits=${many}`);
    expect(r.status).toBe(400);
    expect(typeof r.body.error).toBe('string');
  });

  it('`mkt notes missing A..B --namespace review` equals git rev-list minus git notes list, oldest first', async () => {
    const a = fx.commits[10]!.sha;
    const b = fx.commits[1510]!.sha;
    const range = (await fixtureGit(fx.dir, ['rev-list', '--reverse', `${a}..${b}`])).trim().split('\n');
    expect(range).toHaveLength(1500);
    const noted = await gitNotesList(fx.dir, 'review');
    const r = await mkt(['notes', 'missing', `${a}..${b}`, '--namespace', 'review']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n').filter((l) => l !== '')).toEqual(range.filter((sha) => !noted.has(sha)));
  });
});

describe('export', () => {
  it('`mkt notes export --format jsonl` parses back to every note of the namespace as git holds it', async () => {
    const r = await mkt(['notes', 'export', '--namespace', 'ci', '--format', 'jsonl']);
    expect(r.code, r.stderr).toBe(0);
    const records = ndjson(r.stdout) as unknown as (ApiHit & { content: string })[];
    expect(records.every((rec) => JSON.stringify(Object.keys(rec)) === JSON.stringify(EXPORT_KEYS))).toBe(true);
    expect(new Map(records.map((rec) => [rec.object, rec.content]))).toEqual(await gitNotesText(fx.dir, 'ci'));
    expect(records).toHaveLength(3333);
    expectHitsMatchFixture(records);
  });

  it('`mkt notes export --format csv` (commas, quotes and newlines in cells) parses back equal too', async () => {
    const r = await mkt(['notes', 'export', '--namespace', 'review', '--format', 'csv']);
    expect(r.code, r.stderr).toBe(0);
    const [header, ...rows] = parseCsv(r.stdout);
    expect(header).toEqual(EXPORT_KEYS);
    expect(rows).toHaveLength(3334);
    const col = (name: string) => EXPORT_KEYS.indexOf(name);
    expect(new Map(rows.map((row) => [row[col('object')]!, row[col('content')]!]))).toEqual(await gitNotesText(fx.dir, 'review'));
    const asHits = rows.map((row) => ({
      repo: row[col('repo')]!,
      namespace: row[col('namespace')]!,
      object: row[col('object')]!,
      object_type: row[col('object_type')]!,
      note_author: row[col('note_author')]!,
      note_email: row[col('note_email')]!,
      note_at: row[col('note_at')]!,
      commit_subject: row[col('commit_subject')]!,
      commit_author: row[col('commit_author')]!,
      fields: JSON.parse(row[col('fields')]!) as Record<string, string[]>,
    }));
    expectHitsMatchFixture(asHits);
  });
});
