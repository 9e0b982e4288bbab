// Dependencies and reminders in the check engine (issue 32), with a clock the test sets and real
// HTTP targets it turns down and up: a child down while its parent is down opens an incident
// caused_by the parent and sends nothing; the parent's alert names it; a child still down when the
// parent recovers alerts on its own; one that recovers first sends nothing; a parent the gate never
// confirms (a mesh quorum not met) does not hold the child back; reminders every remind_every,
// claimed per N so a restart or a second instance on the store sends none twice.
import { createServer } from 'node:http';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CheckEngine, type IncidentGate } from '../../../../daemon/services/monitor/engine.js';
import { AlertSender, type AlertEvent } from '../../../../daemon/services/monitor/alerts.js';
import { createLogger } from '../../../../daemon/logger.js';
import { parseMonitorConfig } from '../../../../src/config/monitor.js';
import { SqliteMonitorStore } from '../../../../src/store/monitor-sqlite.js';
import { ManualClock } from '../../../../src/util/clock.js';
import { buildTargetStatus } from '../../../../daemon/services/monitor/status.js';
import { tempDir } from '../../../helpers/tmp.js';
import { listenLocal } from '../../../helpers/local-http.js';

const dir = tempDir();
const closers: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of closers) await c();
  dir.remove();
});

const SEC = 1000;
const MIN = 60 * SEC;
const logger = createLogger({ level: 'silent', stream: new Writable({ write: (_c, _e, cb) => cb() }), pretty: false });

/** Records what would be sent instead of sending it. */
class RecordingAlerts extends AlertSender {
  readonly sent: AlertEvent[] = [];
  override send(e: AlertEvent): void {
    this.sent.push(e);
  }
}

/** Targets served here: GET /<name> answers 200 while the name is up, 503 while down. */
const down = new Set<string>();
let base = '';
beforeAll(async () => {
  const server = createServer((req, res) => {
    const name = (req.url ?? '/').slice(1);
    res.writeHead(down.has(name) ? 503 : 200, { 'content-type': 'application/json' }).end(down.has(name) ? '{"status":"down"}' : '{"status":"ok"}');
  });
  base = await listenLocal(server, (c) => closers.push(c));
});

const yaml = (extra = ''): string =>
  `incident_threshold: 2\n${extra}targets:\n  router:\n    url: ${base}/router\n  web:\n    url: ${base}/web\n    depends_on: [router]\n  api:\n    url: ${base}/api\n    depends_on: [router]\n`;

interface Rig {
  store: SqliteMonitorStore;
  clock: ManualClock;
  alerts: RecordingAlerts;
  engine: CheckEngine;
  /** Checks `target` at `at` (ms). */
  check(target: string, at: number): Promise<void>;
  /** What was sent: `event target` (+ ` reminder N`, + ` affected a,b`). */
  events(): string[];
  close(): Promise<void>;
}

function engineOn(store: SqliteMonitorStore, clock: ManualClock, config: string, gate?: IncidentGate): Rig {
  const alerts = new RecordingAlerts([], logger);
  const engine = new CheckEngine({ store, logger, clock, alerts, ...(gate ? { gate } : {}) });
  engine.apply(parseMonitorConfig(config));
  return {
    store,
    clock,
    alerts,
    engine,
    async check(target, at) {
      clock.set(at);
      await engine.runNow(target);
    },
    events: () => alerts.sent.map((e) => `${e.event} ${e.target}${e.reminder ? ` reminder ${e.reminder}` : ''}${e.affected ? ` affected ${e.affected.join(',')}` : ''}`),
    close: () => engine.stop(),
  };
}

function rig(file: string, config = yaml(), gate?: IncidentGate): Rig {
  const store = new SqliteMonitorStore(join(dir.path, file));
  closers.push(() => store.close());
  return engineOn(store, new ManualClock(), config, gate);
}

