// The marketplace binary under a steady load of writes (license activations and sync pushes) while
// its PostgreSQL server stops and starts again on the same data dir and port: every request
// completes (no hang), those the database cannot serve answer 503 {"error"}, /healthz is 503 while
// it is gone and 200 after, the same process answers 2xx again by itself, and every write
// acknowledged before, during or after the outage is there afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { startOwnPostgres, type OwnPostgres } from '../../helpers/pg-global.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { serveBinary, type Served } from '../../helpers/serve-binary.js';

const mkt = join(import.meta.dirname, '../../../bin/mkt');
const TS = '2026-03-01T12:00:00.000Z';
/** Far above any answer a loaded machine takes, even through an outage: an abort means a hang. */
const DEADLINE_MS = 20_000;
const WORKERS = 4;

type Kind = 'activation' | 'push';
interface Outcome {
  kind: Kind;
  /** What the write was: a machine id, or the row ids of a push. */
  what: string[];
  status: number;
  body: unknown;
  /** The request did not complete within DEADLINE_MS, or the connection failed. */
  failure?: string;
  sentAt: number;
}

/** `mkt <args>` as an awaited child process; its stdout, or a rejection with its stderr. */
function run(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [mkt, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' }, (err, stdout, stderr) => (err ? reject(new Error(`mkt ${args.join(' ')}: ${stderr}`)) : resolve(stdout)));
  });
}

/** A JSON request bounded by DEADLINE_MS; a hang or a dropped connection is an outcome, not a throw. */
async function request(url: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown; failure?: string }> {
  try {
    const res = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(DEADLINE_MS) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Kept as text: the assertion shows it.
    }
    return { status: res.status, body: parsed };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { status: 0, body: undefined, failure: `${(err as Error).name}: ${(err as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}` };
  }
}

