// Grouped note writes (NoteWriter), on a real bare repository and a real index, both engines:
// writes to one ref issued while another is being written go as one group and one ref update,
// yet leave one commit per note with its own author and message, in arrival order; each write is
// judged on what the writes before it in its group left (the same target twice, a removal of a
// note added in the group, a removal of nothing); and the index ends equal to the notes tree, so
// search finds every written note and no removed one.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { NotesIndexer } from '../../../src/notes/indexer.js';
import { NoteWriter, type WriteOutcome } from '../../../src/notes/writer.js';
import { SqlNotesIndex } from '../../../src/store/notes-sql.js';
import { parseQuery } from '../../../src/notes/query.js';
import { describeEngines } from '../../helpers/engines.js';
import { tempDir } from '../../helpers/tmp.js';
import { GIT_ENV } from '../../helpers/notes-server.js';

const REF = 'refs/notes/commits';
let dir: { path: string; remove(): void };
let gitDir: string;
let commits: string[];
const git = (args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', env: { ...process.env, ...GIT_ENV } }).trim();

beforeEach(() => {
  dir = tempDir('mkt-notes-groups-');
  gitDir = join(dir.path, 'repo.git');
  execFileSync('git', ['init', '-q', '--bare', gitDir]);
  git(['config', 'core.logAllRefUpdates', 'always']);
  const tree = git(['mktree']);
  commits = [];
  for (let i = 0; i < 24; i++) commits.push(git(['commit-tree', tree, ...(i ? ['-p', commits[i - 1]!] : []), '-m', `c${i}`]));
  git(['update-ref', 'refs/heads/main', commits[23]!]);
});
afterEach(() => dir?.remove());

const people = [
  { name: 'Ana', email: 'ana@example.com' },
  { name: 'Bo', email: 'bo@example.com' },
  { name: 'Cy', email: 'cy@example.com' },
];

/** The notes commits on REF, oldest first: author, subject and the targets each one changed. */
function history(): { author: string; subject: string; touched: string[] }[] {
  const out = git(['log', '--reverse', '--first-parent', '--format=%x01%an <%ae>%x00%s', '--name-only', REF]);
  return out
    .split('\x01')
    .filter(Boolean)
    .map((rec) => {
      const [head, files = ''] = rec.split('\n\n');
      const [author, subject] = head!.split('\0') as [string, string];
      return { author, subject, touched: files.split('\n').filter(Boolean).map((p) => p.replaceAll('/', '')) };
    });
}

describeEngines('NoteWriter groups', (open) => {
  it('20 writes issued at once: two ref updates (the first alone, 19 queued behind it), 20 commits, one per note, each with its own author', async () => {
    const index = await SqlNotesIndex.open(await open());
    const indexer = new NotesIndexer(index);
    let clock = 1_700_000_000;
    const writer = new NoteWriter(indexer, () => clock++);
    const repo = { id: 'r', dir: gitDir, objectFormat: 'sha1' as const };
    try {
      const outcomes = await Promise.all(
        commits.slice(0, 20).map((target, i) => writer.write(repo, { namespace: 'commits', target, content: `note ${i} word${i}x`, author: people[i % 3]!, message: `why ${i}` })),
      );
      const log = history();
      expect(log).toHaveLength(20);
      log.forEach((c, i) => {
        const who = people[i % 3]!;
        expect(c.author).toBe(`${who.name} <${who.email}>`);
        expect(c.subject).toBe(`Notes: add note on ${commits[i]}`);
        expect(c.touched).toEqual([commits[i]]);
      });
      // Each answer names its own commit, and every note is there for git.
      const chain = git(['rev-list', '--reverse', '--first-parent', REF]).split('\n');
      outcomes.forEach((o, i) => expect(o).toEqual({ action: 'added', commit: chain[i], blob: git(['rev-parse', `${REF}:${commits[i]}`]) }));
      for (let i = 0; i < 20; i++) expect(git(['notes', 'show', commits[i]!])).toBe(`note ${i} word${i}x`);
      // One update of the ref for the first write, one for the group that queued behind it.
      expect(git(['reflog', 'show', '--format=%H', REF]).split('\n')).toEqual([chain[19], chain[0]]);
      expect(git(['fsck', '--strict', '--no-dangling'])).toBe('');
      // The index holds every note at the ref's tip.
      expect((await index.tips('r')).get('commits')).toBe(chain[19]);
      for (let i = 0; i < 20; i++) expect((await index.get('r', 'commits', commits[i]!))?.content).toBe(`note ${i} word${i}x`);
    } finally {
      await writer.close();
      await indexer.close();
    }
  });

  it('judges each write on what the writes before it in the group left; the index and search end equal to the tree', async () => {
    const index = await SqlNotesIndex.open(await open());
    const indexer = new NotesIndexer(index);
    const writer = new NoteWriter(indexer, () => 1_700_000_000);
    const repo = { id: 'r', dir: gitDir, objectFormat: 'sha1' as const };
    const [a, b, c, d] = commits as [string, string, string, string];
    const ana = people[0]!;
    try {
      await writer.write(repo, { namespace: 'commits', target: b, content: 'b was here quokka', author: ana });
      const w = (target: string, content: string | null) => writer.write(repo, { namespace: 'commits', target, content, author: ana });
      // The first write goes alone; the rest queue behind it and go as one group.
      const outcomes = await Promise.all([w(d, 'lead write'), w(a, 'first of a wombat'), w(a, 'second of a numbat'), w(b, null), w(c, 'c briefly dingo'), w(c, null), w(c, null), w(a, 'second of a numbat')]);
      expect(outcomes.map((o: WriteOutcome) => o.action)).toEqual(['added', 'added', 'updated', 'removed', 'added', 'removed', 'absent', 'unchanged']);
      const log = history();
      expect(log.map((l) => l.subject)).toEqual([
        `Notes: add note on ${b}`,
        `Notes: add note on ${d}`,
        `Notes: add note on ${a}`,
        `Notes: update note on ${a}`,
        `Notes: remove note from ${b}`,
        `Notes: add note on ${c}`,
        `Notes: remove note from ${c}`,
      ]);
      // A write that changes nothing answers the commit the writes before it left.
      const tip = git(['rev-parse', REF]);
      expect(outcomes[6]!.commit).toBe(tip);
      expect(outcomes[7]!.commit).toBe(tip);
      expect(git(['notes', 'list']).split('\n').map((l) => l.split(' ')[1]).sort()).toEqual([a, d].sort());
      expect((await index.tips('r')).get('commits')).toBe(tip);
      expect((await index.get('r', 'commits', a))?.content).toBe('second of a numbat');
      expect(await index.get('r', 'commits', b)).toBeUndefined();
      expect(await index.get('r', 'commits', c)).toBeUndefined();
      const found = async (q: string) => (await index.search('r', parseQuery(q), { limit: 10 })).map((h) => h.target);
      expect(await found('numbat')).toEqual([a]);
      expect(await found('wombat')).toEqual([]);
      expect(await found('quokka')).toEqual([]);
      expect(await found('dingo')).toEqual([]);
      expect(await found('lead')).toEqual([d]);
    } finally {
      await writer.close();
      await indexer.close();
    }
  });
});
