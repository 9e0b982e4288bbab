// `mkt tickets` against a real node, issue 30 item 10: `--assignee ""` unassigns (null, not ""),
// `--add-tag`/`--remove-tag` change single tags server-side, `list --assignee/--requester`
// filter (`none`, `*`), ids too short to name a ticket are a usage error, and a search with no
// word in it is refused rather than listing everything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
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
  env = { XDG_CONFIG_HOME: config.path, MKT_CREDENTIAL_STORE: 'file', MKT_TICKETS_URL: node.url, MKT_TICKETS_TOKEN: TOKEN, NO_COLOR: '1' };
});
afterAll(async () => {
  await node.stop();
  data.remove();
  config.remove();
});

async function mkt(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env: { ...env, ...extraEnv } });
  io.stderr.isTTY = false;
  const code = await run(['tickets', ...args], io);
  return { code, out: io.out(), err: io.err() };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tickets are inspected field by field
async function json(args: string[]): Promise<any> {
  const r = await mkt([...args, '--json']);
  expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(0);
  return JSON.parse(r.out);
}

/** A ticket as a peer that follows only the spec would push it (no field stamps). */
function peerCopy(id: string, fields: Record<string, unknown>): Record<string, unknown> {
  const at = new Date().toISOString();
  return { id, title: 'from a peer', description: '', status: 'open', priority: 'normal', channel: 'api', source: 'manual', requester: null, assignee: null, tags: [], created_at: at, updated_at: at, updated_by: 'old-node', ...fields };
}

