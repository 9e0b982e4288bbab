// A monitor cluster of two `mkt serve monitor` processes (the real binary) on one PostgreSQL
// server of the test's own, under a steady load (pings to a heartbeat target and status reads on
// both instances, HTTP targets checked against a local server), while PostgreSQL stops and starts
// again on the same data dir and port: every request completes (no hang), writes the database
// cannot take answer 503 {"error"}, /healthz is 503 while it is gone and 200 after, both processes
// answer 2xx again by themselves, every acknowledged ping is recorded, and the cluster goes on:
// new snapshots for the polled targets, every lease held by exactly one instance, each target
// checked by one instance a turn.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { startOwnPostgres, type OwnPostgres } from '../../helpers/pg-global.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { serveBinary, type Served } from '../../helpers/serve-binary.js';

const TOKEN = 'restart-token';
/** Checks every 10 s, so the cluster's lease is 10 s: a loaded machine does not lapse it by being slow. */
const INTERVAL_MS = 10_000;
const POLLED = ['a', 'b', 'c', 'd'];
/** Far above any answer a loaded machine takes, even through an outage: an abort means a hang. */
const DEADLINE_MS = 20_000;

type Kind = 'ping' | 'status';
interface Outcome {
  kind: Kind;
  instance: number;
  /** A ping's body (the run's log the snapshot keeps). */
  id: string;
  status: number;
  body: unknown;
  failure?: string;
  sentAt: number;
}

/** Hits per polled target's path (the local server's clock). */
const hits = new Map<string, number[]>();
let targetServer: Server;
let own: OwnPostgres;
let dbUrl = '';
const dirs = [tempDir('mkt-pg-restart-mon-'), tempDir('mkt-pg-restart-mon-')];
const instances: Served[] = [];
const logs = ['', ''];

function listen(s: Server): Promise<number> {
  return new Promise((r) => s.listen(0, '127.0.0.1', () => r((s.address() as AddressInfo).port)));
}