describe('marketplace: PostgreSQL restarts under load', () => {
  let db: OwnPostgres;
  let server: Served;
  let url = '';
  let key = '';
  let apiKey = '';
  let log = '';
  const dir = tempDir('mkt-pg-restart-market-');

  beforeAll(async () => {
    db = await startOwnPostgres();
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query('CREATE DATABASE market');
    await c.end();
    url = db.url.replace(/\/postgres$/, '/market');
    const env = { MKT_DATABASE_URL: url };
    await run(['admin', '--data-dir', dir.path, 'migrate'], env);
    await run(['admin', '--data-dir', dir.path, 'item', 'create', 'tool', '--name', 'Tool', '--max-activations', '1000000'], env);
    key = (JSON.parse(await run(['admin', '--data-dir', dir.path, 'key', 'issue', 'tool', '--json'], env)) as { key: string }[])[0]!.key;
    const { SyncAdmin } = await import('../../../daemon/services/marketplace/sync/admin.js');
    const { AccountsAdmin } = await import('../../../daemon/services/marketplace/accounts/admin.js');
    const sync = await SyncAdmin.open({ dataDir: dir.path, databaseUrl: url });
    apiKey = (await sync.createApp('Notes'))!.apiKey;
    await sync.close();
    const accounts = await AccountsAdmin.open({ dataDir: dir.path, databaseUrl: url });
    await accounts.addUser({ name: 'ana', email: 'ana@example.com', password: 'pw-ana-long' });
    await accounts.close();
    server = await serveBinary('marketplace', dir.path, { MKT_DATABASE_URL: url, MKT_LOG_LEVEL: 'info' });
    server.child.stdout!.on('data', (b: Buffer) => (log += b.toString()));
    server.child.stderr!.on('data', (b: Buffer) => (log += b.toString()));
  }, 120_000);

  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await db?.close();
    dir.remove();
  });

  it('answers 503 {"error"} while the database is gone, recovers by itself, and loses no acknowledged write', async () => {
    const signIn = await request(`${server.url}/api/v1/sync/auth`, 'POST', { api_key: apiKey, email: 'ana@example.com', password: 'pw-ana-long' });
    expect(signIn.status).toBe(200);
    const auth = { authorization: `Bearer ${(signIn.body as { token: string }).token}` };
    expect((await request(`${server.url}/api/v1/sync/keys`, 'PUT', { encrypted_key: 'ENVELOPE-1', expected_key_version: 0 }, auth)).status).toBe(204);
    const device = ((await request(`${server.url}/api/v1/sync/devices`, 'POST', { name: 'laptop' }, auth)).body as { id: string }).id;

    const outcomes: Outcome[] = [];
    let loading = true;
    const writers: Promise<void>[] = [];
    for (let w = 0; w < WORKERS; w++) {
      writers.push(
        (async () => {
          for (let i = 0; loading; i++) {
            const machine = `m${w}-${i}`;
            const sentAt = Date.now();
            const r = await request(`${server.url}/api/v1/keys/validate`, 'POST', { key, machine_id: machine, activate: true });
            outcomes.push({ kind: 'activation', what: [machine], sentAt, ...r });
            // Not a busy loop against a refused database: the outage answers quickly.
            if (r.status !== 200) await new Promise((res) => setTimeout(res, 20));
          }
        })(),
        (async () => {
          for (let i = 0; loading; i++) {
            const rows = [`w${w}-${i}-a`, `w${w}-${i}-b`];
            const entries = rows.map((row_id) => ({ table: 'notes', op: 'insert', row_id, timestamp: TS, data: { sealed: 'c'.repeat(200) } }));
            const sentAt = Date.now();
            const r = await request(`${server.url}/api/v1/sync/push`, 'POST', { device_id: device, batch_id: `w${w}-${i}`, key_id: 1, entries }, auth);
            outcomes.push({ kind: 'push', what: rows, sentAt, ...r });
            if (r.status !== 200) await new Promise((res) => setTimeout(res, 20));
          }
        })(),
      );
    }
    const ok = (kind: Kind, after = 0): number => outcomes.filter((o) => o.kind === kind && o.status === 200 && o.sentAt >= after).length;
    const unavailable = (kind: Kind, after: number): number => outcomes.filter((o) => o.kind === kind && o.status === 503 && o.sentAt >= after).length;
    try {
      await waitFor(async () => ok('activation') >= 20 && ok('push') >= 20, 'writes acknowledged before the outage', 60_000);
      expect((await request(`${server.url}/healthz`, 'GET', undefined)).status).toBe(200);

      await db.stop();
      const stoppedAt = Date.now();
      // Both kinds meet the outage and are answered for it.
      await waitFor(async () => unavailable('activation', stoppedAt) >= 5 && unavailable('push', stoppedAt) >= 5, '503 answers to both kinds of write while the database is down', 60_000);
      const health = await request(`${server.url}/healthz`, 'GET', undefined);
      expect(health.status).toBe(503);
      expect(health.body).toEqual({ error: expect.stringMatching(/^the database is unavailable/) as string });

      await db.start();
      const startedAt = Date.now();
      // The same process, without a restart of its own, takes writes again.
      await waitFor(async () => ok('activation', startedAt) >= 10 && ok('push', startedAt) >= 10, 'writes acknowledged again after the database is back', 60_000);
      await waitFor(async () => (await request(`${server.url}/healthz`, 'GET', undefined)).status === 200, '/healthz 200 again', 60_000);
    } catch (err) {
      // What the load saw, for the failure's message.
      const tally = new Map<string, number>();
      for (const o of outcomes) tally.set(`${o.kind} ${o.status} ${o.failure ?? JSON.stringify(o.body).slice(0, 120)}`, (tally.get(`${o.kind} ${o.status} ${o.failure ?? JSON.stringify(o.body).slice(0, 120)}`) ?? 0) + 1);
      throw new Error(`${(err as Error).message}\nserver exit: ${server.child.exitCode} ${server.child.signalCode}\n${[...tally].filter(([, n]) => n > 1).map(([k, n]) => `${n} × ${k}`).join('\n')}\n${log.slice(-4000)}`);
    } finally {
      loading = false;
      await Promise.all(writers);
    }

    // Every request completed: none hung to the deadline, none lost its connection.
    expect(outcomes.filter((o) => o.failure).map((o) => `${o.kind} ${o.what[0]}: ${o.failure}`)).toEqual([]);
    // Every answer was a success or a 503 saying the database is unavailable.
    const others = outcomes.filter((o) => o.status !== 200 && o.status !== 204 && !(o.status === 503 && /^the database is unavailable/.test(String((o.body as { error?: unknown } | undefined)?.error))));
    expect(others.map((o) => `${o.kind} ${o.what[0]}: ${o.status} ${JSON.stringify(o.body)}`)).toEqual([]);
    for (const o of outcomes.filter((x) => x.status === 503)) expect(Object.keys(o.body as object)).toEqual(['error']);
    // The activations: the answer said activated.
    for (const o of outcomes.filter((x) => x.kind === 'activation' && x.status === 200)) expect(o.body, o.what[0]).toMatchObject({ valid: true });

    // Acknowledged activations are there: each machine validates without activating again.
    const machines = outcomes.filter((o) => o.kind === 'activation' && o.status === 200).map((o) => o.what[0]!);
    const missing: string[] = [];
    for (let i = 0; i < machines.length; i += 16) {
      await Promise.all(
        machines.slice(i, i + 16).map(async (m) => {
          const r = await request(`${server.url}/api/v1/keys/validate`, 'POST', { key, machine_id: m });
          if (r.status !== 200 || (r.body as { code?: string }).code !== 'VALID') missing.push(`${m}: ${r.status} ${JSON.stringify(r.body)}`);
        }),
      );
    }
    expect(missing).toEqual([]);
    // Acknowledged pushes are pulled back, each row under one seq.
    const pulled: { seq: number; row_id: string }[] = [];
    for (let cursor = 0, more = true; more; ) {
      const page = await request(`${server.url}/api/v1/sync/pull`, 'POST', { cursor }, auth);
      expect(page.status).toBe(200);
      const body = page.body as { entries: { seq: number; row_id: string }[]; cursor: number; has_more: boolean };
      pulled.push(...body.entries);
      cursor = body.cursor;
      more = body.has_more;
    }
    const rows = new Set(pulled.map((e) => e.row_id));
    const lost = outcomes.filter((o) => o.kind === 'push' && o.status === 200).flatMap((o) => o.what).filter((r) => !rows.has(r));
    expect(lost).toEqual([]);
    expect(new Set(pulled.map((e) => e.seq)).size).toBe(pulled.length);

    // The log tells the operator once that the database went, and once that it is back.
    const lines = log.split('\n').filter(Boolean);
    const went = lines.filter((l) => /"msg":"database unavailable/.test(l));
    const back = lines.filter((l) => /"msg":"database available again/.test(l));
    expect(went, went.join('\n')).toHaveLength(1);
    expect(back, back.join('\n')).toHaveLength(1);
    expect(JSON.parse(went[0]!)).toMatchObject({ level: 40 });
    expect(JSON.parse(back[0]!)).toMatchObject({ level: 30 });
    // Not a line of its own for each request refused meanwhile: those are in the request log with their 503.
    const errors = lines.filter((l) => /"level":[56]0\b/.test(l));
    expect(errors, errors.slice(0, 3).join('\n')).toEqual([]);
  }, 240_000);
});

