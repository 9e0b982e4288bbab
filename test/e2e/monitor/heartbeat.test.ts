// Heartbeat targets end to end on a real monitor (issue 31): pings on time keep a target
// operational, a missed one is down after period + grace with one alert, a success resolves it;
// a run that never finishes, exit statuses, run logs, schedules, maintenance, and the target in
// every view a polled one has.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { startAlertHook, type Alert, type AlertHook } from '../../helpers/alert-hook.js';
import { startMonitor, type MonitorNode, type SnapshotJson } from '../../helpers/monitor-node.js';

const dir = tempDir();
const closers: (() => Promise<void> | void)[] = [];
let hook: AlertHook;
let mon: MonitorNode;

const alertsOf = (target: string, event: string): Alert[] => hook.alerts.filter((a) => a.target === target && a.event === event);

async function status(target: string): Promise<{ recent: SnapshotJson[]; latest: SnapshotJson | null; heartbeat: Record<string, unknown>; ping_url: string; current_incident?: { id: number }; incidents?: unknown[] }> {
  const r = await mon.get(`/api/status/${target}`);
  expect(r.status).toBe(200);
  return r.body;
}

/** Sends a ping to the target's own ping URL (as its status shows it) with an optional signal and log. */
async function ping(target: string, signal = '', body?: string | Buffer): Promise<{ status: number; body: { ok?: boolean; signal?: string; error?: string } }> {
  const url = (await status(target)).ping_url + (signal ? `/${signal}` : '');
  const res = await fetch(url, body === undefined ? {} : { method: 'POST', body, headers: { 'content-type': 'text/plain' } });
  // Every answer, a preformatted success or an error body, is JSON and says so.
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  return { status: res.status, body: (await res.json()) as { ok?: boolean; error?: string } };
}

/** The newest snapshot a ping with `signal` recorded (a turn may have been recorded after it). */
function signalled(recent: SnapshotJson[], signal: string): SnapshotJson {
  const s = recent.find((x) => x.details?.signal === signal);
  expect(s, `a snapshot of the ${signal} signal`).toBeDefined();
  return s!;
}

/** Waits until `n` snapshots checked after `after` satisfy `match`, and returns them. */
async function snapshotsAfter(target: string, after: string, n: number, match: (s: SnapshotJson) => boolean, what: string): Promise<SnapshotJson[]> {
  return waitFor(async () => {
    const later = (await status(target)).recent.filter((s) => s.checked_at > after);
    return later.filter(match).length >= n ? later : undefined;
  }, what, 60_000);
}

beforeAll(async () => {
  hook = await startAlertHook();
  closers.push(hook.close);
  const yaml = `
name: hb
token: mon-token
rate_limit: { requests: 1000000 }
dashboard: true
alerts:
  - url: ${hook.url}
targets:
  ontime:
    label: Nightly backup
    heartbeat: { period: 1h, grace: 1h }
    interval: 200ms
  late:
    heartbeat: { period: 2s, grace: 1s }
    interval: 1s
    incident_threshold: 1
  started:
    heartbeat: { period: 1h, grace: 1s }
    interval: 200ms
  codes:
    heartbeat: { period: 1h, grace: 1h }
    interval: 1h
  every2s:
    heartbeat: { schedule: "*/2 * * * * *", grace: 1s }
    interval: 500ms
  nightly:
    heartbeat: { schedule: "0 3 * * *", timezone: Europe/Berlin, grace: 30m }
    interval: 1h
  flappy:
    heartbeat: { period: 1h, grace: 1h }
    interval: 1h
    incident_threshold: 1
  patched:
    heartbeat: { period: 1s, grace: 1s }
    interval: 200ms
    incident_threshold: 1
maintenance:
  - name: patching
    targets: [patched]
    timezone: UTC
    from: 2020-01-01T00:00
    to: 2099-01-01T00:00
`;
  mon = await startMonitor(dir.path, yaml, { alertBackoffMs: [50, 50] });
  closers.unshift(() => mon.stop());
}, 60_000);

afterAll(async () => {
  for (const c of closers) await c();
  dir.remove();
});

