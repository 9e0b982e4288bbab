// A node of the previous release (commit 60c59cd, before comments, deletes and history) run for
// real, from its own source tree with tsx, syncing with a node of this one. What
// docs/tickets.md ("Talking to a node of the previous release") says: the old node keeps the
// tickets it is sent and drops the comments and history it does not know, refuses tombstones as
// malformed (one warning) and keeps answering; the new node loses nothing: comments survive the
// old node's copies pushed back, and a delete stays deleted.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { startNode, startTempNode, TOKEN, type TicketNode } from '../../helpers/tickets-node.js';
import { freePort, waitFor } from '../../helpers/wait.js';
import { tempDir } from '../../helpers/tmp.js';

const PREVIOUS = '60c59cd';
const repo = join(import.meta.dirname, '../../..');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const bin = (c: () => Promise<void> | void): void => void cleanups.push(c);

let tree: { path: string; remove(): void } | undefined;

beforeAll(() => {
  try {
    execFileSync('git', ['cat-file', '-e', `${PREVIOUS}^{commit}`], { cwd: repo, stdio: 'ignore' });
  } catch {
    throw new Error(`commit ${PREVIOUS} (the previous release) is not in this clone: fetch the full history (git fetch --unshallow) to run this test`);
  }
  tree = tempDir('mkt-previous-');
  // `git archive | tar -x`, through argument arrays: the archive goes from one process to the other as bytes.
  const archive = execFileSync('git', ['archive', '--format=tar', PREVIOUS], { cwd: repo, maxBuffer: 512 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', tree.path], { input: archive });
  symlinkSync(join(repo, 'node_modules'), join(tree.path, 'node_modules'));
});
afterAll(() => tree?.remove());

interface OldNode {
  url: string;
  child: ChildProcess;
  /** Its stdout and stderr lines (log lines are JSON). */
  lines: string[];
  req: TicketNode['req'];
}

/** The previous release's `mkt serve tickets`, from source (its bin needs a build of that tree). */
async function startOld(args: string[] = []): Promise<OldNode> {
  const dir = tempDir();
  bin(() => dir.remove());
  const child = spawn(process.execPath, ['--import', 'tsx', join(tree!.path, 'commands/root/main.ts'), 'serve', 'tickets', '--port', '0', '--data-dir', dir.path, ...args], {
    cwd: tree!.path,
    env: { ...process.env, MKT_LOG_LEVEL: 'info', MKT_TICKETS_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  bin(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  const lines: string[] = [];
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const take = (c: Buffer): void => {
      out += c.toString();
      const parts = out.split('\n');
      out = parts.pop()!;
      lines.push(...parts.filter(Boolean));
      const m = lines.map((l) => /^listening on (http:\/\/\S+)$/.exec(l)).find(Boolean);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    child.once('exit', () => reject(new Error(`the previous release exited before listening:\n${lines.join('\n')}\n${out}`)));
  });
  return {
    url,
    child,
    lines,
    async req(method, path, body) {
      const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // keep text
      }
      return { status: res.status, body: parsed };
    },
  };
}

const EPOCH = '1970-01-01T00:00:00Z';
type Item = { id: string; [k: string]: unknown };
const pullAll = async (n: { req: TicketNode['req'] }): Promise<Item[]> => {
  const r = await n.req('GET', `/sync/pull?since=${EPOCH}&limit=1000`);
  expect(r.status).toBe(200);
  return r.body.tickets as Item[];
};
const warnings = (o: OldNode, text: string): number => o.lines.filter((l) => l.includes(text)).length;

describe('a node of the previous release', () => {
  it('keeps tickets without comments or history, refuses tombstones and keeps answering; the new node loses nothing (pull and push by hand)', async () => {
    const n = await startTempNode(bin);
    const old = await startOld();

    const t = (await n.req('POST', '/tickets', { title: 'printer jams', tags: ['hw'] })).body;
    for (const body of ['first', 'second']) expect((await n.req('POST', `/tickets/${t.id}/comments`, { body })).status).toBe(201);
    expect((await n.req('PATCH', `/tickets/${t.id}`, { status: 'pending' })).status).toBe(200);
    const doomed = (await n.req('POST', '/tickets', { title: 'to be deleted' })).body;

    // The old node takes the new node's copies: the fields it knows, no comments, no history.
    const first = await pullAll(n);
    expect(first.find((x) => x.id === t.id)).toMatchObject({ comments: expect.any(Array), history: expect.any(Array) });
    expect((await old.req('POST', '/sync/push', first)).body).toEqual({ accepted: 2, rejected: 0 });
    const seen = await old.req('GET', `/tickets/${t.id}`);
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ title: 'printer jams', status: 'pending', tags: ['hw'] });
    expect(seen.body.comments).toBeUndefined();
    expect(seen.body.history).toBeUndefined();
    expect((await old.req('GET', `/tickets/${t.id}/history`)).status).toBe(404);
    expect((await old.req('GET', `/tickets/${doomed.id}`)).status).toBe(200);

    // A delete on the new node: the old node refuses the tombstone as malformed, once, keeps
    // its copy, and still answers.
    expect((await n.req('DELETE', `/tickets/${doomed.id}`)).status).toBe(204);
    const second = await pullAll(n);
    const tomb = second.find((x) => x.id === doomed.id)!;
    expect(tomb.deleted).toBeDefined();
    expect((await old.req('POST', '/sync/push', [tomb])).body).toEqual({ accepted: 0, rejected: 1 });
    // Its log line crosses a pipe: it may arrive after the answer.
    await waitFor(async () => warnings(old, 'refused malformed ticket copies') > 0, 'the old node warning', 30_000);
    expect(warnings(old, 'refused malformed ticket copies')).toBe(1);
    expect((await old.req('GET', `/tickets/${doomed.id}`)).status).toBe(200);
    expect((await old.req('GET', '/tickets')).body.count).toBe(2);
    expect(old.child.exitCode).toBeNull();

    // The old node edits the ticket; its copies, pushed back, bring the edit and remove no
    // comment, and its copy of the deleted ticket loses to the tombstone.
    expect((await old.req('PATCH', `/tickets/${t.id}`, { priority: 'high' })).status).toBe(200);
    const back = await pullAll(old);
    expect(back.map((x) => x.id).sort()).toEqual([t.id, doomed.id].sort());
    expect(back.every((x) => x.comments === undefined && x.history === undefined)).toBe(true);
    expect((await n.req('POST', '/sync/push', back)).body).toEqual({ accepted: 1, rejected: 1 });
    const now = (await n.req('GET', `/tickets/${t.id}`)).body;
    expect(now).toMatchObject({ status: 'pending', priority: 'high', comment_count: 2 });
    expect(now.comments.map((c: { body: string }) => c.body)).toEqual(['first', 'second']);
    expect((await n.req('GET', `/tickets/${doomed.id}`)).status).toBe(404);
    expect((await n.req('GET', '/tickets')).body.count).toBe(1);
    // The new node's history still has its own entries (the old node's edit brings none).
    const hist = (await n.req('GET', `/tickets/${t.id}/history?limit=500`)).body.data as { field: string; to: string | null }[];
    expect(hist.filter((h) => h.field === 'comment')).toHaveLength(2);
    expect(hist).toContainEqual(expect.objectContaining({ field: 'status', to: 'pending' }));
    expect(hist).toContainEqual(expect.objectContaining({ field: 'created', to: 'printer jams' }));
    expect(hist.some((h) => h.field === 'priority')).toBe(false);
    expect((await n.req('GET', `/tickets/${doomed.id}/history`)).body.data[0]).toMatchObject({ field: 'deleted' });
  });

  it('syncs with a new node both ways as configured peers: comments and deletes survive its rounds, its own rounds go on', async () => {
    // The new node must know the old one's address before it starts, and the other way round.
    const port = await freePort();
    const dir = tempDir();
    bin(() => dir.remove());
    const n = await startNode(dir.path, { peers: [`http://127.0.0.1:${port}`], syncIntervalMs: 200 });
    bin(() => n.stop());
    const old = await startOld(['--port', String(port), '--peer', n.url, '--sync-interval', '0.2']);
    expect(old.url).toBe(`http://127.0.0.1:${port}`);

    const t = (await n.req('POST', '/tickets', { title: 'shared ticket' })).body;
    await n.req('POST', `/tickets/${t.id}/comments`, { body: 'kept on the new node' });
    const doomed = (await n.req('POST', '/tickets', { title: 'deleted on the new node' })).body;
    await waitFor(async () => (await old.req('GET', `/tickets/${doomed.id}`)).status === 200, 'both tickets on the old node', 60_000);
    await waitFor(async () => (await old.req('GET', `/tickets/${t.id}`)).status === 200, 'both tickets on the old node', 60_000);

    expect((await n.req('DELETE', `/tickets/${doomed.id}`)).status).toBe(204);
    // The old node meets the tombstone in its pulls (and the new node's pushes): refused, its
    // copy kept, its replication going on.
    await waitFor(async () => warnings(old, 'refused malformed ticket copies') > 0, 'the old node to refuse the tombstone', 60_000);
    const roundsAfter = warnings(old, 'synced with peer');
    await waitFor(async () => warnings(old, 'synced with peer') >= roundsAfter + 3, 'three more rounds of the old node', 60_000);
    expect((await old.req('GET', `/tickets/${doomed.id}`)).status).toBe(200);

    // An edit on the old node reaches the new one, whose comment stays; the delete stays.
    expect((await old.req('PATCH', `/tickets/${t.id}`, { assignee: 'old-node-agent' })).status).toBe(200);
    await waitFor(async () => (await n.req('GET', `/tickets/${t.id}`)).body.assignee === 'old-node-agent', 'the old node edit on the new node', 60_000);
    const got = (await n.req('GET', `/tickets/${t.id}`)).body;
    expect(got.comments.map((c: { body: string }) => c.body)).toEqual(['kept on the new node']);
    // A comment added after the old node's copies keep flowing, still there a few rounds later.
    await n.req('POST', `/tickets/${t.id}/comments`, { body: 'added later' });
    const before = warnings(old, 'synced with peer');
    await waitFor(async () => warnings(old, 'synced with peer') >= before + 3, 'three more rounds of the old node', 60_000);
    expect((await n.req('GET', `/tickets/${t.id}`)).body.comment_count).toBe(2);
    expect((await n.req('GET', `/tickets/${doomed.id}`)).status).toBe(404);
    expect((await n.req('GET', '/tickets')).body.count).toBe(1);
    expect((await old.req('GET', '/tickets')).body.count).toBe(2);
    expect(old.child.exitCode).toBeNull();
    // The old node never took the tombstone, so the new node keeps it (no purge): the old
    // node's copy keeps losing to it. And nothing went wrong enough for an error line.
    expect((await n.req('GET', `/tickets/${doomed.id}/history`)).status).toBe(200);
    expect(n.logs.some((l) => l.includes('purged tombstones'))).toBe(false);
    expect(n.logs.some((l) => l.includes('"level":50') || l.includes('"level":60'))).toBe(false);
  }, 180_000);
});
