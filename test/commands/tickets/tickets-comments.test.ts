// `mkt tickets comment|show|delete|log` (issue 34) against a real node: comments printed after the
// ticket, the delete's confirmation (a terminal asks, a script passes --yes, else exit 2), and the
// history newest first, paged with --limit and followed with --all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { startNode, TOKEN, type TicketNode } from '../../helpers/tickets-node.js';
import { freePort } from '../../helpers/wait.js';

const data = tempDir();
const config = tempDir();
let node: TicketNode;
let nodeId = '';
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  node = await startNode(data.path);
  nodeId = (await node.req('GET', '/sync/node')).body.node_id;
  env = { XDG_CONFIG_HOME: config.path, MKT_CREDENTIAL_STORE: 'file', MKT_TICKETS_URL: node.url, MKT_TICKETS_TOKEN: TOKEN, NO_COLOR: '1' };
});
afterAll(async () => {
  await node.stop();
  data.remove();
  config.remove();
});

/** `tty`: stdout is a terminal; `stdinTty`: stdin is one (someone to answer a question); `errTty`: stderr is. */
async function mkt(args: string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv; tty?: boolean; stdinTty?: boolean; errTty?: boolean } = {}): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env: { ...env, ...opts.env }, stdin: opts.stdin, tty: opts.tty });
  io.stderr.isTTY = opts.errTty ?? false;
  (io.stdin as { isTTY?: boolean }).isTTY = opts.stdinTty ?? false;
  const code = await run(['tickets', ...args], io);
  return { code, out: io.out(), err: io.err() };
}

async function newTicket(title: string): Promise<{ id: string; short_id: string }> {
  const r = await node.req('POST', '/tickets', { title });
  expect(r.status).toBe(201);
  return r.body;
}

describe('mkt tickets comment and show', () => {
  let t: { id: string; short_id: string };
  beforeAll(async () => {
    t = await newTicket('VPN drops every hour');
  });

  it('comment prints the comment; --json is the API object (author: the node id unless --author)', async () => {
    const human = await mkt(['comment', t.short_id, 'Called back, it works again'], { tty: true });
    expect(human.code, human.err).toBe(0);
    expect(human.out).toMatch(/^body:\s+Called back, it works again$/m);
    expect(human.out).toMatch(new RegExp(`^author:\\s+${nodeId}$`, 'm'));
    const json = await mkt(['comment', t.id, 'second', '--author', 'bo', '--json']);
    expect(json.code, json.err).toBe(0);
    const c = JSON.parse(json.out);
    expect(c).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), body: 'second', author: 'bo', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
  });

  it('`-` reads the body from stdin, its lines kept and the one trailing newline dropped', async () => {
    const r = await mkt(['comment', t.short_id, '-', '--json'], { stdin: 'line 1\nline 2\n' });
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out).body).toBe('line 1\nline 2');
  });

  it('show prints the comments after the ticket, oldest first; in a pipe one `comment` line each; --json passes them through', async () => {
    const tty = await mkt(['show', t.short_id], { tty: true });
    expect(tty.code, tty.err).toBe(0);
    expect(tty.out).toMatch(/^comments:\s+3$/m);
    const bodies = ['Called back, it works again', 'second', 'line 1'].map((b) => tty.out.indexOf(`    ${b}\n`));
    expect(bodies.every((i) => i > tty.out.indexOf('description:'))).toBe(true);
    expect([...bodies].sort((a, b) => a - b)).toEqual(bodies);
    expect(tty.out).toMatch(/^bo, \d{4}-\S+Z \([0-9a-f]{8}\):$/m);
    expect(tty.out).toContain('    line 1\n    line 2\n');

    const pipe = await mkt(['show', t.short_id]);
    const lines = pipe.out.trim().split('\n').filter((l) => l.startsWith('comment\t'));
    expect(lines.map((l) => l.split('\t')[4])).toEqual(['Called back, it works again', 'second', 'line 1 line 2']);
    expect(lines.every((l) => l.split('\t').length === 5)).toBe(true);

    const json = JSON.parse((await mkt(['show', t.short_id, '--json'])).out);
    expect(json.comment_count).toBe(3);
    expect(json.comments.map((c: { body: string; author: string }) => [c.body, c.author])).toEqual([
      ['Called back, it works again', nodeId],
      ['second', 'bo'],
      ['line 1\nline 2', nodeId],
    ]);
  });

  it('an empty comment is a usage error before any request; an unknown ticket exits 1; a body over the limit exits 2 in one line', async () => {
    const down = { MKT_TICKETS_URL: `http://127.0.0.1:${await freePort()}` };
    for (const [args, stdin] of [[['comment', t.id, '  ']], [['comment', t.id, '-'], '\n']] as [string[], string?][]) {
      const r = await mkt(args, { stdin, env: down });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err.trim().split('\n')).toHaveLength(1);
    }
    const missing = await mkt(['comment', '00000000-0000-4000-8000-000000000000', 'hello']);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/not found/);
    const big = await mkt(['comment', t.id, '-'], { stdin: 'x'.repeat(16_385) });
    expect(big.code).toBe(2);
    expect(big.err).toMatch(/HTTP 413/);
    expect(big.err.trim().split('\n')).toHaveLength(1);
    expect((await mkt(['comment', t.id, '-'], { stdin: 'é'.repeat(8192) })).code).toBe(0); // 16,384 bytes: at the limit
  });
});

