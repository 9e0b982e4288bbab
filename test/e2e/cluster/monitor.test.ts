// Three `mkt serve monitor` processes (the real binary) on one PostgreSQL database, checking 50
// targets served by one local HTTP server that notes every hit: each target is checked once a
// turn by one instance, the leases spread evenly, an incident opens and resolves once with one
// alert per transition, a SIGKILLed instance's targets resume within two intervals, a restart of
// all three keeps history and the open incident, and a config that differs is reported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { freshDatabaseUrl } from '../../helpers/pg.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { serveBinary, type Served } from '../../helpers/serve-binary.js';
import { startAlertHook, type AlertHook } from '../../helpers/alert-hook.js';

const TARGETS = 50;
const INTERVAL_MS = 2_000;
const TOKEN = 'cluster-token';
const names = [...Array(TARGETS)].map((_, i) => `t${String(i).padStart(2, '0')}`);

/** Hits per target path, and the paths answering 500. */
const hits = new Map<string, number[]>();
const failing = new Set<string>();
let targetServer: Server;
let hook: AlertHook;
let dbUrl: string;
let db: pg.Client;
const dirs = [tempDir('mkt-mon-cluster-'), tempDir('mkt-mon-cluster-'), tempDir('mkt-mon-cluster-')];
let instances: (Served | undefined)[] = [];

function listen(s: Server): Promise<number> {
  return new Promise((r) => s.listen(0, '127.0.0.1', () => r((s.address() as AddressInfo).port)));
}

function config(targetPort: number, alertUrl: string, extra = ''): string {
  const targets = names.map((n) => `  ${n}: { url: "http://127.0.0.1:${targetPort}/${n}", interval: ${INTERVAL_MS}ms, timeout: 1500ms }`).join('\n');
  return `name: cluster\ntoken: ${TOKEN}\nrate_limit: { requests: 100000 }\nincident_threshold: 2\nalerts:\n  - url: "${alertUrl}"\ntargets:\n${targets}\n${extra}`;
}

let yaml = '';

async function start(i: number): Promise<Served> {
  writeFileSync(join(dirs[i]!.path, 'monitor.yaml'), yaml);
  const s = await serveBinary('monitor', dirs[i]!.path, { MKT_DATABASE_URL: dbUrl, MKT_LOG_LEVEL: 'warn' });
  instances[i] = s;
  return s;
}

async function get(base: string, path: string): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- read field by field
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.status, body: await res.json() };
}

/** Each live instance's id and lease count, from /api/peer/info on the first live one. */
async function cluster(): Promise<{ id: string; leases: number; same_config: boolean }[]> {
  const live = instances.find((s) => s && s.child.exitCode === null && s.child.signalCode === null)!;
  return (await get(live.url, '/api/peer/info')).body.cluster.instances;
}

async function owners(): Promise<Map<string, string>> {
  const rows = (await db.query("SELECT target, owner FROM monitor_leases WHERE owner <> '' AND expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint")).rows as { target: string; owner: string }[];
  return new Map(rows.map((r) => [r.target, r.owner]));
}

/** Waits until `n` instances share every lease evenly (each holds floor or ceil of 50 / n). */
async function settled(n: number): Promise<void> {
  await waitFor(
    async () => {
      const c = await cluster().catch(() => []);
      const total = c.reduce((s, x) => s + x.leases, 0);
      return c.length === n && total === TARGETS && c.every((x) => x.leases >= Math.floor(TARGETS / n) && x.leases <= Math.ceil(TARGETS / n));
    },
    `${n} instances sharing the leases evenly`,
    30_000,
  );
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  targetServer = createServer((req, res) => {
    const name = (req.url ?? '/').slice(1);
    const list = hits.get(name) ?? [];
    list.push(Date.now());
    hits.set(name, list);
    if (failing.has(name)) return res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  });
  hook = await startAlertHook();
  yaml = config(await listen(targetServer), hook.url);
  dbUrl = await freshDatabaseUrl();
  db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  await Promise.all([0, 1, 2].map(start));
}, 120_000);

afterAll(async () => {
  for (const s of instances) s?.child.kill('SIGKILL');
  await db?.end();
  targetServer?.closeAllConnections();
  await new Promise((r) => targetServer?.close(r));
  await hook?.close();
  for (const d of dirs) d.remove();
});

