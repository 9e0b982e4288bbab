// Maintenance in the check engine: a check is tagged exactly when its time falls in a window
// (the first millisecond in, the last in, the end out), it counts neither up nor down, opens no
// incident and sends no alert, and the down streak resumes across it.
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CheckEngine } from '../../../../daemon/services/monitor/engine.js';
import { AlertSender, type AlertEvent } from '../../../../daemon/services/monitor/alerts.js';
import { MaintenanceSchedule } from '../../../../daemon/services/monitor/maintenance.js';
import { createLogger } from '../../../../daemon/logger.js';
import { parseMonitorConfig } from '../../../../src/config/monitor.js';
import { SqliteMonitorStore } from '../../../../src/store/monitor-sqlite.js';
import { ManualClock } from '../../../../src/util/clock.js';
import { tempDir } from '../../../helpers/tmp.js';

const dir = tempDir();
afterAll(() => dir.remove());

class RecordingAlerts extends AlertSender {
  readonly sent: AlertEvent[] = [];
  override send(e: AlertEvent): void {
    this.sent.push(e);
  }
}

describe('maintenance windows in the engine', () => {
  it('tag exactly the checks inside the window, which open no incident and send no alert', async () => {
    const W0 = Date.parse('2026-06-10T22:00:00Z');
    const W1 = Date.parse('2026-06-11T01:00:00Z');
    const logger = createLogger({ level: 'silent', stream: new Writable({ write: (_c, _e, cb) => cb() }), pretty: false });
    const store = new SqliteMonitorStore(join(dir.path, 'maint.db'));
    const clock = new ManualClock(W0 - 1);
    const alerts = new RecordingAlerts([], logger);
    // Port 1 on loopback refuses connections: every check is down.
    const config = parseMonitorConfig(
      'incident_threshold: 2\nmaintenance:\n  - name: upgrade\n    targets: [db]\n    timezone: Europe/Berlin\n    from: 2026-06-11T00:00\n    to: 2026-06-11T03:00\ntargets:\n  db:\n    url: http://127.0.0.1:1/h\n  web:\n    url: http://127.0.0.1:1/h\n    incident_threshold: 1\n',
    );
    const schedule = new MaintenanceSchedule(config.maintenance);
    const engine = new CheckEngine({ store, logger, clock, alerts, maintenance: () => schedule });
    engine.apply(config);
    try {
      const tagged: boolean[] = [];
      for (const at of [W0 - 1, W0, W0 + 1, W1 - 1, W1]) {
        clock.set(at);
        await engine.runNow('db');
        tagged.push((await store.recent('db', 1))[0]!.maintenance === true);
        // Nothing opened inside the window, though every check there is down.
        if (at >= W0 && at < W1) expect(await store.currentIncident('db')).toBeUndefined();
      }
      expect(tagged).toEqual([false, true, true, true, false]);
      // The streak resumed across the window: the check before it and the one after make two.
      expect(await store.currentIncident('db')).toMatchObject({ status: 'open', started_at: new Date(W0 - 1).toISOString(), checks: 2 });
      expect(alerts.sent.map((e) => `${e.event} ${e.target}`)).toEqual(['incident.opened db']);
      // The window covers db only: web, down at the same instant, opens at once.
      clock.set(W0 + 5);
      await engine.runNow('web');
      expect((await store.recent('web', 1))[0]!.maintenance).toBeUndefined();
      expect(await store.currentIncident('web')).toMatchObject({ status: 'open' });
      expect(await store.counts('db', W0 - 1, W1 + 1)).toEqual({ operational: 0, degraded: 0, down: 2, maintenance: 3 });
      expect(await store.uptime('db', W0 - 1)).toEqual({ total: 2, up: 0 });
    } finally {
      await engine.stop();
      await store.close();
    }
  });
});
