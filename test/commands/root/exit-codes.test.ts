// The one map from HTTP answers to exit codes and messages (issue 30, items 6 and 7; the table in
// docs/cli.md): every status through the CLI against a server on 127.0.0.1 (a small node:http
// server for statuses a real service cannot be made to answer, real services where they can),
// refused fields named by the flag the user typed, and commander's errors in the same `mkt:` shape.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { listenLocal } from '../../helpers/local-http.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';
import { startNode, TOKEN, type TicketNode } from '../../helpers/tickets-node.js';

const dir = tempDir();
const closers: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of closers.reverse()) await c();
  dir.remove();
});

async function mkt(argv: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env: { XDG_CONFIG_HOME: dir.path, MKT_CREDENTIAL_STORE: 'file', ...env } });
  const code = await run(argv, io);
  return { code, out: io.out(), err: io.err() };
}

describe('every status a server can answer, through `mkt tickets node` (one map for all commands)', () => {
  // What the next request is answered with.
  let answer: { status: number; error: string; headers?: Record<string, string> } = { status: 200, error: '' };
  let url = '';
  beforeAll(async () => {
    const server = createServer((_req, res) => {
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(JSON.stringify({ error: answer.error }));
    });
    url = await listenLocal(server, (c) => closers.push(c));
  });

  const node = (): Promise<{ code: number; out: string; err: string }> => mkt(['tickets', 'node'], { MKT_TICKETS_URL: url, MKT_TICKETS_TOKEN: 't' });

  it.each([
    // [status, error text, headers, exit code, stderr lines]
    [400, 'body.title must NOT have more than 500 characters', {}, 2, ['mkt: the server refused field title: must not have more than 500 characters']],
    [400, 'namespace: must be lower case', {}, 2, ['mkt: namespace: must be lower case']],
    [401, 'unauthorized', {}, 4, ['mkt: unauthorized (HTTP 401)', 'hint: run `mkt auth login tickets --server URL`']],
    [403, 'this token has read scope', {}, 4, ['mkt: this token has read scope (HTTP 403)']],
    [402, 'payment required', {}, 1, ['mkt: payment required']],
    [404, 'ticket not found', {}, 1, ['mkt: ticket not found']],
    [409, 'key version mismatch', {}, 1, ['mkt: key version mismatch']],
    [410, 'multipart upload was aborted', {}, 1, ['mkt: multipart upload was aborted']],
    [413, 'Request body is too large', {}, 2, ['mkt: Request body is too large (HTTP 413)']],
    [422, 'content is empty; to remove a note use DELETE', {}, 2, ['mkt: content is empty; to remove a note use DELETE']],
    [429, 'rate limit exceeded', { 'retry-after': '12' }, 3, ['mkt: rate limit exceeded (HTTP 429)', 'hint: rate limited; retry after 12 s']],
    [429, 'too many failed sign-ins', {}, 3, ['mkt: too many failed sign-ins (HTTP 429)', 'hint: rate limited; retry later']],
    [500, 'storage failure', {}, 3, ['mkt: server error: storage failure (HTTP 500)']],
    [502, 'bad gateway', {}, 3, ['mkt: server error: bad gateway (HTTP 502)']],
    [503, 'the database is unavailable; retry shortly (connection refused)', {}, 3, ['mkt: server error: the database is unavailable; retry shortly (connection refused) (HTTP 503)']],
    [503, 'the peer mesh is not enabled on this instance', {}, 1, ['mkt: not configured on the server: the peer mesh is not enabled on this instance (HTTP 503)']],
    [501, 'payments are not configured', {}, 1, ['mkt: not configured on the server: payments are not configured (HTTP 501)']],
  ] as const)('HTTP %i %j', async (status, error, headers, code, lines) => {
    answer = { status, error, headers };
    const r = await node();
    expect(r.code).toBe(code);
    expect(r.err.trimEnd().split('\n')).toEqual(lines);
    expect(r.out).toBe('');
  });

  it('a Retry-After given as a date counts the seconds to it', async () => {
    answer = { status: 429, error: 'slow down', headers: { 'retry-after': new Date(Date.now() + 90_000).toUTCString() } };
    const r = await node();
    expect(r.code).toBe(3);
    // An HTTP date has whole seconds: 89 or 90 s from now, depending on where in its second "now" fell.
    expect(r.err).toMatch(/^hint: rate limited; retry after (89|90) s$/m);
  });

  it('an unreachable server is exit 3', async () => {
    const r = await mkt(['tickets', 'node'], { MKT_TICKETS_URL: 'http://127.0.0.1:9', MKT_TICKETS_TOKEN: 't' });
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/^mkt: cannot reach http:\/\/127\.0\.0\.1:9/);
  });
});