describe('heartbeat targets: on time, late, back (issue 31 "Snapshots")', () => {
  it('pings within the period keep the target operational; its state is recorded every interval', async () => {
    const first = await ping('ontime');
    expect(first).toEqual({ status: 200, body: { ok: true, target: 'ontime', signal: 'success' } });
    const at = (await status('ontime')).heartbeat.last_ping_at as string;
    const later = await snapshotsAfter('ontime', at, 3, () => true, 'three turns of ontime after its ping');
    expect(later.every((s) => s.status === 'operational')).toBe(true);
    expect((await ping('ontime')).status).toBe(200);
    const s = await status('ontime');
    expect(signalled(s.recent, 'success')).toMatchObject({ status: 'operational' });
    expect(s.heartbeat).toMatchObject({ period_s: 3600, grace_s: 3600, last_ok: true, running: false });
    expect(Date.parse(s.heartbeat.late_after as string)).toBe(Date.parse(s.heartbeat.last_ping_at as string) + 7_200_000);
    expect(s.current_incident).toBeUndefined();
  });

  it('no ping within period + grace: down "no ping since ...", the incident opens, one alert through later turns; a success resolves it with one alert', async () => {
    // Never pinged: lateness counts from the first sighting, 2 s + 1 s after the monitor began.
    const down = await waitFor(async () => (await status('late')).recent.find((s) => s.status === 'down'), 'a down snapshot of late', 60_000);
    expect(down.error).toMatch(/^no ping since the monitor began watching at \d{4}-\d\d-\d\dT/);
    await waitFor(async () => (await status('late')).current_incident, 'the incident on late');
    await waitFor(async () => alertsOf('late', 'incident.opened').length >= 1, 'the opening alert', 30_000);
    // Down turn after down turn: the incident grows, no second alert.
    const seen = (await status('late')).latest!.checked_at;
    await snapshotsAfter('late', seen, 3, (s) => s.status === 'down', 'three more down turns of late');
    expect(alertsOf('late', 'incident.opened')).toHaveLength(1);
    const opened = alertsOf('late', 'incident.opened')[0]!;
    expect(opened.incident.cause).toMatch(/^no ping since/);

    expect((await ping('late')).status).toBe(200);
    const back = await status('late');
    const success = signalled(back.recent, 'success');
    expect(success).toMatchObject({ status: 'operational' });
    expect(back.current_incident).toBeUndefined();
    await waitFor(async () => alertsOf('late', 'incident.resolved').length >= 1, 'the resolved alert', 30_000);
    // One more turn recorded after the resolution: still one resolution of that incident.
    await snapshotsAfter('late', success.checked_at, 1, () => true, 'a turn of late after the success');
    expect(alertsOf('late', 'incident.resolved').filter((a) => a.incident.id === opened.incident.id)).toHaveLength(1);
  });
});

describe('the incidents a status lists (spec: "recent incidents 10", TargetStatus.incidents)', () => {
  it('twelve incidents, each opened by a failed run and resolved by the next: the status lists the ten newest, newest first', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) {
      // Each ping is answered once its snapshot and the incident it opens or resolves are stored.
      expect((await ping('flappy', 'fail')).status).toBe(200);
      const open = await status('flappy');
      expect(open.current_incident, `incident ${i + 1} open`).toBeDefined();
      ids.push(open.current_incident!.id);
      expect((await ping('flappy')).status).toBe(200);
      expect((await status('flappy')).current_incident, `incident ${i + 1} resolved`).toBeUndefined();
    }
    expect(new Set(ids).size).toBe(12);
    const listed = (await status('flappy')).incidents as { id: number; status: string }[];
    expect(listed.map((x) => x.id)).toEqual(ids.slice(2).reverse());
    expect(listed.every((x) => x.status === 'resolved')).toBe(true);
  });
});

