// A marketplace server with only the license area, for license tests: temp data dir, log
// captured in memory (at trace level, to prove keys never reach it), admin on the same dir.
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../daemon/server.js';
import { captureLog } from './log-capture.js';
import { openDatabase, type Db } from '../../src/store/sqlite.js';
import type { AccountsStore } from '../../src/store/accounts.js';
import { ManualClock } from '../../src/util/clock.js';
import { openLicenseArea } from '../../daemon/services/marketplace/license/index.js';
import { LicenseAdmin } from '../../daemon/services/marketplace/license/admin.js';
import { tempDir } from './tmp.js';

export interface LicenseServer {
  app: FastifyInstance;
  url: string;
  dataDir: string;
  clock: ManualClock;
  admin: LicenseAdmin;
  log(): string;
  close(): Promise<void>;
}

export async function startLicenseServer(opts: { flags?: Record<string, unknown>; listen?: boolean; now?: number; dataDir?: string } = {}): Promise<LicenseServer> {
  const dir = opts.dataDir ? { path: opts.dataDir, remove: () => undefined } : tempDir('mkt-license-');
  const clock = new ManualClock(opts.now ?? Date.now());
  const { logger, text: log } = captureLog();
  const db: Db = openDatabase(join(dir.path, 'marketplace.db'));
  const area = await openLicenseArea({
    ctx: { options: { host: '127.0.0.1', port: 0, dataDir: dir.path, flags: opts.flags ?? {}, env: {} }, logger, clock, announce: () => undefined },
    db,
    dataDir: dir.path,
    // The license area never touches accounts.
    accounts: {} as AccountsStore,
  });
  const app = await buildServer({
    service: { openapi: { title: 'mkt marketplace (license area)', version: '0.16.0' }, register: (a) => area.register(a), close: () => area.close() },
    logger,
  });
  let url = '';
  if (opts.listen !== false) url = await app.listen({ host: '127.0.0.1', port: 0 });
  const admin = new LicenseAdmin(dir.path, () => clock.now());
  return {
    app,
    url,
    dataDir: dir.path,
    clock,
    admin,
    log,
    async close() {
      await app.close();
      await area.close();
      await admin.close();
      db.close();
      dir.remove();
    },
  };
}