describe('real services', () => {
  let mon: MonitorNode;
  let limited: MonitorNode;
  let tickets: TicketNode;
  beforeAll(async () => {
    const a = tempDir();
    const b = tempDir();
    const c = tempDir();
    closers.push(() => a.remove(), () => b.remove(), () => c.remove());
    mon = await startMonitor(a.path, 'name: solo\ntoken: mon-token\nrate_limit: { requests: 100000 }\ntargets: {}\n');
    limited = await startMonitor(b.path, 'name: busy\ntoken: mon-token\nrate_limit: { requests: 2 }\ntargets: {}\n');
    tickets = await startNode(c.path);
    closers.push(() => mon.stop(), () => limited.stop(), () => tickets.stop());
  });

  it('item 6: `mkt monitor mesh` on a monitor without a mesh is a configuration state: exit 1, saying so', async () => {
    const r = await mkt(['monitor', 'mesh'], { MKT_MONITOR_URL: mon.url, MKT_MONITOR_TOKEN: 'mon-token' });
    expect(r.code).toBe(1);
    // The command words it itself (with a hint on setting one up); the generic 503 text is tested above.
    expect(r.err).toMatch(/^mkt: .*mesh.*(not enabled|not configured|no peer mesh configured)/);
  });

  it('item 6: rate limited by the monitor (429) is exit 3 with the Retry-After in the hint', async () => {
    const env = { MKT_MONITOR_URL: limited.url, MKT_MONITOR_TOKEN: 'mon-token' };
    // The window allows two requests; the third is refused until the window ends.
    for (let i = 0; i < 2; i++) expect((await limited.get('/api/status')).status).toBe(200);
    const r = await mkt(['monitor', 'status'], env);
    expect(r.code).toBe(3);
    const lines = r.err.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^mkt: .*rate limit.* \(HTTP 429\)$/);
    expect(lines[1]).toMatch(/^hint: rate limited; retry after \d+ s$/);
  });

  it('item 7: a refused query field names the flag (`--hours`), in lower case', async () => {
    const r = await mkt(['monitor', 'trends', 'api', '--hours', '9000'], { MKT_MONITOR_URL: mon.url, MKT_MONITOR_TOKEN: 'mon-token' });
    expect(r.code).toBe(2);
    expect(r.err).toBe('mkt: --hours must be <= 8760\n');
  });

  it('item 7: a field whose flag has another name is named by the command (bucket_minutes is --bucket)', async () => {
    const r = await mkt(['monitor', 'trends', 'api', '--bucket', '600000'], { MKT_MONITOR_URL: mon.url, MKT_MONITOR_TOKEN: 'mon-token' });
    expect(r.code).toBe(2);
    expect(r.err).toBe('mkt: --bucket must be <= 525600\n');
  });

  it('item 7: a refused body field set by an argument names the argument (`<title>`)', async () => {
    const env = { MKT_TICKETS_URL: tickets.url, MKT_TICKETS_TOKEN: TOKEN };
    const r = await mkt(['tickets', 'create', 'x'.repeat(501)], env);
    expect(r.code).toBe(2);
    expect(r.err).toBe('mkt: <title> must not have more than 500 characters\n');
    const u = await mkt(['tickets', 'create', 'ok', '--requester', 'r'.repeat(1000)], env);
    expect(u.code).toBe(2);
    expect(u.err).toMatch(/^mkt: --requester must not have more than \d+ characters\n$/);
  });

  it("item 7: commander's usage errors are in the same `mkt: ...` shape, with the --help hint", async () => {
    const r = await mkt(['tickets', 'list', '--colour', 'red'], {});
    expect(r.code).toBe(2);
    expect(r.err).toBe("mkt: unknown option '--colour'\n(run with --help for usage)\n");
    const m = await mkt(['tickets', 'show'], {});
    expect(m.code).toBe(2);
    expect(m.err).toBe("mkt: missing required argument 'id'\n(run with --help for usage)\n");
  });
});
