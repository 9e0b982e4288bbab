// The check engine: never two checks of one target at once, even when a scheduled run and
// manual runs (`runNow`) overlap (against a slow real server); per-target incident thresholds;
// stop() ends in-flight checks and test commands at once and records none of them.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { CheckEngine } from '../../../../daemon/services/monitor/engine.js';
import { AlertSender } from '../../../../daemon/services/monitor/alerts.js';
import { createLogger } from '../../../../daemon/logger.js';
import { parseMonitorConfig } from '../../../../src/config/monitor.js';
import { SqliteMonitorStore } from '../../../../src/store/monitor-sqlite.js';
import { systemClock } from '../../../../src/util/clock.js';
import { tempDir } from '../../../helpers/tmp.js';
import { waitFor } from '../../../helpers/wait.js';

const dir = tempDir();
afterAll(() => dir.remove());

describe('check engine', () => {
  it('never runs two checks of one target at once (scheduled and manual runs queue)', async () => {
    let active = 0;
    let maxActive = 0;
    let served = 0;
    const server = createServer((_req, res) => {
      active++;
      maxActive = Math.max(maxActive, active);
      setTimeout(() => {
        active--;
        served++;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      }, 80);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/health`;
    const logger = createLogger({ level: 'silent', stream: new Writable({ write: (_c, _e, cb) => cb() }), pretty: false });
    const store = new SqliteMonitorStore(join(dir.path, 'engine.db'));
    const engine = new CheckEngine({ store, logger, clock: systemClock, alerts: new AlertSender([], logger) });
    engine.apply(parseMonitorConfig(`targets:\n  slow:\n    url: ${url}\n    interval: 20ms\n    timeout: 2s\n`));
    try {
      engine.start();
      await Promise.all([engine.runNow('slow'), engine.runNow('slow'), engine.runNow('slow')]);
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      await engine.stop();
      await new Promise<void>((r) => server.close(() => r()));
      await store.close();
    }
    expect(served).toBeGreaterThanOrEqual(4);
    expect(maxActive).toBe(1);
  });

  it('an incident opens after the target\'s own incident_threshold of down checks, else the global one', async () => {
    const logger = createLogger({ level: 'silent', stream: new Writable({ write: (_c, _e, cb) => cb() }), pretty: false });
    const store = new SqliteMonitorStore(join(dir.path, 'threshold.db'));
    const engine = new CheckEngine({ store, logger, clock: systemClock, alerts: new AlertSender([], logger) });
    // Port 1 on loopback refuses connections: every check is down.
    engine.apply(parseMonitorConfig('incident_threshold: 4\ntargets:\n  touchy:\n    url: http://127.0.0.1:1/h\n    incident_threshold: 1\n  calm:\n    url: http://127.0.0.1:1/h\n'));
    try {
      await engine.runNow('touchy');
      expect(await store.currentIncident('touchy')).toMatchObject({ status: 'open', checks: 1, cause: 'ECONNREFUSED' });
      for (let i = 0; i < 3; i++) await engine.runNow('calm');
      expect(await store.currentIncident('calm')).toBeUndefined();
      await engine.runNow('calm');
      expect(await store.currentIncident('calm')).toMatchObject({ status: 'open', checks: 4 });
    } finally {
      await engine.stop();
      await store.close();
    }
    expect(() => parseMonitorConfig('targets:\n  a:\n    url: http://127.0.0.1/h\n    incident_threshold: 0\n', 'm.yaml')).toThrow('m.yaml:4: targets.a.incident_threshold must be a whole number from 1 to 100');
  });

  it('stop() kills a running test command and aborts a hanging health check, recording neither', async () => {
    const hang = createServer(() => undefined); // accepts, never answers
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/health`;
    const pidFile = join(dir.path, 'test.pid');
    const script = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setTimeout(() => {}, 60000);`;
    const logger = createLogger({ level: 'silent', stream: new Writable({ write: (_c, _e, cb) => cb() }), pretty: false });
    const store = new SqliteMonitorStore(join(dir.path, 'stop.db'));
    const engine = new CheckEngine({ store, logger, clock: systemClock, alerts: new AlertSender([], logger) });
    engine.apply(parseMonitorConfig(`targets:\n  busy:\n    url: ${url}\n    interval: 1h\n    timeout: 60s\n    tests:\n      command: ${JSON.stringify([process.execPath, '-e', script])}\n      interval: 1h\n      timeout: 60s\n`));
    try {
      engine.start();
      // The pid once written, not the file once created: writeFileSync creates, then writes, and
      // an empty file read as pid 0 would make kill(0, 0) below signal this process group.
      await waitFor(async () => existsSync(pidFile) && /^\d+$/.test(readFileSync(pidFile, 'utf8')), 'the test command to write its pid');
      await waitFor(async () => (await new Promise<number>((r) => hang.getConnections((_e, n) => r(n)))) > 0, 'the health request to connect');
      await engine.stop(); // would wait a minute for both without the abort
      const pid = Number(readFileSync(pidFile, 'utf8'));
      expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
      expect(await store.recent('busy', 10)).toEqual([]);
      expect(await store.testRuns('busy', 10)).toEqual([]);
    } finally {
      await engine.stop();
      hang.closeAllConnections?.();
      await new Promise<void>((r) => hang.close(() => r()));
      await store.close();
    }
  });
});