describe('mkt tickets delete', () => {
  it('without a terminal and without --yes: exit 2 in one line, and the ticket stays', async () => {
    const t = await newTicket('keep me');
    const r = await mkt(['delete', t.short_id]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`mkt: not deleting ticket ${t.short_id} without confirmation: stdin is not a terminal; pass --yes\n`);
    expect((await node.req('GET', `/tickets/${t.id}`)).status).toBe(200);
  });

  it('--yes deletes; the ticket is then not found (exit 1) by show, comment, log and a second delete', async () => {
    const t = await newTicket('delete me');
    const r = await mkt(['delete', t.short_id, '--yes'], { errTty: true });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('');
    expect(r.err).toBe(`deleted ticket ${t.short_id}\n`);
    expect((await node.req('GET', `/tickets/${t.id}`)).status).toBe(404);
    for (const args of [['show', t.id], ['comment', t.id, 'hi'], ['delete', t.id, '--yes']]) {
      const again = await mkt(args);
      expect(again.code, args.join(' ')).toBe(1);
      expect(again.err).toMatch(/not found/);
    }
  });

  it('on a terminal it asks with the short id and title: y deletes, anything else keeps it (exit 1)', async () => {
    const t = await newTicket('Printer on fire');
    const no = await mkt(['delete', t.short_id], { stdinTty: true, errTty: true, stdin: 'n\n' });
    expect(no.code).toBe(1);
    expect(no.err).toBe(`Delete ticket ${t.short_id} "Printer on fire"? [y/N] mkt: ticket ${t.short_id} not deleted\n`);
    expect((await node.req('GET', `/tickets/${t.id}`)).status).toBe(200);
    const empty = await mkt(['delete', t.short_id], { stdinTty: true, stdin: '\n' });
    expect(empty.code).toBe(1);
    const yes = await mkt(['delete', t.short_id], { stdinTty: true, errTty: true, stdin: 'y\n' });
    expect(yes.code, yes.err).toBe(0);
    expect(yes.err).toBe(`Delete ticket ${t.short_id} "Printer on fire"? [y/N] deleted ticket ${t.short_id}\n`);
    expect((await node.req('GET', `/tickets/${t.id}`)).status).toBe(404);
  });

  it('on a terminal, an unknown ticket exits 1 before asking', async () => {
    const r = await mkt(['delete', '00000000-0000-4000-8000-000000000000'], { stdinTty: true, stdin: 'y\n' });
    expect(r.code).toBe(1);
    expect(r.err).not.toMatch(/\[y\/N\]/);
    expect(r.err).toMatch(/not found/);
  });
});

