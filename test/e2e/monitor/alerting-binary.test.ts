// Silences and reminders with the real binaries (issue 32): `mkt monitor silence add` holds the
// opening alert of an incident on `mkt serve monitor` (recorded as `silenced` in its timeline),
// `silence rm` lifts it, and the incident's first reminder (`remind_every: 1m`) then reaches the
// channel, marked as a reminder, once; the silence and the incident survive a restart of the server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serveBinary, type Served } from '../../helpers/serve-binary.js';
import { startAlertHook, type AlertHook } from '../../helpers/alert-hook.js';
import { healthServer, type HealthServer } from '../../helpers/monitor-fixtures.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';

const mktBin = join(import.meta.dirname, '../../../bin/mkt');
const dir = tempDir();
const dataDir = join(dir.path, 'data');
let hook: AlertHook;
let api: HealthServer;
let server: Served;

interface Status {
  current_incident?: { id: number; started_at: string; timeline?: { kind: string; detail?: string }[] };
}

/** `mkt monitor …` as a user runs it, against the running server. */
function mkt(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [mktBin, 'monitor', ...args], {
      env: { ...process.env, HOME: dir.path, MKT_MONITOR_URL: server.url, MKT_MONITOR_TOKEN: 'al-token' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function status(): Promise<Status> {
  const r = await fetch(`${server.url}/api/status/api`, { headers: { authorization: 'Bearer al-token' } });
  expect(r.status).toBe(200);
  return (await r.json()) as Status;
}

const serve = (): Promise<Served> => serveBinary('monitor', dataDir, { MKT_CONFIG: join(dir.path, 'monitor.yaml') });

beforeAll(async () => {
  hook = await startAlertHook();
  api = await healthServer();
  writeFileSync(
    join(dir.path, 'monitor.yaml'),
    `name: alerting-bin\ntoken: al-token\nrate_limit: { requests: 1000000 }\nremind_every: 1m\nalerts:\n  - name: ops\n    url: ${hook.url}\n` +
      `targets:\n  api:\n    url: ${api.url}\n    interval: 500ms\n    timeout: 2s\n    incident_threshold: 1\n`,
  );
  server = await serve();
}, 60_000);

afterAll(async () => {
  if (server.child.exitCode === null) server.child.kill('SIGTERM');
  await server.exited;
  await api.close();
  await hook.close();
  dir.remove();
});

describe('silences and reminders on the real binaries', () => {
  it('a silence holds the opening alert; after `silence rm` the first reminder is sent, once', async () => {
    const added = await mkt(['silence', 'add', 'api', '--for', '2h', '--reason', 'deploy', '--json']);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const silence = JSON.parse(added.stdout) as { id: string; target: string; reason: string };
    expect(silence).toMatchObject({ target: 'api', reason: 'deploy' });

    api.mode = 'failing';
    await waitFor(async () => (await status()).current_incident?.timeline?.some((e) => e.kind === 'silenced'), 'the opening alert held by the silence');
    const incident = (await status()).current_incident!;
    expect(incident.timeline!.map((e) => e.kind).slice(0, 2)).toEqual(['opened', 'silenced']);
    expect(hook.alerts.filter((a) => a.target === 'api')).toEqual([]);

    // The silence and the open incident outlive a restart of the server.
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    server = await serve();
    const listed = await mkt(['silence', 'list', '--json']);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { silences: { id: string }[] }).silences.map((s) => s.id)).toEqual([silence.id]);
    expect((await status()).current_incident?.id).toBe(incident.id);

    const removed = await mkt(['silence', 'rm', silence.id]);
    expect(removed.code).toBe(0);
    expect((JSON.parse((await mkt(['silence', 'list', '--json'])).stdout) as { silences: unknown[] }).silences).toEqual([]);
    expect((await mkt(['silence', 'rm', silence.id])).code).toBe(1);

    // Reminder 1 is due a minute after the incident started: it is the channel's first alert of it.
    await waitFor(async () => hook.alerts.some((a) => a.target === 'api'), 'the first reminder', 150_000);
    const sent = hook.alerts.filter((a) => a.target === 'api') as unknown as { event: string; reminder?: number; incident: { id: number } }[];
    expect(sent[0]).toMatchObject({ event: 'incident.opened', reminder: 1, incident: { id: incident.id } });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(incident.started_at) + 60_000);
    await waitFor(async () => (await status()).current_incident?.timeline?.some((e) => e.kind === 'reminded'), 'the reminder in the timeline');
    // A few more checks later: still one reminder (the second is due a minute after the first).
    const checks = async (): Promise<number> => ((await status()).current_incident as { checks?: number } | undefined)?.checks ?? 0;
    const seen = await checks();
    await waitFor(async () => (await checks()) >= seen + 4, 'four more down checks');
    expect(hook.alerts.filter((a) => a.target === 'api')).toHaveLength(1);
  }, 240_000);
});
