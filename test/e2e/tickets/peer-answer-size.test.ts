// A peer's answer is read up to a cap, counted as it streams (issue 28, finding 2): a peer
// answering /sync/pull with 473 MB froze an empty node for minutes at 5.5 GB and it ignored
// SIGTERM. The real binary syncs with a hostile peer that streams a 96 MiB pull page (over the
// 64 MiB cap, TICKETS_ANSWER_BYTES.pull) and with an honest node: it refuses the answer and says
// so, answers its own API meanwhile, takes the honest peer's tickets, and stops on SIGTERM while
// the hostile peer is mid-answer.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { startTempNode, TOKEN } from '../../helpers/tickets-node.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { TICKETS_ANSWER_BYTES } from '../../../src/client/tickets.js';
import { listenLocal, padAnswer, type Bin, type PaddedAnswer } from '../../helpers/local-http.js';

const mkt = join(import.meta.dirname, '../../../bin/mkt');
const MiB = 1024 * 1024;

/**
 * The hostile peer: an empty list (so no snapshot is tried), and a pull answer of valid JSON
 * 96 MiB long, written as fast as the node reads, that holds after 16 MiB until released.
 */
async function hostilePeer(bin: Bin): Promise<{ url: string; pulls: PaddedAnswer[] }> {
  const pulls: PaddedAnswer[] = [];
  const server = createServer((req, res: ServerResponse) => {
    res.setHeader('content-type', 'application/json');
    if (!req.url?.startsWith('/sync/pull')) {
      if (req.url?.startsWith('/tickets')) return void res.end(JSON.stringify({ data: [], count: 0, next_cursor: null }));
      return void res.end(JSON.stringify({ accepted: 0, rejected: 0 }));
    }
    pulls.push(padAnswer(res, '{"tickets":[],"pad":"', 96 * MiB, 16 * MiB));
  });
  const url = await listenLocal(server, bin, () => {
    for (const p of pulls) p.release();
  });
  return { url, pulls };
}

interface LogLine {
  msg: string;
  peer?: string;
  limit_bytes?: number;
}

describe('peer answers are capped while they stream (issue 28, finding 2)', () => {
  it('a node refuses a 96 MiB pull page, answers meanwhile, syncs with the honest peer, and stops on SIGTERM mid-answer', async ({ onTestFinished: bin }) => {
    const hostile = await hostilePeer(bin);
    const honest = await startTempNode(bin);
    for (let i = 0; i < 3; i++) expect((await honest.req('POST', '/tickets', { title: `honest ${i}` })).status).toBe(201);

    const dir = tempDir('mkt-answer-size-');
    bin(() => dir.remove());
    const child = spawn(process.execPath, [mkt, 'serve', 'tickets', '--port', '0', '--data-dir', dir.path, '--token', TOKEN, '--peer', hostile.url, '--peer', honest.url, '--sync-interval', '1'], {
      env: { ...process.env, MKT_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    bin(() => void child.kill('SIGKILL'));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    const url = await waitFor(async () => /^listening on (http:\/\/\S+)$/m.exec(out)?.[1], `the node to listen:\n${out}${err}`, 30_000);
    const lines = (): LogLine[] =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as LogLine);
    const get = async (path: string): Promise<{ status: number; body: { count: number; data: { title: string }[] } }> => {
      const res = await fetch(url + path, { headers: { authorization: `Bearer ${TOKEN}` } });
      return { status: res.status, body: (await res.json()) as { count: number; data: { title: string }[] } };
    };

    // Mid-attack: the first pull answer is 16 MiB in and held open. The node still answers.
    const first = await waitFor(async () => (hostile.pulls[0]?.sent === 16 * MiB ? hostile.pulls[0] : undefined), 'the hostile answer to be 16 MiB in', 30_000);
    expect((await get('/tickets')).status).toBe(200);
    expect(first.closed).toBe(false);
    first.release();

    // Refused at the cap: one warning naming the peer and the cap, and the connection cut.
    const cap = TICKETS_ANSWER_BYTES.pull;
    const refusal = await waitFor(async () => lines().find((l) => l.msg.includes(`refused answer: larger than ${cap} bytes`)), 'the refusal to be logged', 60_000);
    expect(refusal).toMatchObject({ peer: hostile.url, limit_bytes: cap });
    await waitFor(async () => first.closed, 'the hostile connection to close', 30_000);
    // Socket buffers hold a few MiB beyond what the node read; nowhere near the 96 MiB.
    expect(first.sent).toBeLessThan(cap + 16 * MiB);

    // The round went on with the honest peer.
    const synced = await waitFor(async () => {
      const r = await get('/tickets');
      return r.body.count === 3 ? r.body : undefined;
    }, 'the honest peer\'s tickets', 60_000);
    expect(synced.data.map((t) => t.title).sort()).toEqual(['honest 0', 'honest 1', 'honest 2']);

    // A later round's hostile answer is held open at 16 MiB: SIGTERM stops the node all the same.
    const later = await waitFor(async () => hostile.pulls.find((p, i) => i > 0 && p.sent === 16 * MiB && !p.closed), 'a later hostile answer in progress', 60_000);
    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 30_000))]);
    expect(code).toBe(0);
    await waitFor(async () => later.closed, 'the held connection to close', 30_000);
  }, 180_000);
});