describe('mkt tickets update: clearing requester and assignee', () => {
  it('--assignee "" and --requester "  " store null (unassigned), on update and on create', async () => {
    const t = await json(['create', 'Unassign me', '--assignee', 'bo', '--requester', 'ana']);
    expect(t).toMatchObject({ assignee: 'bo', requester: 'ana' });
    const cleared = await json(['update', t.short_id, '--assignee', '', '--requester', '  ']);
    expect(cleared.assignee).toBeNull();
    expect(cleared.requester).toBeNull();
    expect((await node.req('GET', `/tickets/${t.id}`)).body).toMatchObject({ assignee: null, requester: null });
    expect(await json(['create', 'Nobody yet', '--assignee', ''])).toMatchObject({ assignee: null });
  });

  it('--title "" and --source "" on update are usage errors (2): those fields cannot be cleared', async () => {
    const down = { MKT_TICKETS_URL: `http://127.0.0.1:${await freePort()}` };
    for (const flag of ['--title', '--source']) {
      const r = await mkt(['update', '3f2a9c1e', flag, ' '], down);
      expect(r.code, flag).toBe(2);
      expect(r.err).toBe(`mkt: ${flag} must not be empty\n`);
    }
  });

  it('on the wire: PATCH with "" (or blanks) stores null as PATCH with null does, so peers replicate one value', async () => {
    const t = (await node.req('POST', '/tickets', { title: 'Wire clear', assignee: 'bo', requester: '' })).body;
    expect(t.requester).toBeNull();
    for (const empty of ['', ' \t', null]) {
      expect((await node.req('PATCH', `/tickets/${t.id}`, { assignee: 'someone' })).body.assignee).toBe('someone');
      const r = await node.req('PATCH', `/tickets/${t.id}`, { assignee: empty });
      expect(r.status).toBe(200);
      expect(r.body.assignee, JSON.stringify(empty)).toBeNull();
    }
    // What a peer pulls is the same null.
    const pulled = (await node.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z')).body.tickets.find((x: { id: string }) => x.id === t.id);
    expect(pulled.assignee).toBeNull();
  });
});

describe('mkt tickets update --add-tag / --remove-tag', () => {
  it('adds and removes single tags, keeping the others', async () => {
    const t = await json(['create', 'Tagged', '--tag', 'vpn', '--tag', 'net', '--tag', 'triage']);
    const after = await json(['update', t.short_id, '--add-tag', 'urgent', '--add-tag', 'vpn', '--remove-tag', 'triage', '--remove-tag', 'absent']);
    expect([...after.tags].sort()).toEqual(['net', 'urgent', 'vpn']);
    // Nothing to change: the ticket and its updated_at stay as they were.
    const same = await json(['update', t.short_id, '--add-tag', 'net', '--remove-tag', 'triage']);
    expect(same.updated_at).toBe(after.updated_at);
  });

  it('concurrent edits on one node keep every tag: the server adds and removes inside its transaction', async () => {
    const t = await json(['create', 'Busy ticket', '--tag', 'old']);
    const adds = Array.from({ length: 8 }, (_, i) => `t${i}`);
    const runs = await Promise.all([...adds.map((tag) => mkt(['update', t.short_id, '--add-tag', tag])), mkt(['update', t.short_id, '--remove-tag', 'old']), mkt(['update', t.short_id, '--status', 'pending'])]);
    for (const r of runs) expect(r.code, r.err).toBe(0);
    const final = await json(['show', t.short_id]);
    expect([...final.tags].sort()).toEqual(adds);
    expect(final.status).toBe('pending');
  });

  it('--tag with --add-tag, or a tag both added and removed, is a usage error (2) before any request', async () => {
    const down = { MKT_TICKETS_URL: `http://127.0.0.1:${await freePort()}` };
    const both = await mkt(['update', '3f2a9c1e', '--tag', 'a', '--add-tag', 'b'], down);
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/'--add-tag <tag>' cannot be used with option '--tag <tag>'/);
    const twice = await mkt(['update', '3f2a9c1e', '--add-tag', 'x', '--remove-tag', 'x'], down);
    expect(twice.code).toBe(2);
    expect(twice.err).toBe('mkt: --add-tag and --remove-tag both name "x"; give it to one of them\n');
  });

  it('on the wire: add_tags with tags is 400; more than 50 tags is 400; removing still works past 50', async () => {
    const t = (await node.req('POST', '/tickets', { title: 'Wire tags', tags: ['a'] })).body;
    const mixed = await node.req('PATCH', `/tickets/${t.id}`, { tags: ['b'], add_tags: ['c'] });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toMatch(/not both/);
    const clash = await node.req('PATCH', `/tickets/${t.id}`, { add_tags: ['c'], remove_tags: ['c'] });
    expect(clash.status).toBe(400);
    const fifty = Array.from({ length: 49 }, (_, i) => `x${i}`);
    expect((await node.req('PATCH', `/tickets/${t.id}`, { add_tags: fifty })).body.tags).toHaveLength(50);
    const over = await node.req('PATCH', `/tickets/${t.id}`, { add_tags: ['one-more'] });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatch(/at most 50 tags/);
    expect((await node.req('GET', `/tickets/${t.id}`)).body.tags).toHaveLength(50);
    expect((await node.req('PATCH', `/tickets/${t.id}`, { remove_tags: ['a'] })).body.tags).toHaveLength(49);
  });
});

