// `mkt tickets create|list|show|update|node` against a real node: tables, TSV, --json,
// short ids, and exit codes (usage 2, not found 1, unreachable 3, bad token 4).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/run.js';
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

async function mkt(args: string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv; tty?: boolean } = {}): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env: { ...env, ...opts.env }, stdin: opts.stdin, tty: opts.tty });
  const code = await run(['tickets', ...args], io);
  return { code, out: io.out(), err: io.err() };
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
    expect(r.err).toMatch(/invalid --status "bogus"; choose one of: open, pending/);
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
