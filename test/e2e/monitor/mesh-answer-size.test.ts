// A mesh peer's /api/peer/status is read up to PEER_STATUS_MAX_BYTES, counted as it streams
// (issue 28, finding 2): a peer answering with 300 MB held the monitor until its public
// /api/health timed out. Here a peer streams a 64 MiB JSON object; the monitor answers its
// health check meanwhile, cuts the answer at 8 MiB, logs the refusal and keeps no data from it.
import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { healthServer } from '../../helpers/monitor-fixtures.js';
import { startMonitor } from '../../helpers/monitor-node.js';
import { listenLocal, padAnswer, type Bin, type PaddedAnswer } from '../../helpers/local-http.js';
import { PEER_STATUS_MAX_BYTES } from '../../../daemon/services/monitor/mesh.js';

const MiB = 1024 * 1024;
const cleanups: (() => Promise<void> | void)[] = [];
const bin: Bin = (c) => void cleanups.push(c);
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A peer whose status is a 64 MiB JSON object; the first answer holds after 4 MiB until released. */
async function hugePeer(): Promise<{ url: string; answers: PaddedAnswer[] }> {
  const answers: PaddedAnswer[] = [];
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    // Only the first answer holds: a later one is released before it gets there.
    const a = padAnswer(res, '{"instance":{"name":"big"},"targets":{},"peers":{},"pad":"', 64 * MiB, 4 * MiB);
    answers.push(a);
    if (answers.length > 1) a.release();
  });
  const url = await listenLocal(server, bin, () => {
    for (const a of answers) a.release();
  });
  return { url, answers };
}

describe('mesh: a peer status answer is capped while it streams (issue 28, finding 2)', () => {
  it('a 64 MiB /api/peer/status is refused at 8 MiB and logged; /api/health answers throughout', async () => {
    const health = await healthServer();
    cleanups.push(health.close);
    const peer = await hugePeer();
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const yaml = `name: here\ntoken: mon-token\nrate_limit: { requests: 100000 }\nmesh:\n  interval: 1s\n  peers:\n    - { name: big, url: "${peer.url}", token: tok-big }\ntargets:\n  shop:\n    url: ${health.url}\n    interval: 1s\n    timeout: 2s\n`;
    const m = await startMonitor(dir.path, yaml);
    cleanups.push(() => m.stop());

    // Mid-answer (4 MiB in, held open), the public health check answers.
    const first = await waitFor(async () => (peer.answers[0]?.sent === 4 * MiB ? peer.answers[0] : undefined), 'the peer answer to be 4 MiB in', 30_000);
    expect((await m.get('/api/health', null)).status).toBe(200);
    expect(first.closed).toBe(false);
    first.release();

    const refusal = await waitFor(
      async () =>
        m.logs
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { msg: string; peer?: string; limit_bytes?: number })
          .find((l) => l.msg.includes(`refused answer: larger than ${PEER_STATUS_MAX_BYTES} bytes`)),
      'the refusal to be logged',
      60_000,
    );
    expect(refusal).toMatchObject({ msg: `mesh peer poll failed: refused answer: larger than ${PEER_STATUS_MAX_BYTES} bytes`, peer: 'big', limit_bytes: PEER_STATUS_MAX_BYTES });
    await waitFor(async () => first.closed, 'the connection to close', 30_000);
    expect(first.sent).toBeLessThan(PEER_STATUS_MAX_BYTES + 16 * MiB);

    // Nothing of the answer is kept: /api/mesh says why there is no data for the peer.
    const mesh = await m.get('/api/mesh');
    expect(mesh.status).toBe(200);
    expect(mesh.body.instances.big).toMatchObject({ status: 'down' });
    expect(mesh.body.instances.big.error).toMatch(/refused answer: larger than 8388608 bytes/);
    expect(mesh.body.instances.big.pad).toBeUndefined();
    expect((await m.get('/api/health', null)).status).toBe(200);
  }, 120_000);

  it('a peer status nested 5,000 levels deep is refused, so /api/mesh, which serves the cached status, keeps answering', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"instance":{"name":"deep"},"targets":{},"peers":{},"x":${deep}}`);
    });
    const url = await listenLocal(server, bin);
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const yaml = `name: here\ntoken: mon-token\nrate_limit: { requests: 100000 }\nmesh:\n  interval: 200ms\n  peers:\n    - { name: deep, url: "${url}", token: tok }\ntargets: {}\n`;
    const m = await startMonitor(dir.path, yaml);
    cleanups.push(() => m.stop());
    // Several polls later, still an answer (it was a 500: JSON.stringify overflowed the stack).
    await waitFor(async () => m.logs.filter((l) => l.includes('nested deeper than')).length >= 3, 'three refused polls', 30_000);
    const mesh = await m.get('/api/mesh');
    expect(mesh.status).toBe(200);
    expect(mesh.body.instances.deep).toMatchObject({ status: 'down' });
    expect(mesh.body.instances.deep.error).toMatch(/refused answer: JSON nested deeper than 1024 levels/);
  });
});