describe('a run that starts and never finishes (issue 31 "Snapshots")', () => {
  it('/start then nothing: down "has not finished within the grace" after the grace; a success later is timed as the run', async () => {
    const r = await ping('started', 'start');
    expect(r).toEqual({ status: 200, body: { ok: true, target: 'started', signal: 'start' } });
    const s0 = await status('started');
    expect(s0.heartbeat).toMatchObject({ running: true });
    // The start itself is no verdict: it is recorded operational and opens nothing.
    expect(signalled(s0.recent, 'start')).toMatchObject({ status: 'operational' });
    const startedAt = s0.heartbeat.last_start_at as string;
    const down = await waitFor(async () => (await status('started')).recent.find((s) => s.status === 'down'), 'the overrun', 60_000);
    expect(down.error).toBe(`run started at ${startedAt} has not finished within the grace of 1s`);
    expect(Date.parse(down.checked_at)).toBeGreaterThan(Date.parse(startedAt) + 1000);

    expect((await ping('started')).status).toBe(200);
    const s1 = await status('started');
    const done = signalled(s1.recent, 'success');
    expect(done.status).toBe('operational');
    expect(done.response_time_ms).toBe(Date.parse(s1.heartbeat.last_ping_at as string) - Date.parse(startedAt));
    expect(done.details!.duration_ms).toBe(done.response_time_ms);
    expect(done.response_time_ms).toBeGreaterThan(1000);
    expect(s1.heartbeat.running).toBe(false);
  });
});

/**
 * The newest snapshot a ping recorded, and how many there are: the target's own state turns
 * (its first comes within 2 s of the start) record snapshots too, and may land between.
 */
const signalOf = (st: { recent: SnapshotJson[] }): SnapshotJson | undefined => st.recent.find((x) => x.details?.signal !== undefined);
const signalCount = (st: { recent: SnapshotJson[] }): number => st.recent.filter((x) => x.details?.signal !== undefined).length;

describe('exit statuses and logs (issue 31 "Signals")', () => {
  it('/0 is operational, /3 down naming the status, /fail down; /256 and /abc are 404 like an unknown key', async () => {
    expect((await ping('codes', '0')).body).toMatchObject({ ok: true, signal: '0' });
    expect(signalOf(await status('codes'))).toMatchObject({ status: 'operational', details: { signal: '0', exit_code: 0 } });
    expect((await ping('codes', '3')).body).toMatchObject({ ok: true, signal: '3' });
    const three = await status('codes');
    expect(signalOf(three)).toMatchObject({ status: 'down', details: { signal: '3', exit_code: 3 } });
    expect(signalOf(three)!.error).toMatch(/exited with status 3/);
    expect(three.heartbeat).toMatchObject({ last_ok: false });
    expect((await ping('codes', 'fail')).body).toMatchObject({ ok: true, signal: 'fail' });
    const failed = signalOf(await status('codes'))!;
    expect(failed).toMatchObject({ status: 'down', details: { signal: 'fail' } });
    expect(failed.error).toMatch(/signalled failure/);
    const before = signalCount(await status('codes'));
    for (const bad of ['256', 'abc', '-1', '03']) {
      const r = await ping('codes', bad);
      expect(r.status, bad).toBe(404);
      expect(r.body.error).toMatch(/no heartbeat target has this ping URL/);
    }
    expect(signalCount(await status('codes'))).toBe(before);
    // A success after failures: operational again.
    await ping('codes', '0');
    expect(signalOf(await status('codes'))!.status).toBe('operational');
  });

  it('a POST body is the run\'s log: kept whole up to 10 KiB, else its last 10 KiB and log_truncated', async () => {
    expect((await ping('codes', '0', 'backup done: 42 files\n')).status).toBe(200);
    expect(signalOf(await status('codes'))!.details).toEqual({ signal: '0', exit_code: 0, log: 'backup done: 42 files\n' });

    const lines = Array.from({ length: 2048 }, (_, i) => `line ${String(i).padStart(4, '0')}\n`).join(''); // 20 KiB
    expect(Buffer.byteLength(lines)).toBe(20 * 1024);
    expect((await ping('codes', '', lines)).status).toBe(200);
    const d = signalOf(await status('codes'))!.details!;
    expect(d.log_truncated).toBe(true);
    expect(d.log).toBe(lines.slice(-10 * 1024));

    // Two-byte characters with one byte before them: the 10 KiB cut falls inside a character,
    // and the kept text starts at the next whole one.
    const utf = 'x' + 'é'.repeat(10 * 1024);
    expect((await ping('codes', 'fail', utf)).status).toBe(200);
    const u = signalOf(await status('codes'))!.details!;
    expect(u.log_truncated).toBe(true);
    const kept = u.log as string;
    expect(kept).not.toContain('\uFFFD');
    expect(kept).toBe('é'.repeat(kept.length));
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(10 * 1024);
    expect(Buffer.byteLength(kept)).toBeGreaterThanOrEqual(10 * 1024 - 1);
  });
});

