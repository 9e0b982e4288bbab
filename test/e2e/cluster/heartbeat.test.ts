// A heartbeat target on a cluster of three `mkt serve monitor` processes (the real binary) on one
// PostgreSQL database: all three serve the one ping key, pings spread over the three keep it on
// time and are each recorded once, silence opens one incident with one alert across the cluster,
// a ping to an instance that does not own the target resolves it with one alert, and a run started
// on one instance and never finished is decided by the owner after the grace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { serveBinary, type Served } from '../../helpers/serve-binary.js';
import { startAlertHook, type AlertHook } from '../../helpers/alert-hook.js';

const TOKEN = 'cluster-token';
let hook: AlertHook;
let dbUrl: string;
let db: pg.Client;
const dirs = [tempDir('mkt-hb-cluster-'), tempDir('mkt-hb-cluster-'), tempDir('mkt-hb-cluster-')];
const instances: Served[] = [];
let pingPath = '';

/** Pings sent by the pinger, per instance index, and when it is on. */
const pinged = [0, 0, 0];
let pinging = false;
let pinger: Promise<void> | undefined;
let firstPingAt = 0;

async function get(base: string, path: string): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- read field by field
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.status, body: await res.json() };
}

async function ping(i: number, signal = ''): Promise<void> {
  const res = await fetch(`${instances[i]!.url}${pingPath}${signal ? `/${signal}` : ''}`, { method: 'POST', body: `ping to instance ${i}\n` });
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ ok: true, target: 't' });
}

