// A real marketplace (startService) in a temp data dir with one sync app and one user, and
// "devices": each its own XDG_CONFIG_HOME with the 0600-file credential store (no keychain),
// running `mkt sync ...` in-process through the CLI's run() with its own streams and env.
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { startService, type RunningService } from '../../../daemon/start.js';
import { createLogger } from '../../../daemon/logger.js';
import { run } from '../../../commands/root/run.js';
import { createFactory } from '../../../src/cli/factory.js';
import { SyncSession } from '../../../src/sync/session.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import type { Clock } from '../../../src/util/clock.js';
import type { SqlDatabase } from '../../../src/store/sql.js';
import { openSqlDatabase } from '../../../src/store/open.js';
import { marketplaceEnvFor } from '../../helpers/pg.js';
import type { MarketplaceOptions } from '../../../daemon/services/marketplace/options.js';

export interface SyncWorld {
  url: string;
  dataDir: string;
  /** The PostgreSQL database of the marketplace (MKT_TEST_ENGINE=postgres), undefined on SQLite in the data dir. */
  databaseUrl: string | undefined;
  /** The marketplace's database, opened beside the server (the caller closes it), to alter rows behind its back. */
  database(): Promise<SqlDatabase>;
  /** Everything the database stores, as bytes: the SQLite file and its log, or every row of PostgreSQL as JSON text. */
  storedBytes(): Promise<Buffer>;
  appKey: string;
  email: string;
  password: string;
  /** The server's log (trace level), to prove no secret reaches it. */
  log(): string;
  device(name: string): Device;
  close(): Promise<void>;
}

export interface Device {
  name: string;
  env: NodeJS.ProcessEnv;
  home: string;
  mkt(args: string[], stdin?: string): Promise<{ code: number; out: string; err: string }>;
  /** The device's session, for driving src/sync engines directly (test hooks). */
  session(): Promise<SyncSession>;
}

export async function admin(dataDir: string, args: string[], stdin?: string): Promise<{ code: number; out: string; err: string }> {
  // The data dir's database: PostgreSQL under MKT_TEST_ENGINE=postgres, as the server gets it.
  const io = fakeIO({ env: { MKT_DATA_DIR: dataDir, ...(await marketplaceEnvFor(dataDir)) }, stdin });
  const code = await run(['admin', '--data-dir', dataDir, ...args], io);
  return { code, out: io.out(), err: io.err() };
}

export async function startSyncWorld(opts: { password?: string; appArgs?: string[]; clock?: Clock; flags?: MarketplaceOptions } = {}): Promise<SyncWorld> {
  const dir = tempDir('mkt-sync-e2e-');
  const dataDir = join(dir.path, 'data');
  mkdirSync(dataDir, { recursive: true });
  let log = '';
  const sink = new Writable({
    write(c: Buffer, _e, cb) {
      log += c.toString('utf8');
      cb();
    },
  });
  const databaseUrl = (await marketplaceEnvFor(dataDir)).MKT_DATABASE_URL;
  const database = (): Promise<SqlDatabase> => openSqlDatabase({ dataDir, file: 'marketplace.db', databaseUrl });
  const svc: RunningService = await startService('marketplace', {
    host: '127.0.0.1',
    port: 0,
    dataDir,
    options: { ...opts.flags, ...(databaseUrl ? { databaseUrl } : {}) },
    env: {},
    logger: createLogger({ level: 'trace', pretty: false, stream: sink }),
    out: sink,
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  const password = opts.password ?? 'correct horse battery staple';
  const email = 'ada@example.com';
  const { appKey } = await createAppAndUser(dataDir, email, password, opts.appArgs ?? []);
  const devices: Device[] = [];
  return {
    url: svc.url,
    dataDir,
    databaseUrl,
    database,
    async storedBytes() {
      // SQLite: the file and its write-ahead log (recent rows are there until a checkpoint).
      if (!databaseUrl) return Buffer.concat(['marketplace.db', 'marketplace.db-wal'].filter((f) => existsSync(join(dataDir, f))).map((f) => readFileSync(join(dataDir, f))));
      const db = await database();
      try {
        const tables = await db.all<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name");
        const parts: string[] = [];
        // Table names come from the catalogue, not from input; quoted as identifiers all the same.
        for (const t of tables) for (const r of await db.all<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM "${t.name.replace(/"/g, '""')}" t`)) parts.push(r.j);
        return Buffer.from(parts.join('\n'), 'utf8');
      } finally {
        await db.close();
      }
    },
    appKey,
    email,
    password,
    log: () => log,
    device(name) {
      const home = join(dir.path, `device-${name}`);
      const env = { XDG_CONFIG_HOME: join(home, 'config'), XDG_CACHE_HOME: join(home, 'cache'), MKT_CREDENTIAL_STORE: 'file', MKT_MARKETPLACE_URL: svc.url };
      const d: Device = {
        name,
        env,
        home,
        async mkt(args, stdin) {
          const io = fakeIO({ env, stdin, cwd: home });
          const code = await run(['sync', ...args], io);
          return { code, out: io.out(), err: io.err() };
        },
        session: () => SyncSession.open(createFactory(fakeIO({ env, cwd: home })), {}),
      };
      mkdirSync(home, { recursive: true });
      devices.push(d);
      return d;
    },
    async close() {
      await svc.close();
      dir.remove();
    },
  };
}

/** One sync app (made with `mkt admin app create NAME ...appArgs`) and one user with a password. */
async function createAppAndUser(dataDir: string, email: string, password: string, appArgs: string[]): Promise<{ appKey: string }> {
  const app = await admin(dataDir, ['app', 'create', 'Notes', ...appArgs, '--json']);
  if (app.code !== 0) throw new Error(`mkt admin app create: ${app.err}`);
  const user = await admin(dataDir, ['user', 'add', 'ada', '--email', email], `${password}\n`);
  if (user.code !== 0) throw new Error(`mkt admin user add: ${user.err}`);
  return { appKey: (JSON.parse(app.out) as { api_key: string }).api_key };
}

/** Devices `a` and `b` of the world's user, both signed in, with the sync key made on `a`. */
export async function twoSignedInDevices(w: SyncWorld): Promise<{ a: Device; b: Device }> {
  const a = w.device('a');
  const b = w.device('b');
  for (const [d, args] of [[a, ['login', '--app-key', w.appKey, '--email', w.email]], [a, ['key', 'init']], [b, ['login', '--app-key', w.appKey, '--email', w.email]]] as const) {
    const r = await d.mkt([...args], `${w.password}\n`);
    if (r.code !== 0) throw new Error(`mkt sync ${args.join(' ')} exited ${r.code}: ${r.err}`);
  }
  return { a, b };
}