describe('schedules (issue 31 "a cron expression")', () => {
  it('late_after is the next schedule time after the last ping plus the grace; missed, the target is down', async () => {
    expect((await ping('every2s')).status).toBe(200);
    const hb = (await status('every2s')).heartbeat;
    const last = Date.parse(hb.last_ping_at as string);
    const due = Date.parse(hb.late_after as string) - 1000;
    expect(due % 2000).toBe(0);
    expect(due).toBeGreaterThan(last);
    expect(due).toBeLessThanOrEqual(last + 2000);
    const down = await waitFor(async () => (await status('every2s')).recent.find((s) => s.status === 'down' && Date.parse(s.checked_at) > last), 'every2s late', 60_000);
    expect(down.error).toBe(`no ping since ${hb.last_ping_at as string}`);
    expect(Date.parse(down.checked_at)).toBeGreaterThan(due + 1000);
  });

  it('a daily schedule in Europe/Berlin: late at the next 03:00 there plus the grace', async () => {
    const hb = (await status('nightly')).heartbeat;
    expect(hb).toMatchObject({ schedule: '0 3 * * *', timezone: 'Europe/Berlin', grace_s: 1800 });
    const due = Date.parse(hb.late_after as string) - 1_800_000;
    const since = Date.parse(hb.watching_since as string);
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(due)).toBe('03:00:00');
    expect(due).toBeGreaterThan(since);
    // The next 03:00, not a later one (a day is at most 25 hours across a DST change).
    expect(due - since).toBeLessThanOrEqual(25 * 3_600_000);
  });
});

describe('maintenance windows apply (issue 31 "maintenance windows apply")', () => {
  it('a late target inside a window records maintenance-tagged down snapshots and opens no incident', async () => {
    const downs = await waitFor(async () => {
      const r = (await status('patched')).recent.filter((s) => s.status === 'down');
      return r.length >= 3 ? r : undefined;
    }, 'three late turns of patched', 60_000);
    expect(downs.every((s) => s.maintenance === true)).toBe(true);
    expect(downs[0]!.error).toMatch(/^no ping since/);
    const s = await status('patched');
    expect(s.current_incident).toBeUndefined();
    expect(s.incidents).toBeUndefined();
    expect(hook.alerts.filter((a) => a.target === 'patched')).toEqual([]);
  });
});

describe('a heartbeat target in every view of a polled one (issue 31 "treat heartbeat targets like polled ones")', () => {
  it('shows in /api/status, /metrics, the badges, the report and the dashboard', async () => {
    await ping('ontime');
    const all = await mon.get('/api/status');
    expect(all.body.targets.ontime).toMatchObject({ label: 'Nightly backup', latest: { status: 'operational' } });
    const metrics = (await mon.get('/metrics')).body as string;
    expect(metrics).toMatch(/^mkt_monitor_\w+\{[^}]*target="ontime"[^}]*\} /m);
    const badge = await waitFor(async () => {
      const r = await mon.get('/api/badge/ontime/status.svg');
      return r.status === 200 && (r.body as string).includes('operational') ? r : undefined;
    }, 'the status badge of ontime');
    expect(badge.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    const uptime = await mon.get('/api/badge/ontime/uptime.svg?window=24h');
    expect(uptime.status).toBe(200);
    expect(uptime.body as string).toMatch(/\d+(\.\d+)?%/);
    const report = await mon.get('/api/report/ontime');
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({ target: 'ontime' });
    const page = await mon.get('/', null);
    expect(page.status).toBe(200);
    expect(page.body as string).toContain('Nightly backup');
  });
});