describe('depends_on in the engine', () => {
  it('one alert for the parent naming its children; the child opens caused_by it, alerts nothing, then alerts on its own after the parent recovers', async () => {
    const T0 = Date.parse('2026-07-01T00:00:00Z');
    const r = rig('deps.db');
    down.clear();
    down.add('router').add('web');
    try {
      await r.check('router', T0);
      await r.check('web', T0 + 1 * SEC);
      // web reaches its threshold first; router's streak (1) has not reached its own: web waits.
      await r.check('web', T0 + MIN);
      expect(await r.store.currentIncident('web')).toBeUndefined();
      await r.check('router', T0 + MIN + SEC);
      expect(r.events()).toEqual(['incident.opened router affected web']);
      await r.check('web', T0 + 2 * MIN);
      const child = await r.store.currentIncident('web');
      expect(child).toMatchObject({ status: 'open', caused_by: 'router', started_at: new Date(T0 + SEC).toISOString() });
      expect(r.events()).toEqual(['incident.opened router affected web']);
      expect((await r.store.incidentEvents(child!.id)).map((e) => `${e.kind}${e.detail ? ` ${e.detail}` : ''}`)).toEqual(['opened', 'caused_by router']);
      // The target's status names the parent.
      const cfg = parseMonitorConfig(yaml());
      const status = await buildTargetStatus(r.store, cfg.targets.find((t) => t.name === 'web')!, T0 + 2 * MIN);
      expect(status.caused_by).toBe('router');
      // More down checks of the child while the parent is down: still nothing.
      await r.check('web', T0 + 3 * MIN);
      expect(r.events()).toEqual(['incident.opened router affected web']);
      // The parent recovers, the child does not: the parent's resolution, then the child's own opening.
      down.delete('router');
      await r.check('router', T0 + 4 * MIN);
      expect(r.events()).toEqual(['incident.opened router affected web', 'incident.resolved router', 'incident.opened web']);
      // Its next down check sends nothing more; its recovery is alerted (its opening was).
      await r.check('web', T0 + 5 * MIN);
      down.delete('web');
      await r.check('web', T0 + 6 * MIN);
      expect(r.events()).toEqual(['incident.opened router affected web', 'incident.resolved router', 'incident.opened web', 'incident.resolved web']);
      // caused_by stays in its history.
      expect((await r.store.incidents('web', 1))[0]).toMatchObject({ status: 'resolved', caused_by: 'router' });
    } finally {
      await r.close();
    }
  });

  it('a child that recovers while its parent is down sends no resolution either, nor anything when the parent recovers', async () => {
    const T0 = Date.parse('2026-07-02T00:00:00Z');
    const r = rig('recovers.db');
    down.clear();
    down.add('router').add('api');
    try {
      await r.check('router', T0);
      await r.check('router', T0 + MIN);
      await r.check('api', T0 + MIN + SEC);
      await r.check('api', T0 + 2 * MIN);
      expect(await r.store.currentIncident('api')).toMatchObject({ caused_by: 'router' });
      // router's alert was sent before api went down: it names no child, and nothing more is sent.
      expect(r.events()).toEqual(['incident.opened router']);
      down.delete('api');
      await r.check('api', T0 + 3 * MIN);
      expect(await r.store.currentIncident('api')).toBeUndefined();
      down.delete('router');
      await r.check('router', T0 + 4 * MIN);
      expect(r.events()).toEqual(['incident.opened router', 'incident.resolved router']);
    } finally {
      await r.close();
    }
  });

  it('a parent down from too few vantage points (the gate never opens its incident) holds no child back', async () => {
    const T0 = Date.parse('2026-07-03T00:00:00Z');
    // The mesh gate's answer for a quorum not met, for router only.
    const gate: IncidentGate = { decide: (t) => (t.name === 'router' ? { open: false, alert: false } : { open: true, alert: true }) };
    const r = rig('regional.db', yaml(), gate);
    down.clear();
    down.add('router').add('web');
    try {
      await r.check('router', T0);
      await r.check('web', T0 + SEC);
      await r.check('router', T0 + MIN);
      // router's streak reached its threshold without an incident: web does not wait for it.
      await r.check('web', T0 + MIN + SEC);
      expect(await r.store.currentIncident('router')).toBeUndefined();
      expect(await r.store.currentIncident('web')).not.toHaveProperty('caused_by');
      expect(r.events()).toEqual(['incident.opened web']);
    } finally {
      await r.close();
    }
  });
});