describe('a monitor cluster of three on one PostgreSQL', () => {
  it('checks each of 50 targets once a turn, with the leases spread evenly', async () => {
    await settled(3);
    // Past the hand-overs of the start: a few turns of steady state.
    await sleep(INTERVAL_MS);
    const from = Date.now();
    await sleep(5 * INTERVAL_MS);
    const to = Date.now();
    for (const n of names) {
      const seen = (hits.get(n) ?? []).filter((t) => t >= from && t < to);
      // One check a turn (±10 % jitter): 4 to 6 in five turns, never two within half a turn.
      expect(seen.length, `${n}: ${seen.length} checks in 5 turns`).toBeGreaterThanOrEqual(4);
      expect(seen.length, `${n}: ${seen.length} checks in 5 turns`).toBeLessThanOrEqual(6);
      for (let k = 1; k < seen.length; k++) expect(seen[k]! - seen[k - 1]!, `${n}: checks ${seen[k]! - seen[k - 1]!} ms apart`).toBeGreaterThan(INTERVAL_MS / 2);
    }
    // Every instance serves the whole API from the shared store, whoever checked.
    for (const s of instances) {
      const all = (await get(s!.url, '/api/status')).body.targets;
      expect(Object.keys(all).sort()).toEqual(names);
      for (const n of names) expect(all[n].latest?.status, n).toBe('operational');
    }
    expect((await cluster()).every((c) => c.same_config)).toBe(true);
  });

  it('opens and resolves an incident once, with one alert per transition', async () => {
    failing.add('t07');
    await waitFor(async () => hook.alerts.some((a) => a.event === 'incident.opened' && a.target === 't07'), 'the incident.opened alert', 20_000);
    for (const s of instances) expect((await get(s!.url, '/api/status/t07')).body.current_incident?.status).toBe('open');
    failing.delete('t07');
    await waitFor(async () => hook.alerts.some((a) => a.event === 'incident.resolved' && a.target === 't07'), 'the incident.resolved alert', 20_000);
    await sleep(2 * INTERVAL_MS); // time for a second alert, were one to come
    expect(hook.alerts.filter((a) => a.target === 't07').map((a) => a.event)).toEqual(['incident.opened', 'incident.resolved']);
    expect(Number((await db.query("SELECT count(*) FROM incidents WHERE target = 't07'")).rows[0].count)).toBe(1);
  });

  it('SIGKILL of an instance: its targets are checked again within two intervals, by the other two', async () => {
    const victim = instances[1]!;
    const id = (await get(victim.url, '/api/peer/info')).body.cluster.instance_id as string;
    const theirs = [...(await owners())].filter(([, o]) => o === id).map(([t]) => t);
    expect(theirs.length).toBeGreaterThanOrEqual(16);
    victim.child.kill('SIGKILL');
    await victim.exited;
    const killedAt = Date.now();
    instances[1] = undefined;
    await sleep(2 * INTERVAL_MS + 500);
    for (const t of theirs) {
      const after = (hits.get(t) ?? []).filter((x) => x > killedAt);
      expect(after.length, `${t} not checked since the kill`).toBeGreaterThan(0);
      expect(after[0]! - killedAt, `${t} resumed ${after[0]! - killedAt} ms after the kill`).toBeLessThanOrEqual(2 * INTERVAL_MS);
    }
    await settled(2);
  });

  it('a restart of all three keeps history and the open incident, without alerting it again', async () => {
    failing.add('t11');
    await waitFor(async () => hook.alerts.some((a) => a.event === 'incident.opened' && a.target === 't11'), 'the t11 incident.opened alert', 20_000);
    const live = instances.find(Boolean)!;
    const before = (await get(live.url, '/api/status/t11')).body;
    expect(before.current_incident.status).toBe('open');
    for (const s of instances) {
      if (!s) continue;
      s.child.kill('SIGTERM');
      await s.exited;
    }
    instances = [];
    await Promise.all([0, 1, 2].map(start));
    await settled(3);
    const after = (await get(instances[0]!.url, '/api/status/t11')).body;
    expect(after.current_incident.id).toBe(before.current_incident.id);
    expect(after.current_incident.started_at).toBe(before.current_incident.started_at);
    // History from before the restart is still there.
    expect(after.uptime_24h).not.toBeNull();
    expect((await db.query("SELECT count(*) FROM snapshots WHERE target = 't00' AND ts < $1", [Date.now() - 10_000])).rows[0].count).not.toBe('0');
    failing.delete('t11');
    await waitFor(async () => hook.alerts.some((a) => a.event === 'incident.resolved' && a.target === 't11'), 'the t11 incident.resolved alert', 20_000);
    await sleep(INTERVAL_MS);
    expect(hook.alerts.filter((a) => a.target === 't11').map((a) => a.event)).toEqual(['incident.opened', 'incident.resolved']);
  });

  it('an instance with a different configuration is reported in /api/peer/info and the log', async () => {
    const s = instances[2]!;
    let log = '';
    s.child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
    s.child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
    writeFileSync(join(dirs[2]!.path, 'monitor.yaml'), yaml.replace('incident_threshold: 2', 'incident_threshold: 3'));
    s.child.kill('SIGHUP');
    await waitFor(async () => (await cluster()).some((c) => !c.same_config), 'the differing configuration shown', 10_000);
    const info = (await get(instances[0]!.url, '/api/peer/info')).body.cluster;
    expect(info.consistent).toBe(false);
    expect(info.instances.filter((c: { same_config: boolean }) => !c.same_config)).toHaveLength(1);
    await waitFor(async () => /different configurations/.test(log), 'the warning in the log', 10_000);
  });
});
