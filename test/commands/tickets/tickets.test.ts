// `mkt tickets create|list|show|update|node` against a real node: tables, TSV, --json,
// short ids, pages (--limit, --cursor, --all), and exit codes (usage 2, not found 1,
// unreachable 3, bad token 4).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { LIST_LIMIT } from '../../../src/schemas/tickets.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { startNode, TOKEN, type TicketNode } from '../../helpers/tickets-node.js';
import { freePort } from '../../helpers/wait.js';

const data = tempDir();
const config = tempDir();
let node: TicketNode;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  node = await startNode(data.path);
  env = { XDG_CONFIG_HOME: config.path, MKT_CREDENTIAL_STORE: 'file', MKT_TICKETS_URL: node.url, MKT_TICKETS_TOKEN: TOKEN };
});
afterAll(async () => {
  await node.stop();
  data.remove();
  config.remove();
});

/** `tty`: stdout is a terminal; `errTty`: stderr is one (where the count and page hints go). */
async function mkt(args: string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv; tty?: boolean; errTty?: boolean } = {}): Promise<{ code: number; out: string; err: string; writes: number }> {
  const io = fakeIO({ env: { ...env, ...opts.env }, stdin: opts.stdin, tty: opts.tty });
  io.stderr.isTTY = opts.errTty ?? false;
  let writes = 0;
  io.stdout.on('data', () => writes++);
  const code = await run(['tickets', ...args], io);
  return { code, out: io.out(), err: io.err(), writes };
}

describe('mkt tickets', () => {
  let id = '';

  it('create prints the ticket; --json prints the wire object; --description - reads stdin', async () => {
    const r = await mkt(['create', 'VPN drops every hour', '--priority', 'High', '--channel', 'phone', '--tag', 'vpn', '--tag', 'net', '--description', '-', '--json'], { stdin: 'seen at 10:00\n' });
    expect(r.code, r.err).toBe(0);
    const t = JSON.parse(r.out);
    expect(t).toMatchObject({ title: 'VPN drops every hour', priority: 'high', channel: 'phone', tags: ['net', 'vpn'], description: 'seen at 10:00' });
    id = t.id;
    const human = await mkt(['create', 'Printer on fire', '--requester', 'ana'], { tty: true });
    expect(human.code).toBe(0);
    expect(human.out).toMatch(/^title:\s+Printer on fire$/m);
  });

  it('list: TSV in a pipe, a table on a terminal, JSON with --json; filters and search', async () => {
    const tsv = await mkt(['list']);
    const lines = tsv.out.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.split('\t').length === 7)).toBe(true);
    const table = await mkt(['list'], { tty: true, env: { NO_COLOR: '1' } });
    expect(table.out.split('\n')[0]).toMatch(/^ID\s+STATUS\s+PRIORITY/);
    const json = JSON.parse((await mkt(['list', '--priority', 'high', '--json'])).out);
    expect(json.count).toBe(1);
    expect(json.data[0].id).toBe(id);
    expect(JSON.parse((await mkt(['list', '--search', 'printer', '--json'])).out).data[0].title).toBe('Printer on fire');
    const broad = await mkt(['list', '--search', 'p*']);
    expect(broad.code).not.toBe(0);
    expect(broad.err.trim().split('\n')).toHaveLength(1);
    expect(broad.err).toMatch(/at least 3 characters before its \*/);
    expect(JSON.parse((await mkt(['list', '--status', 'solved', '--json'])).out).count).toBe(0);
  });

  it('show and update accept the short id', async () => {
    const shown = JSON.parse((await mkt(['show', id.slice(0, 8), '--json'])).out);
    expect(shown.id).toBe(id);
    const upd = await mkt(['update', id.slice(0, 8), '--status', 'on-hold', '--assignee', 'bo', '--json']);
    expect(upd.code, upd.err).toBe(0);
    expect(JSON.parse(upd.out)).toMatchObject({ status: 'on_hold', assignee: 'bo' });
  });

  it('list and show escape control characters from the server (no terminal escapes), --json keeps them', async () => {
    const evil = 'Clear\u001b[2J\u001b]0;pwned\u0007 me\u0000';
    const t = (await node.req('POST', '/tickets', { title: evil, assignee: evil, description: `line 1\n${evil}`, tags: [evil] })).body;
    for (const args of [['list'], ['show', t.id]]) {
      for (const tty of [true, false]) {
        const r = await mkt(args, { tty, env: { NO_COLOR: '1' } });
        expect(r.code, r.err).toBe(0);
        expect(r.out).toContain('Clear\\x1b[2J\\x1b]0;pwned\\x07 me\\x00');
        // eslint-disable-next-line no-control-regex -- looking for raw control characters
        expect(r.out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
      }
    }
    expect(JSON.parse((await mkt(['show', t.id, '--json'])).out).title).toBe(evil);
  });

  it('node prints the node id', async () => {
    const r = await mkt(['node']);
    expect(r.out.trim()).toBe((await node.req('GET', '/sync/node')).body.node_id);
  });

  it('a bad enum value is a usage error (2) naming the choices, before any request', async () => {
    const r = await mkt(['list', '--status', 'bogus']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/argument 'bogus' is invalid\. Allowed choices are open, pending/);
    expect((await mkt(['update', id, '--priority', 'meh'])).code).toBe(2);
    expect((await mkt(['update', id])).code).toBe(2);
  });

  it('an unknown ticket exits 1; a wrong token exits 4; an unreachable server exits 3', async () => {
    const missing = await mkt(['show', '00000000-0000-4000-8000-000000000000']);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/not found/);
    const denied = await mkt(['list'], { env: { MKT_TICKETS_TOKEN: 'wrong' } });
    expect(denied.code).toBe(4);
    expect(denied.err).toMatch(/unauthorized/);
    const down = await mkt(['list', '--server', `http://127.0.0.1:${await freePort()}`]);
    expect(down.code).toBe(3);
  });
});

