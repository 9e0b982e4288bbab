// Incidents shared by instances: two stores on one database (two cluster instances on
// PostgreSQL; two handles on one SQLite file) open a target's incident once, resolve it once, and
// hand each transition's alert to exactly one of many concurrent claimants.
import { expect, it } from 'vitest';
import { ENGINES } from '../../helpers/engines.js';
import { sharedMonitorStores } from '../../helpers/monitor-stores.js';

const twoStores = sharedMonitorStores();

for (const engine of ENGINES) {
  it(`[${engine}] one open incident per target, one resolution, one claim per transition`, async () => {
    const [a, b] = await twoStores(engine);
    const at = '2026-11-24T10:00:00.000Z';
    const opens = await Promise.all([a.openIncident('api', at, 'HTTP 503', 3), b.openIncident('api', at, 'timeout', 3), a.openIncident('api', at, 'x', 3)]);
    expect(new Set(opens.map((i) => i.id)).size).toBe(1);
    expect((await b.incidents('api', 10)).length).toBe(1);
    // Another target has its own incident.
    expect((await b.openIncident('web', at, 'down', 3)).id).not.toBe(opens[0]!.id);
    const id = opens[0]!.id;
    const claims = await Promise.all([...Array(8)].map((_, i) => (i % 2 ? a : b).claimAlert(id, 'incident.opened')));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await a.alertClaimed(id, 'incident.opened')).toBe(true);
    expect(await a.alertClaimed(id, 'incident.resolved')).toBe(false);
    const resolved = await Promise.all([a.resolveIncident(id, '2026-11-24T10:05:00.000Z'), b.resolveIncident(id, '2026-11-24T10:05:01.000Z')]);
    expect(resolved.filter(Boolean)).toHaveLength(1);
    expect(await a.currentIncident('api')).toBeUndefined();
    // Resolved, the target can open a new one.
    const next = await b.openIncident('api', '2026-11-24T11:00:00.000Z', 'HTTP 500', 3);
    expect(next.id).not.toBe(id);
    expect(await b.claimAlert(next.id, 'incident.opened')).toBe(true);
  });
}

for (const engine of ENGINES) {
  it(`[${engine}] an incident's timeline: events in time order, seen by every instance, kept apart per incident`, async () => {
    const [a, b] = await twoStores(engine);
    const inc = await a.openIncident('api', '2026-11-24T10:00:00.000Z', 'HTTP 500', 3);
    const other = await a.openIncident('db', '2026-11-24T10:00:00.000Z', 'timeout', 3);
    const t0 = Date.parse('2026-11-24T10:00:00.000Z');
    await b.addIncidentEvent(inc.id, 'alerted', t0 + 1000, 'ops-mail, pager');
    await a.addIncidentEvent(inc.id, 'opened', t0);
    await a.addIncidentEvent(other.id, 'silenced', t0 + 5, 'deploy');
    await b.addIncidentEvent(inc.id, 'resolved', t0 + 60_000);
    expect(await b.incidentEvents(inc.id)).toEqual([
      { at: '2026-11-24T10:00:00.000Z', kind: 'opened' },
      { at: '2026-11-24T10:00:01.000Z', kind: 'alerted', detail: 'ops-mail, pager' },
      { at: '2026-11-24T10:01:00.000Z', kind: 'resolved' },
    ]);
    expect(await a.incidentEvents(other.id)).toEqual([{ at: '2026-11-24T10:00:00.005Z', kind: 'silenced', detail: 'deploy' }]);
    expect(await a.incidentEvents(inc.id, 1)).toHaveLength(1);
  });
}
