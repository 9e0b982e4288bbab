// The marketplace server: one database shared by its areas, every area's routes served, and a
// clean close. Area behaviour is tested per area.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startService, type RunningService } from '../../../../daemon/start.js';
import { createLogger } from '../../../../daemon/logger.js';
import { tempDir } from '../../../helpers/tmp.js';
import { marketplaceEnvFor, marketplaceTestEngine } from '../../../helpers/pg.js';

const dir = tempDir();
const sink = new Writable({ write: (_c, _e, cb) => cb() });
let svc: RunningService;

beforeAll(async () => {
  svc = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: dir.path, options: { databaseUrl: (await marketplaceEnvFor(dir.path)).MKT_DATABASE_URL }, env: {}, logger: createLogger({ level: 'silent', stream: sink }), out: sink });
});
afterAll(async () => {
  await svc.close();
  dir.remove();
});

describe('mkt serve marketplace', () => {
  it('keeps one 0600 database in the data dir on SQLite, none on PostgreSQL', () => {
    const db = join(dir.path, 'marketplace.db');
    if (marketplaceTestEngine() === 'postgres') return expect(existsSync(db)).toBe(false);
    expect(existsSync(db)).toBe(true);
    expect(statSync(db).mode & 0o777).toBe(0o600);
  });
  it('answers GET /healthz while its database answers', async () => {
    const r = await fetch(`${svc.url}/healthz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: 'ok', engine: marketplaceTestEngine() });
  });
  it('serves every area and documents it in /openapi.json', async () => {
    const doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as { info: { title: string }; paths: Record<string, unknown> };
    expect(doc.info.title).toBe('mkt marketplace');
    expect(Object.keys(doc.paths)).toContain('/api/v1/keys/validate');
  });
  it('answers unknown routes with a 404 error body', async () => {
    const r = await fetch(`${svc.url}/nope`);
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: string }).error).toMatch(/no route/);
  });
});
