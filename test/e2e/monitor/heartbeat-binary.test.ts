// Heartbeat targets with the real binary (`mkt serve monitor`, issue 31): on time, late (one
// alert), back (resolved); and a run started before a restart still outstanding after it, under
// the same ping URL, down once its grace is over. The key is in none of the server's output.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serveBinary, type Served } from '../../helpers/serve-binary.js';
import { startAlertHook, type Alert, type AlertHook } from '../../helpers/alert-hook.js';
import type { SnapshotJson } from '../../helpers/monitor-node.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';

interface Status {
  recent: SnapshotJson[];
  heartbeat: Record<string, unknown>;
  ping_url: string;
  current_incident?: { id: number };
}

const dir = tempDir();
const dataDir = join(dir.path, 'data');
let hook: AlertHook;
let server: Served;
/** Everything the server processes wrote after `listening on`. */
let output = '';

async function serve(): Promise<Served> {
  const s = await serveBinary('monitor', dataDir, { MKT_CONFIG: join(dir.path, 'monitor.yaml'), MKT_LOG_LEVEL: 'debug' });
  s.child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  s.child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return s;
}

async function status(target: string): Promise<Status> {
  const r = await fetch(`${server.url}/api/status/${target}`, { headers: { authorization: 'Bearer hb-token' } });
  expect(r.status).toBe(200);
  return (await r.json()) as Status;
}

async function ping(url: string): Promise<number> {
  return (await fetch(url)).status;
}

beforeAll(async () => {
  hook = await startAlertHook();
  writeFileSync(
    join(dir.path, 'monitor.yaml'),
    `name: hb-bin\ntoken: hb-token\nrate_limit: { requests: 1000000 }\nalerts:\n  - url: ${hook.url}\ntargets:\n` +
      `  late:\n    heartbeat: { period: 2s, grace: 1s }\n    interval: 1s\n    incident_threshold: 1\n` +
      `  job:\n    heartbeat: { period: 1h, grace: 4s }\n    interval: 500ms\n`,
  );
  server = await serve();
}, 60_000);

afterAll(async () => {
  if (server.child.exitCode === null) server.child.kill('SIGTERM');
  await server.exited;
  await hook.close();
  dir.remove();
});

describe('mkt serve monitor: heartbeats (issue 31 "Heartbeats end to end with the real binary")', () => {
  it('on time, then late: down "no ping since ...", one opening alert through later turns; a success resolves it with one alert', async () => {
    const url = (await status('late')).ping_url;
    expect(await ping(url)).toBe(200);
    const onTime = await status('late');
    const last = onTime.heartbeat.last_ping_at as string;
    expect(onTime.recent.find((s) => s.details?.signal === 'success')).toMatchObject({ status: 'operational' });

    // (Had a loaded machine taken 3 s to send that first ping, an earlier incident came and went:
    // what follows looks only at the lateness after it.)
    const down = await waitFor(async () => (await status('late')).recent.find((s) => s.status === 'down' && s.checked_at > last), 'late to be late', 60_000);
    expect(down.error).toBe(`no ping since ${last}`);
    expect(Date.parse(down.checked_at)).toBeGreaterThan(Date.parse(last) + 3000);
    const ours = (): Alert[] => hook.alerts.filter((a) => a.target === 'late' && a.event === 'incident.opened' && a.incident.cause === `no ping since ${last}`);
    await waitFor(async () => ours().length >= 1, 'the opening alert', 30_000);
    const seen = (await status('late')).recent[0]!.checked_at;
    await waitFor(async () => (await status('late')).recent.filter((s) => s.checked_at > seen && s.status === 'down').length >= 3, 'three more late turns', 60_000);
    const opened = ours();
    expect(opened).toHaveLength(1);
    expect(hook.alerts.filter((a) => a.event === 'incident.opened' && a.incident.id === opened[0]!.incident.id)).toHaveLength(1);

    expect(await ping(url)).toBe(200);
    expect((await status('late')).current_incident).toBeUndefined();
    await waitFor(async () => hook.alerts.some((a) => a.event === 'incident.resolved' && a.incident.id === opened[0]!.incident.id), 'the resolved alert', 30_000);
    // One more turn after the resolution: still one resolution.
    const resolvedSeen = (await status('late')).recent[0]!.checked_at;
    await waitFor(async () => (await status('late')).recent[0]!.checked_at > resolvedSeen, 'a turn after the resolution', 30_000);
    expect(hook.alerts.filter((a) => a.target === 'late' && a.event === 'incident.resolved' && a.incident.id === opened[0]!.incident.id)).toHaveLength(1);
  });

  it('a run started before a restart is still outstanding after it, under the same ping URL, and down after its grace', async () => {
    const before = await status('job');
    expect(await ping(`${before.ping_url}/start`)).toBe(200);
    const startedAt = (await status('job')).heartbeat.last_start_at as string;
    expect(startedAt).toBeDefined();

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    server = await serve();

    const after = await status('job');
    // The same key from the store; the URL's host is this server's new address.
    expect(new URL(after.ping_url).pathname).toBe(new URL(before.ping_url).pathname);
    expect(after.heartbeat).toMatchObject({ running: true, last_start_at: startedAt });
    const down = await waitFor(async () => (await status('job')).recent.find((s) => s.status === 'down'), 'the overrun after the restart', 60_000);
    expect(down.error).toBe(`run started at ${startedAt} has not finished within the grace of 4s`);
    expect(Date.parse(down.checked_at)).toBeGreaterThan(Date.parse(startedAt) + 4000);

    // The run ends at last: timed from its start before the restart.
    expect(await ping(after.ping_url)).toBe(200);
    const done = (await status('job')).recent.find((s) => s.details?.signal === 'success')!;
    expect(done.status).toBe('operational');
    expect(done.response_time_ms).toBeGreaterThan(4000);

    // A SIGHUP reload re-reads the keys; the server's own log names the targets, never their keys.
    server.child.kill('SIGHUP');
    await waitFor(async () => output.includes('configuration reloaded'), 'the reload', 30_000);
    expect(await ping(after.ping_url)).toBe(200);
    expect(output).toMatch(/"target":"job"/);
    for (const u of [before.ping_url, (await status('late')).ping_url]) expect(output).not.toContain(new URL(u).pathname.split('/')[2]!);
  });
});