// docs/tickets.md "Pages": GET /tickets answers one page, newest change first, and next_cursor
// leads to the next. A node of its own, so that the counts above stay as they are.
describe('mkt tickets list: pages', () => {
  const pagedData = tempDir();
  let paged: TicketNode;
  let ids: string[] = [];
  const on = (args: string[], opts: { tty?: boolean; errTty?: boolean } = {}): ReturnType<typeof mkt> => mkt(['list', ...args], { ...opts, env: { MKT_TICKETS_URL: paged.url, NO_COLOR: '1' } });
  const idsOf = (tsv: string): string[] => tsv.trim().split('\n').map((l) => l.split('\t')[0]!);

  beforeAll(async () => {
    paged = await startNode(pagedData.path);
    for (let i = 1; i <= 7; i++) expect((await paged.req('POST', '/tickets', { title: `ticket ${i}` })).status).toBe(201);
    const all = JSON.parse((await on(['--json'])).out);
    expect(all).toMatchObject({ count: 7, next_cursor: null });
    ids = all.data.map((t: { short_id: string }) => t.short_id);
  });
  afterAll(async () => {
    await paged.stop();
    pagedData.remove();
  });

  it('--limit 3 answers one page of 3; --json has the count of every page and a next_cursor', async () => {
    const tsv = await on(['--limit', '3']);
    expect(tsv.code, tsv.err).toBe(0);
    expect(idsOf(tsv.out)).toEqual(ids.slice(0, 3));
    const json = JSON.parse((await on(['--limit', '3', '--json'])).out);
    expect(json.data).toHaveLength(3);
    expect(json.count).toBe(7);
    expect(json.next_cursor).toEqual(expect.any(String));
  });

  it('--cursor continues after the page whose next_cursor it is, to the last page (next_cursor null)', async () => {
    const first = JSON.parse((await on(['--limit', '3', '--json'])).out);
    const second = JSON.parse((await on(['--limit', '3', '--json', '--cursor', first.next_cursor])).out);
    expect(second.data.map((t: { short_id: string }) => t.short_id)).toEqual(ids.slice(3, 6));
    const tsv = await on(['--limit', '3', '--cursor', second.next_cursor]);
    expect(idsOf(tsv.out)).toEqual(ids.slice(6));
    expect(JSON.parse((await on(['--limit', '3', '--json', '--cursor', second.next_cursor])).out).next_cursor).toBeNull();
  });

  it('--all in a pipe prints every ticket once, in order, each page written as it arrives', async () => {
    const r = await on(['--limit', '3', '--all']);
    expect(r.code, r.err).toBe(0);
    expect(idsOf(r.out)).toEqual(ids);
    expect(r.writes).toBe(3); // pages of 3, 3 and 1, never gathered
    expect(r.out.trim().split('\n').every((l) => l.split('\t').length === 7)).toBe(true);
  });

  it('--json --all is one JSON object of every ticket, streamed page by page, next_cursor null', async () => {
    const r = await on(['--json', '--all', '--limit', '2']);
    expect(r.code, r.err).toBe(0);
    const json = JSON.parse(r.out);
    expect(json.data.map((t: { short_id: string }) => t.short_id)).toEqual(ids);
    expect(json).toMatchObject({ count: 7, next_cursor: null });
    expect(r.writes).toBeGreaterThanOrEqual(5); // an opening, 4 pages, a close
    const none = JSON.parse((await on(['--json', '--all', '--status', 'solved'])).out);
    expect(none).toEqual({ data: [], count: 0, next_cursor: null });
  });

  it('--all --cursor starts from that cursor', async () => {
    const first = JSON.parse((await on(['--limit', '4', '--json'])).out);
    expect(idsOf((await on(['--all', '--limit', '2', '--cursor', first.next_cursor])).out)).toEqual(ids.slice(4));
  });

  it('on a terminal: a hint on stderr when a next page exists; --all gathers one table', async () => {
    const page = await on(['--limit', '3'], { tty: true, errTty: true });
    expect(page.out.split('\n')[0]).toMatch(/^ID\s+STATUS/);
    const cursor = JSON.parse((await on(['--limit', '3', '--json'])).out).next_cursor;
    expect(page.err).toBe(`3 of 7 tickets; --all for every page, or --cursor ${cursor}\n`);
    expect((await on([], { tty: true, errTty: true })).err).toBe('7 tickets\n');
    const all = await on(['--all', '--limit', '3'], { tty: true, errTty: true });
    expect(all.out.trim().split('\n')).toHaveLength(8); // header and 7 rows
    expect(all.writes).toBe(1);
    expect(all.err).toBe('7 tickets\n');
  });

  it('a bad --limit is a usage error (2) in one line, before any request', async () => {
    for (const bad of ['0', '1001', 'abc', '-1', '2.5', '']) {
      // An unreachable server: a request would exit 3, not 2.
      const r = await mkt(['list', '--limit', bad], { env: { MKT_TICKETS_URL: `http://127.0.0.1:${await freePort()}` } });
      expect(r.code, bad).toBe(2);
      expect(r.err).toBe(`mkt: --limit must be a whole number from 1 to ${LIST_LIMIT.max}, not ${JSON.stringify(bad)}\n`);
    }
  });

  it("a forged --cursor fails with the server's error in one line", async () => {
    for (const args of [['--cursor', 'forged'], ['--all', '--cursor', 'forged']]) {
      const r = await on(args);
      expect(r.code).not.toBe(0);
      expect(r.out).toBe('');
      expect(r.err).toMatch(/^mkt: invalid cursor: .*forged.*\n$/);
      expect(r.err.split('\n')).toHaveLength(2);
    }
  });

  it('help shows the page flags, with the limits of src/schemas (LIST_LIMIT)', async () => {
    const r = await mkt(['list', '--help']);
    expect(r.out).toContain(`tickets per page, 1 to ${LIST_LIMIT.max} (server default: ${LIST_LIMIT.default})`);
    expect(r.out).toMatch(/--cursor <cursor>/);
    expect(r.out).toMatch(/\$ mkt tickets list .*--all/);
  });
});
