// The silence gate over a real SQLite monitor store: an alert for a silenced target (by name or
// by an "all" silence) is held, logged and put on the incident's timeline; any other alert, and
// every alert once the silence expires or is removed, goes on to the sender; a store that cannot
// be read lets the alert through rather than lose it.
import { afterEach, expect, it } from 'vitest';
import { join } from 'node:path';
import { SqliteMonitorStore } from '../../../../src/store/monitor-sqlite.js';
import type { AlertEvent } from '../../../../daemon/services/monitor/alerts.js';
import { SilenceGate } from '../../../../daemon/services/monitor/silence-gate.js';
import { captureLog } from '../../../helpers/log-capture.js';
import { tempDir } from '../../../helpers/tmp.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ store: SqliteMonitorStore; gate: SilenceGate; sent: AlertEvent[]; log: () => string; clock: { now: number } }> {
  const dir = tempDir();
  const store = new SqliteMonitorStore(join(dir.path, 'monitor.db'));
  cleanups.push(() => dir.remove(), () => store.close());
  const sent: AlertEvent[] = [];
  const { logger, text } = captureLog();
  const clock = { now: Date.parse('2026-11-28T12:00:00.000Z') };
  const gate = new SilenceGate({ store, inner: { send: (e) => sent.push(e) }, logger, now: () => clock.now });
  return { store, gate, sent, log: text, clock };
}

async function alertFor(store: SqliteMonitorStore, target: string, reminder?: number): Promise<AlertEvent> {
  const incident = await store.openIncident(target, '2026-11-28T11:59:00.000Z', 'HTTP 503', 3);
  return { event: 'incident.opened', instance: 'mon', target, label: target, incident, ...(reminder !== undefined ? { reminder } : {}) };
}

it('holds the alerts of a silenced target and of every target under an "all" silence, until the silence ends', async () => {
  const { store, gate, sent, log, clock } = await setup();
  const s = await store.silences.add({ target: 'api', reason: 'deploy 4.2', expiresAt: clock.now + 3_600_000 }, clock.now, 1000);
  if (!s.ok) throw new Error('refused');
  const api = await alertFor(store, 'api');
  const web = await alertFor(store, 'web');
  gate.send(api);
  gate.send(web);
  await gate.settled();
  expect(sent.map((e) => e.target)).toEqual(['web']);
  expect(await store.incidentEvents(api.incident.id)).toEqual([expect.objectContaining({ kind: 'silenced', detail: `incident.opened not sent: deploy 4.2 (${s.silence.id})` })]);
  expect(log()).toMatch(/"msg":"alert silenced"/);
  expect(log()).toContain(`"silence":"${s.silence.id}"`);
  // Never the reason in the log line (free text from whoever made the silence), only its id.
  expect(log()).not.toContain('deploy 4.2');

  // A reminder is held too, and says which one.
  gate.send({ ...api, reminder: 2 });
  await gate.settled();
  expect((await store.incidentEvents(api.incident.id)).map((e) => e.detail)).toContain(`reminder 2 not sent: deploy 4.2 (${s.silence.id})`);

  // An "all" silence holds web; at its expiry both go through again.
  await store.silences.add({ reason: 'network', expiresAt: clock.now + 60_000 }, clock.now, 1000);
  gate.send(web);
  await gate.settled();
  expect(sent).toHaveLength(1);
  clock.now += 3_600_000;
  gate.send(api);
  gate.send(web);
  await gate.settled();
  expect(sent.map((e) => e.target)).toEqual(['web', 'api', 'web']);
});

it('a removed silence holds nothing; a store that cannot be read lets the alert through', async () => {
  const { store, gate, sent, log, clock } = await setup();
  const s = await store.silences.add({ target: 'api', reason: 'r', expiresAt: clock.now + 3_600_000 }, clock.now, 1000);
  if (!s.ok) throw new Error('refused');
  const api = await alertFor(store, 'api');
  expect(await store.silences.remove(s.silence.id, clock.now)).toBe(true);
  gate.send(api);
  await gate.settled();
  expect(sent).toHaveLength(1);
  await store.silences.add({ target: 'api', reason: 'r', expiresAt: clock.now + 3_600_000 }, clock.now, 1000);
  await store.close();
  gate.send(api);
  await gate.settled();
  expect(sent).toHaveLength(2);
  expect(log()).toMatch(/reading silences failed; sending the alert/);
});