/** A request bounded by DEADLINE_MS; a hang or a dropped connection is an outcome, not a throw. */
async function request(url: string, method: string, body?: string): Promise<{ status: number; body: unknown; failure?: string }> {
  try {
    const res = await fetch(url, { method, headers: { authorization: `Bearer ${TOKEN}` }, body, signal: AbortSignal.timeout(DEADLINE_MS) });
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

/** A query on the test's own connection, opened for it (the server goes away in between). */
async function query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}

const LEASES = "SELECT target, owner FROM monitor_leases WHERE owner <> '' AND expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint";

beforeAll(async () => {
  targetServer = createServer((req, res) => {
    const name = (req.url ?? '/').slice(1);
    hits.set(name, [...(hits.get(name) ?? []), Date.now()]);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  });
  const port = await listen(targetServer);
  own = await startOwnPostgres();
  const c = new pg.Client({ connectionString: own.url });
  await c.connect();
  await c.query('CREATE DATABASE monitor');
  await c.end();
  dbUrl = own.url.replace(/\/postgres$/, '/monitor');
  const polled = POLLED.map((n) => `  ${n}: { url: "http://127.0.0.1:${port}/${n}", interval: ${INTERVAL_MS}ms, timeout: 2s }`).join('\n');
  // The heartbeat's period is far longer than the outage: its verdicts stay on time throughout.
  const yaml = `name: restart\ntoken: ${TOKEN}\nrate_limit: { requests: 1000000 }\ntargets:\n${polled}\n  hb:\n    heartbeat: { period: 10m, grace: 5m }\n    interval: ${INTERVAL_MS}ms\n`;
  for (const d of dirs) writeFileSync(join(d.path, 'monitor.yaml'), yaml);
  // One after the other: the first creates the schema.
  for (const [i, d] of dirs.entries()) {
    const s = await serveBinary('monitor', d.path, { MKT_DATABASE_URL: dbUrl, MKT_LOG_LEVEL: 'info' });
    s.child.stdout!.on('data', (b: Buffer) => (logs[i] += b.toString()));
    s.child.stderr!.on('data', (b: Buffer) => (logs[i] += b.toString()));
    instances.push(s);
  }
}, 120_000);

afterAll(async () => {
  for (const s of instances) s.child.kill('SIGKILL');
  await own?.close();
  targetServer?.closeAllConnections();
  await new Promise((r) => targetServer?.close(r));
  for (const d of dirs) d.remove();
});

/** Every instance id, from each instance's /api/peer/info. */
async function instanceIds(): Promise<string[]> {
  return Promise.all(instances.map(async (s) => ((await request(`${s.url}/api/peer/info`, 'GET')).body as { cluster: { instance_id: string } }).cluster.instance_id));
}

/** Waits until every target's lease is held, by one of the two instances, shared evenly (3 and 2). */
async function leasesSettled(ids: string[]): Promise<void> {
  const all = [...POLLED, 'hb'];
  await waitFor(
    async () => {
      const rows = await query<{ target: string; owner: string }>(LEASES);
      const per = ids.map((id) => rows.filter((r) => r.owner === id).length);
      return rows.length === all.length && rows.every((r) => ids.includes(r.owner)) && per.every((n) => n === 2 || n === 3);
    },
    'every lease held, shared by the two instances',
    90_000,
  );
}

describe('monitor cluster: PostgreSQL restarts under load', () => {
  it('answers 503 {"error"} while the database is gone, then both instances resume checking and recording by themselves', async () => {
    const pingPath = new URL(((await request(`${instances[0]!.url}/api/status/hb`, 'GET')).body as { ping_url: string }).ping_url).pathname;
    const ids = await instanceIds();
    expect(new Set(ids).size).toBe(2);
    await leasesSettled(ids);

    const outcomes: Outcome[] = [];
    let loading = true;
    let n = 0;
    const loops: Promise<void>[] = [];
    for (const i of [0, 1]) {
      // Two pingers and one status reader per instance.
      for (let p = 0; p < 2; p++) {
        loops.push(
          (async () => {
            while (loading) {
              const id = `ping-${i}-${n++}`;
              const sentAt = Date.now();
              const r = await request(`${instances[i]!.url}${pingPath}`, 'POST', `${id}\n`);
              outcomes.push({ kind: 'ping', instance: i, id, sentAt, ...r });
              await new Promise((res) => setTimeout(res, 50));
            }
          })(),
        );
      }
      loops.push(
        (async () => {
          while (loading) {
            const sentAt = Date.now();
            const r = await request(`${instances[i]!.url}/api/status`, 'GET');
            outcomes.push({ kind: 'status', instance: i, id: '', sentAt, ...r });
            await new Promise((res) => setTimeout(res, 100));
          }
        })(),
      );
    }
    const count = (kind: Kind, status: number, instance: number, after = 0): number => outcomes.filter((o) => o.kind === kind && o.status === status && o.instance === instance && o.sentAt >= after).length;
    let stoppedAt = 0;
    let startedAt = 0;
    try {
      await waitFor(async () => count('ping', 200, 0) >= 10 && count('ping', 200, 1) >= 10 && count('status', 200, 0) >= 3 && count('status', 200, 1) >= 3, 'pings and reads answered before the outage', 60_000);
      for (const s of instances) expect((await request(`${s.url}/healthz`, 'GET')).status).toBe(200);

      await own.stop();
      stoppedAt = Date.now();
      await waitFor(async () => count('ping', 503, 0, stoppedAt) >= 5 && count('ping', 503, 1, stoppedAt) >= 5, '503 answers to pings on both instances while the database is down', 60_000);
      for (const s of instances) {
        const health = await request(`${s.url}/healthz`, 'GET');
        expect(health.status).toBe(503);
        expect(health.body).toEqual({ error: expect.stringMatching(/^the database is unavailable/) as string });
      }

      await own.start();
      startedAt = Date.now();
      // The same processes, without a restart of their own, take pings again.
      await waitFor(async () => count('ping', 200, 0, startedAt) >= 10 && count('ping', 200, 1, startedAt) >= 10 && count('status', 200, 0, startedAt) >= 3 && count('status', 200, 1, startedAt) >= 3, 'pings and reads answered again after the database is back', 60_000);
      for (const s of instances) await waitFor(async () => (await request(`${s.url}/healthz`, 'GET')).status === 200, '/healthz 200 again', 60_000);
    } catch (err) {
      const tally = new Map<string, number>();
      for (const o of outcomes) {
        const k = `${o.kind} ${o.instance} ${o.status} ${o.failure ?? JSON.stringify(o.body).slice(0, 100)}`;
        tally.set(k, (tally.get(k) ?? 0) + 1);
      }
      throw new Error(`${(err as Error).message}\nexits: ${instances.map((s) => `${s.child.exitCode}/${s.child.signalCode}`).join(' ')}\n${[...tally].map(([k, c]) => `${c} × ${k}`).join('\n')}\n${logs.map((l) => l.slice(-3000)).join('\n---\n')}`);
    } finally {
      loading = false;
      await Promise.all(loops);
    }

    // Every request completed, each a success or a 503 saying the database is unavailable.
    expect(outcomes.filter((o) => o.failure).map((o) => `${o.kind} ${o.instance}: ${o.failure}`)).toEqual([]);
    const others = outcomes.filter((o) => o.status !== 200 && !(o.status === 503 && /^the database is unavailable/.test(String((o.body as { error?: unknown } | undefined)?.error))));
    expect(others.map((o) => `${o.kind} ${o.instance}: ${o.status} ${JSON.stringify(o.body).slice(0, 300)}`)).toEqual([]);
    for (const o of outcomes.filter((x) => x.status === 503)) expect(Object.keys(o.body as object)).toEqual(['error']);

    // Every acknowledged ping is recorded: its log is in a snapshot of the heartbeat target.
    const logged = new Set((await query<{ details: string }>("SELECT details FROM snapshots WHERE target = 'hb' AND details LIKE '%\"signal\":%'")).map((r) => String((JSON.parse(r.details) as { log?: string }).log ?? '').trim()));
    const lost = outcomes.filter((o) => o.kind === 'ping' && o.status === 200 && !logged.has(o.id)).map((o) => o.id);
    expect(lost).toEqual([]);

    // The cluster goes on: new snapshots for every polled target, recorded after the restart.
    await waitFor(
      async () => {
        const rows = await query<{ target: string; n: string }>('SELECT target, count(*) AS n FROM snapshots WHERE ts > $1 GROUP BY target', [startedAt]);
        return POLLED.every((t) => Number(rows.find((r) => r.target === t)?.n ?? 0) >= 2);
      },
      'two new snapshots of every polled target after the restart',
      90_000,
    );
    // Every lease held by exactly one of the two (the same) instances, shared between them.
    expect(await instanceIds()).toEqual(ids);
    await leasesSettled(ids);
    // Once settled, each target is checked by one instance a turn: never two checks within half an interval.
    const from = Date.now();
    await waitFor(async () => POLLED.every((t) => (hits.get(t) ?? []).filter((x) => x > from).length >= 3), 'three more turns of every polled target', 90_000);
    for (const t of POLLED) {
      const seen = (hits.get(t) ?? []).filter((x) => x > from);
      for (let k = 1; k < seen.length; k++) expect(seen[k]! - seen[k - 1]!, `${t}: two checks ${seen[k]! - seen[k - 1]!} ms apart`).toBeGreaterThan(INTERVAL_MS / 2);
    }

    // Each instance's log: one warning that the database went, one line that it is back.
    for (const log of logs) {
      const lines = log.split('\n').filter(Boolean);
      const went = lines.filter((l) => /"msg":"database unavailable/.test(l));
      const back = lines.filter((l) => /"msg":"database available again/.test(l));
      expect(went, went.join('\n')).toHaveLength(1);
      expect(back, back.join('\n')).toHaveLength(1);
      expect(JSON.parse(went[0]!)).toMatchObject({ level: 40 });
      expect(JSON.parse(back[0]!)).toMatchObject({ level: 30 });
      // No check and no lease round logged a warning or an error of its own while it was down.
      expect(lines.filter((l) => /"level":(40|50)/.test(l) && /check failed to record|lease round failed/.test(l))).toEqual([]);
    }
  }, 400_000);

  it('/healthz is public and hidden from the API document, on SQLite too', async () => {
    const dir = tempDir('mkt-healthz-mon-');
    writeFileSync(join(dir.path, 'monitor.yaml'), `name: solo\ntoken: ${TOKEN}\ntargets: {}\n`);
    const s = await serveBinary('monitor', dir.path, {});
    try {
      // No token: a probe of a load balancer has none.
      const res = await fetch(`${s.url}/healthz`, { signal: AbortSignal.timeout(DEADLINE_MS) });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok', engine: 'sqlite' });
      for (const i of instances) {
        const cluster = await fetch(`${i.url}/healthz`, { signal: AbortSignal.timeout(DEADLINE_MS) });
        expect(cluster.status).toBe(200);
        expect(await cluster.json()).toEqual({ status: 'ok', engine: 'postgres' });
      }
      const doc = (await request(`${s.url}/openapi.json`, 'GET')).body as { paths: Record<string, unknown> };
      expect(Object.keys(doc.paths)).toContain('/api/health');
      expect(Object.keys(doc.paths)).not.toContain('/healthz');
    } finally {
      s.child.kill('SIGKILL');
      await s.exited;
      dir.remove();
    }
  });
});
