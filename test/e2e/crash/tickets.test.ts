// Crash safety of the ticket tracker (issue 11, regression): tickets created concurrently, the
// server SIGKILLed mid-write and restarted on the same data dir: every acknowledged ticket is there.
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.js';
import { send, serve, writeUntilKilled, type Served } from './harness.js';

const TOKEN = 'crash-token';
const auth = { authorization: `Bearer ${TOKEN}` };
const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

describe('tickets survive SIGKILL', () => {
  it('every ticket answered 201 before the kill is present after a restart on the same data dir', async () => {
    const dir = tempDir('mkt-crash-tickets-');
    cleanups.push(() => dir.remove());
    const env = { MKT_TICKETS_TOKEN: TOKEN };
    const first: Served = await serve('tickets', dir.path, env);
    cleanups.push(() => first.child.kill('SIGKILL'));

    const run = await writeUntilKilled(first, {
      workers: 8,
      minAcks: 40,
      minMs: 1_000,
      write: async (w, i) => {
        const title = `crash w${w} #${i}`;
        const r = await send(`${first.url}/tickets`, 'POST', { title, description: 'x'.repeat(2000) }, auth);
        return r.status === 201 ? { id: r.body.id as string, title } : undefined;
      },
    });
    expect(run.acknowledged.length).toBeGreaterThanOrEqual(40);
    expect(run.cutOff).toBeGreaterThan(0);

    const second = await serve('tickets', dir.path, env);
    cleanups.push(() => second.child.kill('SIGKILL'));
    for (const t of run.acknowledged) {
      const got = await send(`${second.url}/tickets/${t.id}`, 'GET', undefined, auth);
      expect(got.status, t.title).toBe(200);
      expect(got.body.title).toBe(t.title);
    }
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
