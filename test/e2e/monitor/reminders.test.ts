// Issue 32, "Reminders", on a real monitor (startService: real HTTP, config file, SQLite store,
// JSON alert hook) whose clock runs with the wall clock plus an offset the test moves forward an
// hour at a time (remind_every is at least 1m; the binary's clock is the system's). While the
// incident stays open the hook gets `incident.opened` again with "reminder": 1, then 2, each once,
// also across a restart on the same data directory; after the resolution, none.
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../../../daemon/start.js';
import { createLogger } from '../../../daemon/logger.js';
import { startAlertHook, type AlertHook } from '../../helpers/alert-hook.js';
import { listenLocal } from '../../helpers/local-http.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';

const HOUR = 3_600_000;
const dir = tempDir();
const closers: (() => Promise<void> | void)[] = [];
let hook: AlertHook;
let failing = true;
let offset = 0;
const clock = { now: (): number => Date.now() + offset };
const configPath = join(dir.path, 'monitor.yaml');

interface ReminderAlert {
  event: string;
  target: string;
  reminder?: number;
  incident: { id: number; status: string };
}
const alerts = (): ReminderAlert[] => hook.alerts as unknown as ReminderAlert[];
const summary = (): string[] => alerts().map((a) => `${a.event}${a.reminder ? ` reminder ${a.reminder}` : ''}`);

function start(): Promise<RunningService> {
  const quiet = new Writable({ write: (_c, _e, cb) => cb() });
  return startService('monitor', { host: '127.0.0.1', port: 0, dataDir: join(dir.path, 'data'), configPath, options: { alertBackoffMs: [50] }, env: {}, logger: createLogger({ level: 'silent', stream: quiet, pretty: false }), out: quiet, clock });
}

beforeAll(async () => {
  hook = await startAlertHook();
  const target = createServer((_req, res) => {
    res.writeHead(failing ? 503 : 200, { 'content-type': 'application/json' }).end(failing ? '{"status":"down"}' : '{"status":"ok"}');
  });
  const base = await listenLocal(target, (c) => closers.push(c));
  writeFileSync(configPath, `name: mon-remind\ntoken: mon-token\nremind_every: 1h\nincident_threshold: 2\nalerts:\n  - url: ${hook.url}\ntargets:\n  api:\n    url: ${base}/health\n    interval: 200ms\n    timeout: 2s\n`);
});

afterAll(async () => {
  await hook?.close();
  for (const c of closers) await c();
  dir.remove();
});

describe('remind_every on a real monitor', () => {
  it('reminds once an hour while the incident is open, each reminder once across a restart, none after it resolved', async () => {
    let svc = await start();
    try {
      await waitFor(async () => alerts().length === 1, 'the opening alert');
      const id = alerts()[0]!.incident.id;
      offset += HOUR;
      await waitFor(async () => alerts().length === 2, 'reminder 1');
      expect(alerts()[1]).toMatchObject({ event: 'incident.opened', target: 'api', reminder: 1, incident: { id, status: 'open' } });
      // Several more checks in the same hour: no second reminder 1.
      await new Promise((r) => setTimeout(r, 1000));
      expect(summary()).toEqual(['incident.opened', 'incident.opened reminder 1']);

      // A restart on the same data directory does not send reminder 1 again.
      await svc.close();
      svc = await start();
      await new Promise((r) => setTimeout(r, 1000));
      expect(summary()).toEqual(['incident.opened', 'incident.opened reminder 1']);
      offset += HOUR;
      await waitFor(async () => alerts().length === 3, 'reminder 2');
      await new Promise((r) => setTimeout(r, 600));
      expect(summary()).toEqual(['incident.opened', 'incident.opened reminder 1', 'incident.opened reminder 2']);

      failing = false;
      await waitFor(async () => alerts().some((a) => a.event === 'incident.resolved'), 'the resolution');
      offset += 2 * HOUR;
      await new Promise((r) => setTimeout(r, 1000));
      expect(summary()).toEqual(['incident.opened', 'incident.opened reminder 1', 'incident.opened reminder 2', 'incident.resolved']);
    } finally {
      await svc.close();
    }
  }, 60_000);
});
