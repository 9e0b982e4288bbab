// Spec, service B errors: a storage failure on create, list, patch and pull is 500 with the
// failure text. The failure is real: a second connection drops the tickets table under the
// running node, so every statement of its store fails inside SQLite.
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startNode } from '../../helpers/tickets-node.js';
import { tempDir } from '../../helpers/tmp.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('storage failures', () => {
  it('create, list, patch and pull answer 500 with the failure text; the node stays up', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const n = await startNode(dir.path, { syncIntervalMs: 3_600_000 });
    cleanups.push(() => n.stop());
    const t = (await n.req('POST', '/tickets', { title: 'before the failure' })).body as { id: string };

    const raw = new Database(join(dir.path, 'tickets.db'));
    raw.exec('DROP TABLE tickets');
    raw.close();

    const answers = [
      await n.req('POST', '/tickets', { title: 'after' }),
      await n.req('GET', '/tickets'),
      await n.req('PATCH', `/tickets/${t.id}`, { status: 'solved' }),
      await n.req('GET', '/sync/pull?since=1970-01-01T00:00:00Z'),
    ];
    for (const a of answers) {
      expect(a.status).toBe(500);
      expect(a.body.error).toMatch(/tickets/);
    }
    expect((await n.req('GET', '/sync/node')).status).toBe(200);
  });
});