describe('mkt tickets list --assignee / --requester', () => {
  let ids: Record<string, string> = {};
  const legacy = 'a0000000-0000-4000-8000-000000000001';
  const filterNode = tempDir();
  let fnode: TicketNode;
  const list = async (args: string[]): Promise<string[]> => {
    const r = await mkt(['list', ...args, '--json'], { MKT_TICKETS_URL: fnode.url });
    expect(r.code, r.err).toBe(0);
    const body = JSON.parse(r.out);
    expect(body.count).toBe(body.data.length);
    return body.data.map((t: { title: string }) => t.title).sort();
  };

  beforeAll(async () => {
    fnode = await startNode(filterNode.path);
    for (const [title, fields] of [
      ['bo open', { assignee: 'bo', requester: 'ana', status: 'open' }],
      ['bo solved', { assignee: 'bo', status: 'solved' }],
      ['cy open', { assignee: 'cy', requester: 'ana' }],
      ['nobody', {}],
    ] as const) {
      const r = await fnode.req('POST', '/tickets', { title, ...fields });
      expect(r.status).toBe(201);
      ids = { ...ids, [title]: r.body.id };
    }
    // Stored by a version before unassigning gave null: "" counts as unassigned.
    expect((await fnode.req('POST', '/sync/push', [peerCopy(legacy, { title: 'legacy empty', assignee: '', requester: '' })])).body.accepted).toBe(1);
  });
  afterAll(async () => {
    await fnode.stop();
    filterNode.remove();
  });

  it('a name matches exactly; with --status too; `none` (or "") lists the unassigned; `*` the assigned', async () => {
    expect(await list(['--assignee', 'bo'])).toEqual(['bo open', 'bo solved']);
    expect(await list(['--assignee', 'bo', '--status', 'open'])).toEqual(['bo open']);
    expect(await list(['--assignee', 'Bo'])).toEqual([]);
    expect(await list(['--assignee', 'none'])).toEqual(['legacy empty', 'nobody']);
    expect(await list(['--assignee', ''])).toEqual(['legacy empty', 'nobody']);
    expect(await list(['--assignee', '*'])).toEqual(['bo open', 'bo solved', 'cy open']);
    expect(await list(['--requester', 'ana'])).toEqual(['bo open', 'cy open']);
    expect(await list(['--requester', 'none', '--assignee', 'bo'])).toEqual(['bo solved']);
  });

  it('pages of a filtered list carry on with the filter (--all)', async () => {
    const r = await mkt(['list', '--assignee', '*', '--limit', '1', '--all'], { MKT_TICKETS_URL: fnode.url });
    expect(r.code, r.err).toBe(0);
    expect(r.out.trim().split('\n')).toHaveLength(3);
  });

  it('on the wire: assignee= and requester= are in the OpenAPI document; an empty value is no filter', async () => {
    const doc = (await fnode.req('GET', '/openapi.json')).body;
    const params = doc.paths['/tickets'].get.parameters.map((p: { name: string }) => p.name);
    expect(params).toEqual(expect.arrayContaining(['assignee', 'requester']));
    expect((await fnode.req('GET', '/tickets?assignee=')).body.count).toBe(5);
    expect((await fnode.req('GET', '/tickets?assignee=none')).body.count).toBe(2);
  });
});

describe('mkt tickets show/update: ids too short or ambiguous', () => {
  it('an id shorter than 8 characters is a usage error (2) naming the minimum, before any request', async () => {
    const down = { MKT_TICKETS_URL: `http://127.0.0.1:${await freePort()}` };
    for (const args of [['show', 'ff5'], ['update', 'ff5', '--status', 'open'], ['show', ' 3f2a9c1 ']]) {
      const r = await mkt(args, down);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toBe(`mkt: ticket id ${JSON.stringify(args[1])} is too short: give at least 8 characters\n`);
    }
  });

  it('on the wire: a short id below 8 characters is still the spec 404, saying why', async () => {
    const r = await node.req('GET', '/tickets/ff5');
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('ticket not found: "ff5" (a short id needs at least 8 characters)');
  });

  it('a prefix of several tickets exits 1 saying it is ambiguous; more characters find the ticket', async () => {
    const ids = ['abcdef01-0000-4000-8000-000000000001', 'abcdef01-0000-4000-8000-000000000002'];
    expect((await node.req('POST', '/sync/push', ids.map((id) => peerCopy(id, {})))).body.accepted).toBe(2);
    const r = await mkt(['show', 'abcdef01']);
    expect(r.code).toBe(1);
    expect(r.err).toBe('mkt: ticket id "abcdef01" is ambiguous: it is the prefix of 2 tickets; give more characters\n');
    expect((await json(['show', 'abcdef01-0000-4000-8000-000000000002'])).id).toBe(ids[1]);
  });
});

describe('mkt tickets list --search with nothing to search for', () => {
  it('a search of only punctuation or stars exits 2 with the server\'s one line, as a notes search does', async () => {
    await json(['create', 'Printer on fire']);
    for (const q of ['***', '...', '*']) {
      const r = await mkt(['list', '--search', q]);
      expect(r.code, q).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toBe(`mkt: search has no words to search for: ${JSON.stringify(q)}\n`);
    }
    expect((await json(['list', '--search', 'printer'])).count).toBe(1);
  });
});