/** Pings once a second, round-robin over the instances up, until `pinging` is cleared. */
function startPinger(): void {
  pinging = true;
  pinger = (async () => {
    let k = 0;
    while (pinging) {
      const i = k++ % instances.length;
      await ping(i);
      pinged[i]!++;
      if (firstPingAt === 0) firstPingAt = Date.now();
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
}

async function stopPinger(): Promise<void> {
  pinging = false;
  await pinger;
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  return Number((await db.query(sql, params)).rows[0].count);
}

const signalSnapshots = (): Promise<number> => count("SELECT count(*) FROM snapshots WHERE target = 't' AND details LIKE '%\"signal\":%'");

/** The instance indexes that do not hold the target's lease now (and the owner's). */
async function roles(): Promise<{ owner: number; others: number[] }> {
  const ids = await Promise.all(instances.map(async (s) => (await get(s.url, '/api/peer/info')).body.cluster.instance_id as string));
  const owner = await waitFor(async () => {
    const row = (await db.query("SELECT owner FROM monitor_leases WHERE target = 't' AND owner <> '' AND expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint")).rows[0] as { owner: string } | undefined;
    const i = row ? ids.indexOf(row.owner) : -1;
    return i >= 0 ? i + 1 : undefined;
  }, 'an instance holding the lease of t');
  return { owner: owner - 1, others: [0, 1, 2].filter((i) => i !== owner - 1) };
}

const opened = (id?: number): number => hook.alerts.filter((a) => a.target === 't' && a.event === 'incident.opened' && (id === undefined || a.incident.id === id)).length;
const resolved = (id: number): number => hook.alerts.filter((a) => a.target === 't' && a.event === 'incident.resolved' && a.incident.id === id).length;

/** Waits for `n` more state turns of the target recorded after `afterMs` (each instance turn that owns it records one a second). */
async function turnsAfter(afterMs: number, n: number, status: string): Promise<void> {
  await waitFor(async () => (await count("SELECT count(*) FROM snapshots WHERE target = 't' AND ts > $1 AND status = $2 AND details IS NULL", [afterMs, status])) >= n, `${n} ${status} state turns`, 30_000);
}

beforeAll(async () => {
  hook = await startAlertHook();
  const yaml = `name: cluster\ntoken: ${TOKEN}\nrate_limit: { requests: 100000 }\nincident_threshold: 1\nalerts:\n  - url: "${hook.url}"\ntargets:\n  t:\n    heartbeat: { period: 3s, grace: 1s }\n    interval: 1s\n`;
  dbUrl = await freshDatabaseUrl();
  db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  for (const d of dirs) writeFileSync(join(d.path, 'monitor.yaml'), yaml);
  // The first instance makes the key; pinging starts at once (the target is late 4 s after its
  // first sighting), then the other two join.
  instances.push(await serveBinary('monitor', dirs[0]!.path, { MKT_DATABASE_URL: dbUrl, MKT_LOG_LEVEL: 'warn' }));
  pingPath = new URL((await get(instances[0]!.url, '/api/status/t')).body.ping_url as string).pathname;
  startPinger();
  instances.push(...(await Promise.all([1, 2].map((i) => serveBinary('monitor', dirs[i]!.path, { MKT_DATABASE_URL: dbUrl, MKT_LOG_LEVEL: 'warn' })))));
}, 120_000);

afterAll(async () => {
  pinging = false;
  await pinger?.catch(() => undefined);
  for (const s of instances) s.child.kill('SIGKILL');
  await db?.end();
  await hook?.close();
  for (const d of dirs) d.remove();
});

describe('a heartbeat target on a monitor cluster of three on one PostgreSQL', () => {
  it('all three serve the one ping key', async () => {
    expect(pingPath).toMatch(/^\/ping\/[A-Za-z0-9_-]{16,}$/);
    for (const s of instances) {
      const status = (await get(s.url, '/api/status/t')).body;
      expect(new URL(status.ping_url as string).pathname).toBe(pingPath);
      expect(status.heartbeat).toMatchObject({ period_s: 3, grace_s: 1 });
    }
  });

  it('pings spread over the three keep it on time, and each is recorded once', async () => {
    // Every instance pinged a few times, over more than two periods + grace.
    await waitFor(async () => pinged.every((n) => n >= 4), 'four pings to each instance', 60_000);
    await stopPinger();
    const sent = pinged.reduce((a, b) => a + b, 0);
    expect(await signalSnapshots()).toBe(sent);
    // Not one down verdict since the first ping (before it, startup may have been slower than the grace).
    expect(await count("SELECT count(*) FROM snapshots WHERE target = 't' AND ts >= $1 AND status <> 'operational'", [firstPingAt])).toBe(0);
    expect(await count("SELECT count(*) FROM snapshots WHERE target = 't' AND ts >= $1 AND details IS NULL", [firstPingAt])).toBeGreaterThan(0);
  });

  it('silence opens one incident with one alert across the cluster; a ping to a non-owner resolves it with one alert', async () => {
    const before = opened();
    const silentFrom = Date.now();
    const alert = await waitFor(async () => hook.alerts.slice().reverse().find((a) => a.target === 't' && a.event === 'incident.opened' && opened() > before), 'the incident.opened alert', 30_000);
    const id = alert.incident.id;
    expect(alert.incident.cause).toMatch(/^no ping since /);
    // Several more late turns (each owner turn a second apart): still one alert, one open incident.
    const openedAt = Date.now();
    await turnsAfter(openedAt, 4, 'down');
    expect(opened(id)).toBe(1);
    expect(opened()).toBe(before + 1);
    expect(await count("SELECT count(*) FROM incidents WHERE target = 't' AND ended_at IS NULL")).toBe(1);
    expect(await count("SELECT count(*) FROM snapshots WHERE target = 't' AND ts > $1 AND status = 'down'", [silentFrom])).toBeGreaterThanOrEqual(4);
    for (const s of instances) expect((await get(s.url, '/api/status/t')).body.current_incident).toMatchObject({ id, status: 'open' });

    const { others } = await roles();
    const back = Date.now();
    await ping(others[0]!);
    await waitFor(async () => resolved(id) >= 1, 'the incident.resolved alert', 30_000);
    await turnsAfter(back, 3, 'operational');
    expect(resolved(id)).toBe(1);
    expect(hook.alerts.filter((a) => a.target === 't' && a.incident.id === id).map((a) => a.event)).toEqual(['incident.opened', 'incident.resolved']);
    expect(await count("SELECT count(*) FROM incidents WHERE target = 't' AND ended_at IS NULL")).toBe(0);
  });

  it('a run started on a non-owner and never finished: the owner records it down after the grace, one alert', async () => {
    const { others } = await roles();
    const before = opened();
    await ping(others[0]!, 'start');
    const start = (await db.query("SELECT ts, checked_at FROM snapshots WHERE target = 't' AND details LIKE '%\"signal\":\"start\"%' ORDER BY ts DESC LIMIT 1")).rows[0] as { ts: string; checked_at: string };
    const S = Number(start.ts);
    const overrun = `run started at ${start.checked_at} has not finished within the grace of 1s`;
    const first = await waitFor(async () => (await db.query("SELECT ts, error FROM snapshots WHERE target = 't' AND ts > $1 AND status = 'down' ORDER BY ts LIMIT 1", [S])).rows[0] as { ts: string; error: string } | undefined, 'a down verdict after the start', 30_000);
    // Decided after the grace, and as an overrun (lateness would come only at start + 4 s).
    expect(first.error).toBe(overrun);
    expect(Number(first.ts)).toBeGreaterThan(S + 1000);
    const alert = await waitFor(async () => (opened() > before ? hook.alerts.filter((a) => a.target === 't' && a.event === 'incident.opened').at(-1) : undefined), 'the overrun incident.opened alert', 30_000);
    expect(alert.incident.cause).toBe(overrun);
    await turnsAfter(Number(first.ts), 3, 'down');
    expect(opened()).toBe(before + 1);
    // The run's end, on another instance: timed from the start, resolved once.
    await ping(others[1] ?? others[0]!);
    await waitFor(async () => resolved(alert.incident.id) >= 1, 'the overrun incident.resolved alert', 30_000);
    const end = (await db.query("SELECT response_time_ms FROM snapshots WHERE target = 't' AND details LIKE '%\"signal\":\"success\"%' ORDER BY ts DESC LIMIT 1")).rows[0] as { response_time_ms: number };
    expect(end.response_time_ms).toBeGreaterThan(1000);
    await turnsAfter(Date.now(), 2, 'operational');
    expect(resolved(alert.incident.id)).toBe(1);
    expect(opened()).toBe(before + 1);
  });
});