describe('the PostgreSQL store through a restart, in process', () => {
  it('a connection held by a transaction or a singleton job dies with the server without an unheard error; the job runs again after, and availability changes are told once each', async () => {
    const own = await startOwnPostgres();
    const { PgDatabase } = await import('../../../src/store/sql-pg.js');
    const { StoreUnavailableError } = await import('../../../src/store/sql.js');
    const sql = await PgDatabase.open(own.url);
    const told: string[] = [];
    sql.onAvailability((up) => told.push(up ? 'up' : 'down'));
    try {
      await sql.run('CREATE TABLE t (id INTEGER PRIMARY KEY)');
      // Both hold a pooled connection, idle between statements, when the server goes.
      let inJob!: () => void;
      const jobHeld = new Promise<void>((r) => (inJob = r));
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const job = sql.exclusive('pg-restart singleton', async () => {
        inJob();
        await gate;
        await sql.run('INSERT INTO t (id) VALUES (1)');
      });
      let inTx!: () => void;
      const txHeld = new Promise<void>((r) => (inTx = r));
      const tx = sql.transaction(async (t) => {
        await t.run('INSERT INTO t (id) VALUES (2)');
        inTx();
        await gate;
        await t.run('INSERT INTO t (id) VALUES (3)');
      });
      await Promise.all([jobHeld, txHeld]);
      await own.stop();
      release();
      // Both settle (neither waits for the server to return), each with the 503 error.
      const [jobEnd, txEnd] = await Promise.allSettled([job, tx]);
      expect(jobEnd.status === 'rejected' && jobEnd.reason).toBeInstanceOf(StoreUnavailableError);
      expect(txEnd.status === 'rejected' && txEnd.reason).toBeInstanceOf(StoreUnavailableError);
      await expect(sql.value('SELECT 1')).rejects.toBeInstanceOf(StoreUnavailableError);

      await own.start();
      await waitFor(async () => (await sql.value<number>('SELECT 1').catch(() => undefined)) === 1, 'the pool answering again', 60_000);
      // The job's advisory lock went with its connection: the singleton runs again, here or anywhere.
      expect(await sql.exclusive('pg-restart singleton', async () => void (await sql.run('INSERT INTO t (id) VALUES (4)')))).toBe(true);
      // The transaction cut short left nothing; the job's write after the loss never landed.
      expect((await sql.all<{ id: number }>('SELECT id FROM t ORDER BY id')).map((r) => r.id)).toEqual([4]);
      expect(told).toEqual(['down', 'up']);
    } finally {
      await sql.close().catch(() => undefined);
      await own.close();
    }
  }, 120_000);
});
