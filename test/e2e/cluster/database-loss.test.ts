// The marketplace binary and its PostgreSQL database: an unreachable database at start is one
// error line and exit 3; a database lost while running gives 503 {"error"} answers (and /healthz
// 503), and when it returns the same process answers again with nothing acknowledged lost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { startOwnPostgres, type OwnPostgres } from '../../helpers/pg-global.js';
import { tempDir } from '../../helpers/tmp.js';
import { send, serve, type Served } from '../crash/harness.js';

const mkt = join(import.meta.dirname, '../../../bin/mkt');

describe('marketplace without its database', () => {
  it('an unreachable database at start: one error line, exit 3, no listening', () => {
    const dir = tempDir('mkt-noddb-');
    try {
      const r = spawnSync(process.execPath, [mkt, 'serve', 'marketplace', '--port', '0', '--data-dir', dir.path], {
        env: { ...process.env, MKT_LOG_LEVEL: 'silent', MKT_DATABASE_URL: 'postgres://mkt:secret-pw@127.0.0.1:1/mkt' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(r.status).toBe(3);
      expect(r.stdout).not.toMatch(/listening on/);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^mkt: cannot reach the database at postgres:\/\/mkt:\*\*\*@127\.0\.0\.1:1\/mkt/);
      expect(r.stderr).not.toContain('secret-pw');
    } finally {
      dir.remove();
    }
  });

  it('a malformed database URL is a usage error (exit 2)', () => {
    const r = spawnSync(process.execPath, [mkt, 'serve', 'marketplace', '--port', '0', '--database-url', 'mysql://x'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/postgres:\/\//);
  });

  describe('lost while running', () => {
    let db: OwnPostgres;
    let server: Served;
    const dir = tempDir('mkt-dbloss-');
    beforeAll(async () => {
      db = await startOwnPostgres();
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      await c.query('CREATE DATABASE market');
      await c.end();
      const url = db.url.replace(/\/postgres$/, '/market');
      // An empty database holds no marketplace: `mkt admin migrate` makes one (issue 30 item 1).
      const migrated = spawnSync(process.execPath, [mkt, 'admin', '--data-dir', dir.path, 'migrate'], { env: { ...process.env, MKT_DATABASE_URL: url }, encoding: 'utf8' });
      expect(migrated.status, migrated.stderr).toBe(0);
      const admin = spawnSync(process.execPath, [mkt, 'admin', '--data-dir', dir.path, 'item', 'create', 'tool', '--name', 'Tool', '--max-activations', '1000'], { env: { ...process.env, MKT_DATABASE_URL: url }, encoding: 'utf8' });
      expect(admin.status, admin.stderr).toBe(0);
      const issued = spawnSync(process.execPath, [mkt, 'admin', '--data-dir', dir.path, 'key', 'issue', 'tool', '--json'], { env: { ...process.env, MKT_DATABASE_URL: url }, encoding: 'utf8' });
      expect(issued.status, issued.stderr).toBe(0);
      key = (JSON.parse(issued.stdout) as { key: string }[])[0]!.key;
      server = await serve('marketplace', dir.path, { MKT_DATABASE_URL: url });
    });
    afterAll(async () => {
      server?.child.kill('SIGKILL');
      await db?.close();
      dir.remove();
    });
    let key = '';

    it('answers 503 {"error"} while the database is down and recovers when it is back', async () => {
      const activate = (machine: string) => send(`${server.url}/api/v1/keys/validate`, 'POST', { key, machine_id: machine, activate: true });
      expect((await activate('before')).body).toMatchObject({ valid: true, activated: true });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

      await db.stop();
      const during = await activate('during');
      expect(during.status).toBe(503);
      expect(during.body).toEqual({ error: expect.stringMatching(/database is unavailable/) as string });
      const health = await fetch(`${server.url}/healthz`);
      expect(health.status).toBe(503);
      expect(Object.keys((await health.json()) as object)).toEqual(['error']);

      await db.start();
      let after = await activate('after');
      for (let i = 0; i < 50 && after.status === 503; i++) {
        await new Promise((r) => setTimeout(r, 200));
        after = await activate('after');
      }
      expect(after.body).toMatchObject({ valid: true, activated: true });
      // Acknowledged before the loss: still there.
      expect((await send(`${server.url}/api/v1/keys/validate`, 'POST', { key, machine_id: 'before' })).body).toMatchObject({ valid: true, code: 'VALID' });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    });
  });
});
