// A real marketplace (startService) in a temp data dir with one sync app and one user, and
// "devices": each its own XDG_CONFIG_HOME with the 0600-file credential store (no keychain),
// running `mkt sync ...` in-process through the CLI's run() with its own streams and env.
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { startService, type RunningService } from '../../../daemon/start.js';
import { createLogger } from '../../../daemon/logger.js';
import { run } from '../../../src/cli/run.js';
import { createFactory } from '../../../src/cli/factory.js';
import { SyncSession } from '../../../src/sync/session.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import type { Clock } from '../../../src/util/clock.js';

export interface SyncWorld {
  url: string;
  dataDir: string;
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
  const io = fakeIO({ env: { MKT_DATA_DIR: dataDir }, stdin });
  const code = await run(['admin', '--data-dir', dataDir, ...args], io);
  return { code, out: io.out(), err: io.err() };
}

export async function startSyncWorld(opts: { password?: string; appArgs?: string[]; clock?: Clock; flags?: Record<string, unknown> } = {}): Promise<SyncWorld> {
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
  const svc: RunningService = await startService('marketplace', {
    host: '127.0.0.1',
    port: 0,
    dataDir,
    flags: opts.flags ?? {},
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
  // As `mkt admin user add ada --email E` (password on stdin) does.
  const { SqlAccountsStore } = await import('../../../src/store/accounts-sql.js');
  const { SqliteDatabase } = await import('../../../src/store/sql-sqlite.js');
  const { hashPassword } = await import('../../../src/crypto/password.js');
  const db = new SqliteDatabase(join(dataDir, 'marketplace.db'));
  try {
    await (await SqlAccountsStore.open(db)).addUser({ name: 'ada', email, passwordHash: await hashPassword(password) });
  } finally {
    await db.close();
  }
  return { appKey: (JSON.parse(app.out) as { api_key: string }).api_key };
}
