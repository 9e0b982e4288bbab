// `mkt notes search|missing|export` at the run level (issue 36): what the CLI asks for and how
// it writes it, against a scripted HTTP answerer on 127.0.0.1 that records every request (the
// real marketplace is test/e2e/notes/scripts-*.test.ts's): --range cut into URL-sized requests
// from a real clone, cursors followed, the owner-wide route, counts summed, streamed JSON,
// a reader closing stdout mid-walk (status 0, no further request), and the exit codes.
import { execFileSync } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { listenLocal } from '../../helpers/local-http.js';
import { tempDir } from '../../helpers/tmp.js';
import { GIT_ENV } from '../../helpers/notes-server.js';

const home = tempDir('mkt-notes-search-run-');
const clone = join(home.path, 'clone');
const closers: (() => Promise<void> | void)[] = [];
let url = '';
let commits: string[] = [];

interface Seen {
  path: string;
  params: URLSearchParams;
  urlBytes: number;
}
const seen: Seen[] = [];
/** Answers a request; the test sets it. */
let answer: (s: Seen) => { status?: number; body: unknown } = () => ({ body: {} });

const hit = (object: string, snippet = 'x', repo = 'ana/widgets') => ({
  repo, namespace: 'ci', git_ref: 'refs/notes/ci', target: object, object, object_type: 'commit', note_author: 'Ana', note_email: 'ana@example.com', note_at: '2026-11-29T13:00:00.000Z',
  commit_subject: 'c', commit_author: 'T <t@example.com>', snippet, score: 0, lines: [], fields: { k: ['v'] },
});

async function mkt(args: string[], opts: { stdout?: PassThrough } = {}): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env: { MKT_MARKETPLACE_URL: url, XDG_CONFIG_HOME: join(home.path, 'config'), MKT_CREDENTIAL_STORE: 'file' }, cwd: clone });
  if (opts.stdout) io.stdout = opts.stdout;
  seen.length = 0;
  const code = await run(['notes', ...args], io);
  return { code, out: io.out(), err: io.err() };
}

beforeAll(async () => {
  // 450 commits in one fast-import: three requests of SHA-1 ids under the URL budget.
  execFileSync('git', ['init', '-q', '-b', 'main', clone]);
  let stream = '';
  for (let i = 0; i < 450; i++) stream += `commit refs/heads/main\ncommitter T <t@example.com> ${1_700_000_000 + i} +0000\ndata 3\nc${i % 10}\n\n`;
  execFileSync('git', ['fast-import', '--quiet'], { cwd: clone, input: stream, env: { ...process.env, ...GIT_ENV } });
  commits = execFileSync('git', ['rev-list', '--reverse', 'main'], { cwd: clone, encoding: 'utf8' }).trim().split('\n');
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const u = new URL(req.url!, 'http://x');
    const s = { path: u.pathname, params: u.searchParams, urlBytes: req.url!.length };
    seen.push(s);
    const a = answer(s);
    res.writeHead(a.status ?? 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(a.body));
  });
  url = await listenLocal(server, (c) => closers.push(c));
});
afterAll(async () => {
  for (const c of closers) await c();
  home.remove();
});