describe('a child checked before its parent has seen the outage', () => {
  it('waits for the parent\'s next check, whose incident then causes the child\'s: one alert, the parent\'s', async () => {
    const T0 = Date.parse('2026-07-04T00:00:00Z');
    const r = rig('unseen.db');
    down.clear();
    try {
      await r.check('router', T0);
      down.add('router').add('web');
      // web's whole streak comes after router's last (good) check: router has not looked since.
      await r.check('web', T0 + 10 * SEC);
      await r.check('web', T0 + 40 * SEC);
      expect(await r.store.currentIncident('web')).toBeUndefined();
      await r.check('router', T0 + MIN);
      await r.check('web', T0 + 70 * SEC);
      expect(await r.store.currentIncident('web')).toBeUndefined();
      await r.check('router', T0 + 2 * MIN);
      await r.check('web', T0 + 130 * SEC);
      expect(await r.store.currentIncident('web')).toMatchObject({ caused_by: 'router', started_at: new Date(T0 + 10 * SEC).toISOString() });
      expect(r.events()).toEqual(['incident.opened router affected web']);
    } finally {
      await r.close();
    }
  });

  it('a parent checked good since the streak began, or whose last check is overdue, holds nothing back', async () => {
    const T0 = Date.parse('2026-07-05T00:00:00Z');
    const seen = rig('seen.db');
    const stale = rig('stale.db');
    down.clear();
    try {
      await seen.check('router', T0);
      await stale.check('router', T0);
      down.add('web');
      await seen.check('web', T0 + 10 * SEC);
      await seen.check('router', T0 + 20 * SEC);
      await seen.check('web', T0 + 40 * SEC);
      expect(await seen.store.currentIncident('web')).not.toHaveProperty('caused_by');
      expect(seen.events()).toEqual(['incident.opened web']);
      // router (every 60 s, timeout 10 s) not checked for more than two intervals and its timeout.
      await stale.check('web', T0 + 2 * MIN);
      await stale.check('web', T0 + 2 * MIN + 11 * SEC);
      expect(stale.events()).toEqual(['incident.opened web']);
    } finally {
      await seen.close();
      await stale.close();
    }
  });
});

describe('depends_on on a mesh (each point its own store)', () => {
  it('a released child alerts from here only when the gate elects this point (no peer showed it sent)', async () => {
    const T0 = Date.parse('2026-07-06T00:00:00Z');
    let owed = false;
    const asked: string[] = [];
    // The mesh gate's answers: every outage confirmed here; the child's opening owed only when the test says.
    const gate: IncidentGate = {
      decide: () => ({ open: true, alert: true }),
      openingOwed: (t) => {
        asked.push(t.name);
        return owed;
      },
    };
    const r = rig('mesh.db', yaml(), gate);
    down.clear();
    down.add('router').add('web');
    try {
      await r.check('router', T0);
      await r.check('router', T0 + MIN);
      await r.check('router', T0 + 2 * MIN);
      await r.check('web', T0 + 2 * MIN + SEC);
      await r.check('web', T0 + 3 * MIN);
      expect(await r.store.currentIncident('web')).toMatchObject({ caused_by: 'router' });
      // Held back by its parent, the child does not even ask.
      await r.check('web', T0 + 4 * MIN);
      expect(asked).toEqual([]);
      down.delete('router');
      await r.check('router', T0 + 5 * MIN);
      await r.check('web', T0 + 6 * MIN);
      expect(asked).toEqual(['web', 'web']);
      expect(r.events()).toEqual(['incident.opened router', 'incident.resolved router']);
      owed = true;
      await r.check('web', T0 + 7 * MIN);
      await r.check('web', T0 + 8 * MIN);
      expect(r.events()).toEqual(['incident.opened router', 'incident.resolved router', 'incident.opened web']);
    } finally {
      await r.close();
    }
  });
});