describe('mkt tickets log', () => {
  let t: { id: string; short_id: string };
  let commentId = '';
  beforeAll(async () => {
    t = await newTicket('Laptop screen flickers');
    expect((await node.req('PATCH', `/tickets/${t.id}`, { status: 'pending' })).status).toBe(200);
    expect((await node.req('PATCH', `/tickets/${t.id}`, { add_tags: ['hardware'] })).status).toBe(200);
    expect((await node.req('PATCH', `/tickets/${t.id}`, { assignee: 'bo' })).status).toBe(200);
    commentId = (await node.req('POST', `/tickets/${t.id}/comments`, { body: 'ordered a new cable' })).body.id;
  });

  it('one line a change, newest first: `at by field: from → to` on a terminal', async () => {
    const r = await mkt(['log', t.short_id], { tty: true });
    expect(r.code, r.err).toBe(0);
    const what = r.out.trim().split('\n').map((l) => l.split(' ').slice(2).join(' '));
    expect(what).toEqual([`comment: ${commentId}`, 'assignee: (none) → bo', 'tags: + hardware', 'status: open → pending', 'created: Laptop screen flickers']);
    expect(r.out).toMatch(new RegExp(`^\\d{4}-\\S+Z ${nodeId.slice(0, 8)} `, 'm'));
  });

  it('in a pipe: TSV, at, by, field, from, to, lost; --json: the entries as a JSON array', async () => {
    const tsv = await mkt(['log', t.id]);
    // Not trimmed: the last column is empty on a change that did not lose a merge.
    const rows = tsv.out.replace(/\n$/, '').split('\n').map((l) => l.split('\t'));
    expect(rows.map((r) => r.slice(1))).toContainEqual([nodeId, 'status', 'open', 'pending', '']);
    expect(rows.every((r) => r.length === 6)).toBe(true);
    const json = JSON.parse((await mkt(['log', t.id, '--json'])).out);
    expect(Array.isArray(json)).toBe(true);
    expect(json[0]).toEqual({ field: 'comment', from: null, to: commentId, at: expect.any(String), by: nodeId });
    expect(json.map((e: { field: string }) => e.field)).toEqual(['comment', 'assignee', 'tags', 'status', 'created']);
  });

  it('--limit pages (a hint on a terminal); --all follows next_cursor; --all --json is one array of every page', async () => {
    const page = await mkt(['log', t.id, '--limit', '2'], { tty: true, errTty: true });
    expect(page.out.trim().split('\n')).toHaveLength(2);
    expect(page.err).toBe('the newest 2 changes; --all for every one\n');
    const all = await mkt(['log', t.id, '--limit', '2', '--all']);
    expect(all.out.trim().split('\n').map((l) => l.split('\t')[2])).toEqual(['comment', 'assignee', 'tags', 'status', 'created']);
    const allJson = JSON.parse((await mkt(['log', t.id, '--limit', '2', '--all', '--json'])).out);
    expect(allJson.map((e: { field: string }) => e.field)).toEqual(['comment', 'assignee', 'tags', 'status', 'created']);
    expect(JSON.parse((await mkt(['log', t.id, '--limit', '2', '--json'])).out)).toHaveLength(2);
  });

  it("a deleted ticket's history (by full id) starts with the delete; its field changes stay, the creation and comments went with it (docs/tickets.md, History)", async () => {
    const gone = await newTicket('short-lived');
    expect((await node.req('PATCH', `/tickets/${gone.id}`, { status: 'solved' })).status).toBe(200);
    expect((await node.req('POST', `/tickets/${gone.id}/comments`, { body: 'done' })).status).toBe(201);
    expect((await mkt(['delete', gone.id, '--yes'])).code).toBe(0);
    const r = await mkt(['log', gone.id, '--json']);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out).map((e: { field: string }) => e.field)).toEqual(['deleted', 'status']);
    expect((await mkt(['log', gone.id], { tty: true })).out.split('\n')[0]).toMatch(/ deleted$/);
  });

  it('an unknown ticket exits 1; a bad --limit exits 2 before any request', async () => {
    expect((await mkt(['log', '00000000-0000-4000-8000-000000000000'])).code).toBe(1);
    for (const bad of ['0', '501', 'x', '']) {
      const r = await mkt(['log', t.id, '--limit', bad], { env: { MKT_TICKETS_URL: `http://127.0.0.1:${await freePort()}` } });
      expect(r.code, bad).toBe(2);
      expect(r.err).toBe(`mkt: --limit must be a whole number from 1 to 500, not ${JSON.stringify(bad)}\n`);
    }
  });
});