describe('mkt notes search: requests', () => {
  it('the filters reach the query string under their API names, field= repeated', async () => {
    answer = () => ({ body: { data: [hit(commits[0]!)], next_cursor: null, indexed: true, total: 1 } });
    const r = await mkt(['search', '--regex', '(?i)^acked-by:', '--field', 'Reviewed-by~alice', '--field', 'Code-Review=+2', '--author', 'Ana', '--since', '2026-11-01', '--until', '2026-12-01', '--namespace', 'review', '--commits-only', '--repo', 'ana/widgets', '--format', 'tsv']);
    expect(r.code, r.err).toBe(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.path).toBe('/api/git/ana/widgets/notes/search');
    const p = seen[0]!.params;
    expect(p.get('q')).toBe('(?i)^acked-by:');
    expect(p.get('mode')).toBe('regex');
    expect(p.getAll('field')).toEqual(['Reviewed-by~alice', 'Code-Review=+2']);
    expect([p.get('author'), p.get('since'), p.get('until'), p.get('namespace'), p.get('commits_only')]).toEqual(['Ana', '2026-11-01', '2026-12-01', 'review', 'true']);
    expect(p.get('limit')).toBe('50');
    expect(r.out).toBe(`ana/widgets\tci\t${commits[0]}\tAna\t2026-11-29T13:00:00.000Z\tx\n`);
  });

  it('--range: the commits of the clone, oldest first, in requests under 12 KiB of URL; --all follows each chunk to its end', async () => {
    answer = (s) => {
      const ids = s.params.get('commits')!.split(',');
      // Two pages a chunk: the first id's hit, then (cursor) the last id's.
      return s.params.get('cursor') === null
        ? { body: { data: [hit(ids[0]!)], next_cursor: 'more', indexed: true, total: 1 } }
        : { body: { data: [hit(ids.at(-1)!)], next_cursor: null, indexed: true, total: 1 } };
    };
    const r = await mkt(['search', '--range', `${commits[0]}..main`, '--repo', 'ana/widgets', '--all', '--format', 'ndjson']);
    expect(r.code, r.err).toBe(0);
    const asked = seen.filter((s) => s.params.get('cursor') === null).flatMap((s) => s.params.get('commits')!.split(','));
    expect(asked).toEqual(commits.slice(1));
    expect(seen.every((s) => s.urlBytes < 12 * 1024)).toBe(true);
    expect(seen.map((s) => s.params.get('limit'))).toEqual(seen.map(() => '200'));
    expect(seen.length).toBe(6);
    const objects = r.out.trim().split('\n').map((l) => (JSON.parse(l) as { object: string }).object);
    expect(objects).toHaveLength(6);
    expect(objects[0]).toBe(commits[1]);
    expect(objects.at(-1)).toBe(commits.at(-1));
  });

  it('an empty range makes no request and prints nothing (--json: an empty answer); an unknown revision is a usage error', async () => {
    answer = () => ({ status: 500, body: { error: 'must not be asked' } });
    const empty = await mkt(['search', '--range', 'main..main', '--repo', 'ana/widgets']);
    expect([empty.code, empty.out, seen.length]).toEqual([0, '', 0]);
    const json = await mkt(['search', '--range', 'main..main', '--repo', 'ana/widgets', '--json']);
    expect(JSON.parse(json.out)).toEqual({ data: [], next_cursor: null, indexed: true, total: 0 });
    const bad = await mkt(['search', '--range', 'nope..main', '--repo', 'ana/widgets']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/cannot resolve the range "nope\.\.main" in this clone/);
  });

  it('--owner: the owner-wide route, no clone remote needed, a repo column in pipes', async () => {
    answer = () => ({ body: { data: [hit(commits[0]!, 'a', 'ana/one'), hit(commits[1]!, 'b', 'ana/two')], next_cursor: null, indexed: true, total: 2 } });
    const r = await mkt(['search', 'deploy', '--owner', 'ana']);
    expect(r.code, r.err).toBe(0);
    expect(seen[0]!.path).toBe('/api/git/ana/notes/search');
    expect(r.out).toBe(`ana/one\tci\t${commits[0]}\ta\nana/two\tci\t${commits[1]}\tb\n`);
  });

  it('--json without --all: the one answer as it came (next_cursor kept); --cursor continues it', async () => {
    answer = (s) => ({ body: { data: [hit(commits[0]!)], next_cursor: s.params.get('cursor') === 'c1' ? null : 'c1', indexed: true, total: 1 } });
    const first = await mkt(['search', 'x', '--repo', 'ana/widgets', '--json']);
    expect(JSON.parse(first.out)).toMatchObject({ next_cursor: 'c1', total: 1 });
    const next = await mkt(['search', 'x', '--repo', 'ana/widgets', '--json', '--cursor', 'c1']);
    expect(seen[0]!.params.get('cursor')).toBe('c1');
    expect(JSON.parse(next.out)).toMatchObject({ next_cursor: null });
  });

  it('--json --all: one object of the API shape with every hit, written as pages come; --format json: an array', async () => {
    answer = (s) => {
      const n = Number(s.params.get('cursor') ?? 0);
      return { body: { data: [hit(commits[n]!)], next_cursor: n < 2 ? String(n + 1) : null, indexed: n !== 1, total: 1 } };
    };
    const all = await mkt(['search', 'x', '--repo', 'ana/widgets', '--json', '--all']);
    expect(all.code, all.err).toBe(0);
    const body = JSON.parse(all.out) as { data: { object: string }[] };
    expect(body).toMatchObject({ next_cursor: null, indexed: false, total: 3 });
    expect(body.data.map((h) => h.object)).toEqual(commits.slice(0, 3));
    expect(all.err).toMatch(/^warning: the search index has not seen this repository yet/);
    const arr = await mkt(['search', 'x', '--repo', 'ana/widgets', '--format', 'json', '--all']);
    expect((JSON.parse(arr.out) as { object: string }[]).map((h) => h.object)).toEqual(commits.slice(0, 3));
    answer = () => ({ body: { data: [], next_cursor: null, indexed: true, total: 0 } });
    expect(JSON.parse((await mkt(['search', 'x', '--repo', 'ana/widgets', '--format', 'json'])).out)).toEqual([]);
  });

  it('--count-by: key<TAB>count lines; over a range the chunks are summed; --json the groups object', async () => {
    answer = (s) => {
      expect(s.params.get('count_by')).toBe('field:Code-Review');
      expect(s.params.get('limit')).toBeNull();
      return { body: { groups: [{ key: '+2', count: 2 }, { key: '-1', count: 1 }], indexed: true, truncated: false } };
    };
    const one = await mkt(['search', '--count-by', 'field:Code-Review', '--namespace', 'review', '--repo', 'ana/widgets']);
    expect(one.out).toBe('+2\t2\n-1\t1\n');
    const range = await mkt(['search', '--count-by', 'field:Code-Review', '--range', `${commits[0]}..main`, '--repo', 'ana/widgets', '--json']);
    expect(seen).toHaveLength(3);
    expect(JSON.parse(range.out)).toEqual({ groups: [{ key: '+2', count: 6 }, { key: '-1', count: 3 }], indexed: true, truncated: false });
  });

  it('a reader closing stdout (| head -1) ends the walk: status 0, nothing more asked', async () => {
    let pages = 0;
    const out = new PassThrough();
    answer = () => {
      pages++;
      // The reader goes away after the first page was written.
      if (pages === 2) out.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      return { body: { data: [hit(commits[pages]!)], next_cursor: String(pages), indexed: true, total: 1 } };
    };
    const r = await mkt(['search', 'x', '--repo', 'ana/widgets', '--all', '--format', 'ndjson'], { stdout: out });
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(pages).toBe(2);
  });

  it('exit codes: 400 is 2 naming the flag, 404 is 1, 401 is 4 with the login hint, 500 is 3', async () => {
    answer = () => ({ status: 400, body: { error: 'the regular expression ran over its budget of 50000000 steps; narrow the search with a literal or a filter' } });
    const budget = await mkt(['search', '--regex', '(a|aa)*b', '--repo', 'ana/widgets', '--all']);
    expect(budget.code).toBe(2);
    expect(budget.err).toBe('mkt: the regular expression ran over its budget of 50000000 steps; narrow the search with a literal or a filter\n');
    answer = () => ({ status: 400, body: { error: 'querystring.count_by must match pattern' } });
    expect((await mkt(['search', '--count-by', 'namespace', '--repo', 'ana/widgets'])).err).toBe('mkt: --count-by must match pattern\n');
    answer = () => ({ status: 404, body: { error: 'repository not found' } });
    const none = await mkt(['search', 'x', '--owner', 'nobody']);
    expect([none.code, none.err]).toEqual([1, 'mkt: repository not found\n']);
    answer = () => ({ status: 401, body: { error: 'invalid token' } });
    const auth = await mkt(['search', 'x', '--repo', 'ana/widgets']);
    expect(auth.code).toBe(4);
    expect(auth.err).toMatch(/hint: run `mkt auth login marketplace/);
    answer = () => ({ status: 500, body: { error: 'internal' } });
    expect((await mkt(['search', 'x', '--repo', 'ana/widgets', '--format', 'ndjson'])).code).toBe(3);
  });

  it('usage errors before any request: blank words, an empty --literal or --regex, a bad --limit, too many --field', async () => {
    answer = () => ({ status: 500, body: { error: 'must not be asked' } });
    for (const args of [[' '], ['--literal', ''], ['--regex', ''], ['x', '--limit', '0'], Array.from({ length: 21 }, (_, i) => ['--field', `k${i}~v`]).flat()]) {
      const r = await mkt(['search', ...args, '--repo', 'ana/widgets']);
      expect(r.code, args.join(' ')).toBe(2);
    }
    expect(seen).toHaveLength(0);
  });
});

describe('mkt notes missing and export: requests and output', () => {
  it('missing: the range oldest first in chunks, one id a line in the order answered; --json the API shape', async () => {
    answer = (s) => {
      expect(s.path).toBe('/api/git/ana/widgets/notes/missing');
      const ids = s.params.get('commits')!.split(',');
      return { body: { data: ids.filter((_, i) => i % 2 === 0).map((object) => ({ object })), namespace: s.params.get('namespace') ?? 'commits', indexed: true } };
    };
    const r = await mkt(['missing', 'main~10..main', '--namespace', 'ci', '--repo', 'ana/widgets']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(commits.slice(-10).filter((_, i) => i % 2 === 0).map((c) => c + '\n').join(''));
    const big = await mkt(['missing', `${commits[0]}..main`, '--repo', 'ana/widgets', '--json']);
    expect(seen).toHaveLength(3);
    expect(seen.every((s) => s.urlBytes < 12 * 1024)).toBe(true);
    const body = JSON.parse(big.out) as { data: { object: string }[]; namespace: string; indexed: boolean };
    expect(body.namespace).toBe('commits');
    expect(body.data[0]!.object).toBe(commits[1]);
    expect(body.data.length).toBeGreaterThan(200);
  });

  it('export: no q, content=true, pages to the end; CSV with a header and RFC 4180 quoting', async () => {
    answer = (s) => {
      expect(s.params.get('q')).toBeNull();
      expect(s.params.get('content')).toBe('true');
      const n = Number(s.params.get('cursor') ?? 0);
      return { body: { data: [{ ...hit(commits[n]!), content: `line "${n}", two\nnext\n` }], next_cursor: n < 2 ? String(n + 1) : null, indexed: true, total: 1 } };
    };
    const csv = await mkt(['export', '--namespace', 'ci', '--format', 'csv', '--repo', 'ana/widgets']);
    expect(csv.code, csv.err).toBe(0);
    expect(seen.map((s) => s.params.get('namespace'))).toEqual(['ci', 'ci', 'ci']);
    expect(csv.out.startsWith('repo,namespace,object,object_type,note_author,note_email,note_at,commit_subject,commit_author,fields,content\r\n')).toBe(true);
    expect(csv.out).toContain(`ana/widgets,ci,${commits[0]},commit,Ana,ana@example.com,2026-11-29T13:00:00.000Z,c,T <t@example.com>,"{""k"":[""v""]}","line ""0"", two\nnext\n"\r\n`);
    const jsonl = await mkt(['export', '--repo', 'ana/widgets']);
    const lines = jsonl.out.trim().split('\n').map((l) => JSON.parse(l) as { object: string; content: string });
    expect(lines.map((l) => l.object)).toEqual(commits.slice(0, 3));
    expect(lines[2]!.content).toBe('line "2", two\nnext\n');
  });
});