describe('remind_every in the engine', () => {
  it('reminds every interval while open (a held-back child only from its own alert on), once each across a restart and a second instance', async () => {
    const T0 = Date.parse('2026-07-04T00:00:00Z');
    const config = yaml('remind_every: 1h\n');
    const r = rig('remind.db', config);
    down.clear();
    down.add('router').add('web');
    try {
      await r.check('router', T0);
      await r.check('router', T0 + MIN);
      await r.check('web', T0 + MIN + SEC);
      await r.check('web', T0 + 2 * MIN);
      expect(r.events()).toEqual(['incident.opened router']);
      // Just short of an hour after router's start: nothing; past it: reminder 1 naming web, once.
      await r.check('router', T0 + 59 * MIN);
      await r.check('web', T0 + 59 * MIN + SEC);
      expect(r.events()).toEqual(['incident.opened router']);
      await r.check('router', T0 + 60 * MIN);
      await r.check('router', T0 + 61 * MIN);
      // The held-back child gets none.
      await r.check('web', T0 + 61 * MIN + SEC);
      expect(r.events()).toEqual(['incident.opened router', 'incident.opened router reminder 1 affected web']);
      expect(r.alerts.sent[1]!.incident).toMatchObject({ status: 'open' });
      // A restart (a new engine on the store) and a second instance checking at the same time:
      // reminder 1 is not sent again; reminder 2 goes out once between them.
      await r.close();
      const again = engineOn(r.store, r.clock, config);
      const other = engineOn(r.store, new ManualClock(), config);
      await again.check('router', T0 + 62 * MIN);
      expect(again.events()).toEqual([]);
      await Promise.all([again.check('router', T0 + 121 * MIN), other.check('router', T0 + 121 * MIN)]);
      expect([...again.events(), ...other.events()]).toEqual(['incident.opened router reminder 2 affected web']);
      const routerIncident = (await r.store.currentIncident('router'))!;
      expect((await r.store.incidentEvents(routerIncident.id)).filter((e) => e.kind === 'reminded').map((e) => e.detail)).toEqual(['1', '2']);
      // router recovers at 2h30: web alerts on its own, and its reminders count from then.
      down.delete('router');
      await again.check('router', T0 + 150 * MIN);
      expect(again.events().slice(1)).toEqual(['incident.resolved router', 'incident.opened web']);
      await again.check('web', T0 + 209 * MIN);
      expect(again.events().slice(3)).toEqual([]);
      await again.check('web', T0 + 210 * MIN);
      expect(again.events().slice(3)).toEqual(['incident.opened web reminder 1']);
      // None after it resolved.
      down.delete('web');
      await again.check('web', T0 + 211 * MIN);
      await again.check('web', T0 + 300 * MIN);
      expect(again.events().slice(3)).toEqual(['incident.opened web reminder 1', 'incident.resolved web']);
      await again.close();
      await other.close();
    } finally {
      await r.close();
    }
  });

  it('a held-back child\'s down checks ask the store about its opening alert once each, the reminder\'s "no" standing for a minute', async () => {
    const T0 = Date.parse('2026-07-06T00:00:00Z');
    const r = rig('remind-ask.db', yaml('remind_every: 1h\n'));
    down.clear();
    down.add('router').add('web');
    try {
      await r.check('router', T0);
      await r.check('router', T0 + SEC);
      await r.check('web', T0 + 2 * SEC);
      await r.check('web', T0 + 3 * SEC);
      const asked = vi.spyOn(r.store, 'alertClaimed');
      // Ten down checks within a minute: the release check asks each time, the reminder once.
      for (let i = 1; i <= 10; i++) await r.check('web', T0 + 3 * SEC + i * 5 * SEC);
      expect(asked.mock.calls.filter(([, event]) => event === 'incident.opened')).toHaveLength(10 + 1);
      // A minute after the reminder's "no": it asks again.
      await r.check('web', T0 + 3 * SEC + 10 * 5 * SEC + MIN);
      expect(asked.mock.calls.filter(([, event]) => event === 'incident.opened')).toHaveLength(11 + 2);
      asked.mockRestore();
    } finally {
      await r.close();
    }
  });

  it('a target\'s remind_every: 0 turns the global one off for it', async () => {
    const T0 = Date.parse('2026-07-05T00:00:00Z');
    const r = rig('remind-off.db', `remind_every: 1h\nincident_threshold: 1\ntargets:\n  quiet:\n    url: ${base}/quiet\n    remind_every: 0\n  loud:\n    url: ${base}/loud\n    remind_every: 2h\n`);
    down.clear();
    down.add('quiet').add('loud');
    try {
      await r.check('quiet', T0);
      await r.check('loud', T0);
      await r.check('quiet', T0 + 3 * 60 * MIN);
      await r.check('loud', T0 + 60 * MIN);
      await r.check('loud', T0 + 120 * MIN);
      expect(r.events()).toEqual(['incident.opened quiet', 'incident.opened loud', 'incident.opened loud reminder 1']);
    } finally {
      await r.close();
    }
  });
});
