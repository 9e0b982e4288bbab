// Search over the notes index through the API: ranking and snippets, phrases, or, exclusion,
// namespace and commits_only filters, the limit cap, odd input (200 or 400, never 500), and the
// index catching up with a notes ref changed behind the server's back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNotesServer, gitIn, gitUrl, localRepo, type NotesServer } from '../../helpers/notes-server.js';
import { repoDir } from '../../../src/git/hosting.js';
import { tempDir } from '../../helpers/tmp.js';

let s: NotesServer;
let work: { path: string; remove(): void };
let commits: string[];

async function search(qs: string): Promise<{ status: number; body: { data?: { target: string; namespace: string; object_type: string; snippet: string }[]; total?: number; error?: string } }> {
  const res = await fetch(`${s.url}/api/git/ana/app/notes/search?${qs}`);
  return { status: res.status, body: (await res.json()) as never };
}
const targets = (r: Awaited<ReturnType<typeof search>>) => (r.body.data ?? []).map((h) => commits.indexOf(h.target)).sort();

beforeAll(async () => {
  s = await startNotesServer();
  work = tempDir('mkt-notes-search-');
  await s.admin.createRepo('ana/app', { private: false, objectFormat: 'sha1' });
  const local = await localRepo(work.path, 'app', 6);
  commits = local.commits;
  await gitIn(local.dir, ['push', '-q', gitUrl(s, 'ana/app', s.tokens.anaPush), 'main']);
  const texts = ['deploy to production ok', 'deploy to staging failed', 'release train departed on time', 'train of thought', 'flaky test in parser', 'broken build in CI'];
  for (const [i, c] of commits.entries()) {
    const res = await fetch(`${s.url}/api/git/ana/app/notes/${c}`, { method: 'PUT', headers: { authorization: `Bearer ${s.tokens.anaPush}`, 'content-type': 'application/json' }, body: JSON.stringify({ content: texts[i] }) });
    expect(res.status).toBe(200);
  }
  await fetch(`${s.url}/api/git/ana/app/notes/${commits[0]}?namespace=reviews`, { method: 'PUT', headers: { authorization: `Bearer ${s.tokens.anaPush}`, 'content-type': 'application/json' }, body: JSON.stringify({ content: 'deploy reviewed' }) });
});

afterAll(async () => {
  await s?.close();
  work?.remove();
});

describe('search_notes', () => {
  it('matches words, phrases, or and exclusions', async () => {
    expect(targets(await search('q=deploy'))).toEqual([0, 0, 1]);
    expect(targets(await search('q=deploy+-staging'))).toEqual([0, 0]);
    expect(targets(await search(`q=${encodeURIComponent('"release train"')}`))).toEqual([2]);
    expect(targets(await search('q=train'))).toEqual([2, 3]);
    expect(targets(await search('q=flaky+or+broken'))).toEqual([4, 5]);
    expect(targets(await search('q=DEPLOY+production'))).toEqual([0]);
    const hit = await search('q=parser');
    expect(hit.body.data![0]!.snippet).toBe('flaky test in [parser]');
  });

  it('filters by namespace and object type and caps the limit', async () => {
    const r = await search('q=deploy&namespace=reviews');
    expect(r.body.data!.map((h) => h.namespace)).toEqual(['reviews']);
    expect((await search('q=deploy&commits_only=true')).body.total).toBe(3);
    expect((await search('q=deploy&limit=1')).body.total).toBe(1);
    expect((await search('q=deploy&limit=100000')).status).toBe(200);
    expect((await search('q=deploy&limit=0')).status).toBe(400);
    expect((await search('q=deploy&namespace=never')).body.total).toBe(0);
    expect((await search('q=deploy&namespace=bad..name')).status).toBe(400);
  });

  it('returns 50 hits by default and at most 200 (notes written by git behind the server)', async () => {
    await s.admin.createRepo('ana/many', { private: false, objectFormat: 'sha1' });
    const dir = repoDir(s.dataDir, 'ana', 'many');
    let stream = '';
    for (let i = 1; i <= 210; i++) stream += `commit refs/heads/main\nmark :${i}\ncommitter T <t@e> ${1700000000 + i} +0000\ndata 2\nc\n${i > 1 ? `from :${i - 1}\n` : ''}\n`;
    stream += 'commit refs/notes/commits\ncommitter T <t@e> 1700001000 +0000\ndata 1\nn\n';
    for (let i = 1; i <= 210; i++) stream += `N inline :${i}\ndata 13\nwombat number\n`;
    await gitIn(dir, ['fast-import', '--quiet'], stream);
    const many = async (qs: string) => (await (await fetch(`${s.url}/api/git/ana/many/notes/search?${qs}`)).json()) as { total: number; indexed: boolean };
    expect(await many('q=wombat')).toMatchObject({ total: 50, indexed: true });
    expect((await many('q=wombat&limit=500')).total).toBe(200);
    expect((await many('q=wombat&limit=7')).total).toBe(7);
  });

  it('answers odd input with 200 or a clear 400, never 500', async () => {
    const odd = ['"', '""', '-', '*', 'NEAR(a,b)', 'a:b', '(', ')', 'AND', '^x', "'; DROP TABLE notes; --", '\u0000', '🙂', 'x'.repeat(1001), '"a" OR', 'or or or', '-a -b'];
    for (const q of odd) {
      const r = await search(`q=${encodeURIComponent(q)}`);
      expect([200, 400], q).toContain(r.status);
      if (r.status === 400) expect(typeof r.body.error).toBe('string');
    }
    // Issue 36: without q a search lists every note the filters keep (how export pages through them).
    expect((await search('')).body.total).toBe(7);
  });

  it('catches up with a notes ref changed behind the server (no push through it)', async () => {
    const dir = repoDir(s.dataDir, 'ana', 'app');
    await gitIn(dir, ['notes', 'add', '-f', '-m', 'quokka sighting', commits[3]!]);
    const r = await search('q=quokka');
    expect(targets(r)).toEqual([3]);
    expect((await search('q=thought')).body.total).toBe(0);
    const rebuilt = await s.admin.reindex('ana/app');
    expect(rebuilt).toEqual([{ repo: 'ana/app', namespaces: 2, notes: 7 }]);
    expect(targets(await search('q=quokka'))).toEqual([3]);
  });
});
