// Two monitors in this process on one PostgreSQL database: the rate limit window is the
// cluster's, not each instance's, and a check one instance records shows at once in the other's
// status (its cache hears of it), though only one of them checks the target.
import { afterEach, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { healthServer } from '../../helpers/monitor-fixtures.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function pair(yaml: string): Promise<[MonitorNode, MonitorNode]> {
  const env = { MKT_DATABASE_URL: await freshDatabaseUrl() };
  const out: MonitorNode[] = [];
  for (let i = 0; i < 2; i++) {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const m = await startMonitor(dir.path, yaml, {}, env);
    cleanups.push(() => m.stop());
    out.push(m);
  }
  return out as [MonitorNode, MonitorNode];
}

it('the rate limit is shared: 10 requests a window across both instances, the 11th is 429 on either', async () => {
  const [a, b] = await pair('token: mon-token\nrate_limit: { requests: 10, window: 60s }\n');
  for (let i = 0; i < 10; i++) expect((await (i % 2 ? a : b).get('/api/status')).status).toBe(200);
  expect((await a.get('/api/status')).status).toBe(429);
  expect((await b.get('/api/status')).status).toBe(429);
});

it("one instance checks the target; the other's status follows each check", async () => {
  const health = await healthServer();
  cleanups.push(health.close);
  const [a, b] = await pair(`token: mon-token\nrate_limit: { requests: 100000 }\ntargets:\n  api: { url: "${health.url}", interval: 1s, timeout: 2s }\n`);
  // Both read it once (their caches are warm), then the checks go on.
  await waitFor(async () => (await a.get('/api/status/api')).body.latest && (await b.get('/api/status/api')).body.latest, 'a first check');
  for (let round = 0; round < 3; round++) {
    const seenA = (await a.get('/api/status/api')).body.latest.checked_at as string;
    await waitFor(async () => (await a.get('/api/status/api')).body.latest.checked_at !== seenA, 'the next check', 10_000);
    const [sa, sb] = [(await a.get('/api/status/api')).body, (await b.get('/api/status/api')).body];
    // Within the notice's delay both show the same latest check and the same recent list.
    await waitFor(async () => (await b.get('/api/status/api')).body.latest.checked_at === sa.latest.checked_at || undefined, 'the other instance to show it', 2_000).catch(() => {
      throw new Error(`b shows ${sb.latest.checked_at}, a ${sa.latest.checked_at}`);
    });
  }
  const recentA = (await a.get('/api/status/api')).body.recent;
  const recentB = (await b.get('/api/status/api')).body.recent;
  expect(recentB.map((s: { checked_at: string }) => s.checked_at).slice(1)).toEqual(recentA.map((s: { checked_at: string }) => s.checked_at).slice(1));
});
