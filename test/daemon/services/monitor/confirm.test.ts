// Mesh confirmation without a network (confirm.ts, issue 15): a peer votes only from a fresh,
// successful poll of a target it checks; the quorum counts down votes, so too few voters
// confirm nothing; the sender is the lowest name (as this instance's config names each peer)
// among the confirmed down-voters, and nobody sends when a peer voting down already did.
import { describe, expect, it } from 'vitest';
import { parseMonitorConfig, type MonitorConfig } from '../../../../src/config/monitor.js';
import { ConfirmGate, FRESH_MARGIN_MS, byteOrder, decide, peerPoint, type MeshViews, type PeerView } from '../../../../daemon/services/monitor/confirm.js';
import type { PeerState } from '../../../../daemon/services/monitor/mesh.js';
import type { Snapshot } from '../../../../src/store/monitor.js';
import type { TargetStatus } from '../../../../daemon/services/monitor/status.js';
import { createLogger } from '../../../../daemon/logger.js';
import { Writable } from 'node:stream';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const INTERVAL = 1_000;
const FRESH = 2 * INTERVAL + FRESH_MARGIN_MS;
const iso = (ms: number): string => new Date(ms).toISOString();

/** A peer that answered `agoMs` ago with these target summaries. */
function answered(name: string, targets: Record<string, Record<string, unknown>>, agoMs = 100, instance = name): PeerView {
  const state: PeerState = { status: 'up', last_seen: iso(NOW - agoMs), latency_ms: 3, data: { instance: { name: instance }, targets, peers: {} } };
  return { name, state };
}
const summary = (status: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ label: 'api', status, response_time_ms: 1, checked_at: iso(NOW - 500), ...extra });
const down = (extra: Record<string, unknown> = {}): Record<string, Record<string, unknown>> => ({ api: summary('down', extra) });
const up = (): Record<string, Record<string, unknown>> => ({ api: summary('operational') });

describe('a peer vote', () => {
  it('comes from the cached summary of a fresh, successful poll', () => {
    expect(peerPoint(answered('b', down()), 'api', NOW, FRESH)).toMatchObject({ name: 'b', status: 'down', vote: 'down' });
    expect(peerPoint(answered('b', up()), 'api', NOW, FRESH)).toMatchObject({ status: 'operational', vote: 'up' });
    expect(peerPoint(answered('b', { api: summary('degraded') }), 'api', NOW, FRESH).vote).toBe('up');
  });

  it('takes no free text from a peer: an unknown status is no vote, and checked_at is a real time or null (issue 28)', () => {
    // Vantage points are shown on the public status page and in /api/status.
    for (const status of ['<script>alert(1)</script>', 'x'.repeat(1_000_000), 'Down', 'maintenance', '']) {
      expect(peerPoint(answered('b', { api: summary(status) }), 'api', NOW, FRESH), status.slice(0, 20)).toMatchObject({ vote: null, status: null, checked_at: null, reason: 'unreadable answer' });
    }
    for (const checked_at of ['yesterday', 'x'.repeat(100_000), 42, null, '2026-03-01T11:59:59.5+00:00 trailing junk that is long enough']) {
      expect(peerPoint(answered('b', down({ checked_at })), 'api', NOW, FRESH), String(checked_at).slice(0, 20)).toMatchObject({ vote: 'down', checked_at: null });
    }
    expect(peerPoint(answered('b', down({ checked_at: '2026-03-01T11:59:59.5+00:00' })), 'api', NOW, FRESH).checked_at).toBe('2026-03-01T11:59:59.500Z');
  });

  it('is no vote when the peer did not answer its last poll, even with older data cached', () => {
    const failed: PeerView = { name: 'b', state: { status: 'down', last_seen: iso(NOW - 100), latency_ms: null, data: { targets: down() }, error: 'ECONNREFUSED' } };
    expect(peerPoint(failed, 'api', NOW, FRESH)).toMatchObject({ vote: null, status: null, reason: 'no answer' });
    expect(peerPoint({ name: 'b', state: undefined }, 'api', NOW, FRESH)).toMatchObject({ vote: null, reason: 'not polled yet' });
  });

  it('is no vote when the last successful poll is older than two mesh intervals plus the margin', () => {
    expect(peerPoint(answered('b', down(), FRESH), 'api', NOW, FRESH).vote).toBe('down');
    expect(peerPoint(answered('b', down(), FRESH + 1), 'api', NOW, FRESH)).toMatchObject({ vote: null, reason: 'stale' });
  });

  it('is no vote from a peer that does not check the target', () => {
    expect(peerPoint(answered('b', { other: summary('down') }), 'api', NOW, FRESH)).toMatchObject({ vote: null, reason: 'not checked there' });
  });

  it('carries the peer\'s own instance name, its confirmed flag and whether it alerted', () => {
    expect(peerPoint(answered('peer-b', down({ confirmed: true, incident: { started_at: iso(NOW), alerted: true } }), 100, 'b'), 'api', NOW, FRESH)).toMatchObject({ name: 'peer-b', instance: 'b', confirmed: true, alerted: true });
  });
});

describe('the quorum decision', () => {
  const self = (status: string) => ({ name: 'a', instance: 'a', self: true, status, checked_at: iso(NOW), vote: status === 'down' ? ('down' as const) : ('up' as const) });
  const peer = (name: string, vote: 'down' | 'up' | null, confirmed = true) => ({ name, instance: name, self: false, status: vote === null ? null : vote === 'down' ? 'down' : 'operational', checked_at: null, vote, ...(confirmed ? { confirmed: true } : {}) });

  it('opens when at least quorum points, this one included, vote down', () => {
    expect(decide([self('down'), peer('b', 'down'), peer('c', 'up')], 2)).toMatchObject({ open: true, reason: 'confirmed', down: ['a', 'b'], voters: 3 });
    expect(decide([self('down')], 1)).toMatchObject({ open: true, down: ['a'] });
  });

  it('down from fewer than quorum with enough voters is regional', () => {
    expect(decide([self('down'), peer('b', 'up'), peer('c', 'up')], 2)).toMatchObject({ open: false, reason: 'regional', down: ['a'], voters: 3 });
  });

  it('a peer that does not answer counts neither way: with fewer voters than the quorum nothing is confirmed', () => {
    expect(decide([self('down'), peer('b', null), peer('c', 'up')], 2)).toMatchObject({ open: false, reason: 'regional', voters: 2 });
    expect(decide([self('down'), peer('b', null), peer('c', null)], 2)).toMatchObject({ open: false, reason: 'too few voters', voters: 1 });
  });

  it('the sender is the lowest config name (byte order) among the down-voters that see it confirmed', () => {
    expect(decide([self('down'), peer('b', 'down')], 2).sender).toBe('a');
    expect(decide([{ ...self('down'), name: 'c', instance: 'c' }, peer('b', 'down'), peer('a', 'up')], 2).sender).toBe('b');
    // b is down but does not (yet) see the quorum itself: it will not send, so c does.
    expect(decide([{ ...self('down'), name: 'c', instance: 'c' }, peer('b', 'down', false)], 2).sender).toBe('c');
    // Byte order, not locale order: upper case sorts before lower case.
    expect(decide([self('down'), peer('B', 'down')], 2).sender).toBe('B');
    expect(byteOrder('é', 'z')).toBeGreaterThan(0);
  });
});

function gateWith(peers: PeerView[], yaml: string, name = 'a'): { gate: ConfirmGate; logs: string[]; polls: () => number } {
  const config: MonitorConfig = parseMonitorConfig(`name: ${name}\n${yaml}`);
  const logs: string[] = [];
  const sink = new Writable({ write: (c: Buffer, _e, cb) => (logs.push(c.toString()), cb()) });
  let polls = 0;
  const mesh: MeshViews = { enabled: config.mesh !== undefined, intervalMs: () => INTERVAL, peerViews: () => peers, pollAll: async () => void polls++ };
  const gate = new ConfirmGate({ config: () => config, mesh: () => mesh, logger: createLogger({ level: 'debug', stream: sink, pretty: false }), now: () => NOW });
  return { gate, logs, polls: () => polls };
}
const MESH = 'mesh:\n  interval: 1s\n  peers:\n    - { name: b, url: "http://127.0.0.1:1" }\n    - { name: c, url: "http://127.0.0.1:2" }\n';
const QUORUM2 = `confirm: { quorum: 2 }\n${MESH}targets:\n  api:\n    url: http://127.0.0.1/h\n`;
const snap: Snapshot = { status: 'down', checked_at: iso(NOW), response_time_ms: 0, error: 'HTTP 503' };

describe('the incident gate', () => {
  it('without confirm every streak opens and alerts, as before', async () => {
    const { gate } = gateWith([answered('b', up()), answered('c', up())], `${MESH}targets:\n  api:\n    url: http://127.0.0.1/h\n`);
    const cfg = parseMonitorConfig(`${MESH}targets:\n  api:\n    url: http://127.0.0.1/h\n`);
    expect(await gate.decide(cfg.targets[0]!, snap)).toEqual({ open: true, alert: true });
  });

  it('down here only: no incident, and the reason is logged once per outage', async () => {
    const { gate, logs } = gateWith([answered('b', up()), answered('c', up())], QUORUM2);
    const t = parseMonitorConfig(QUORUM2).targets[0]!;
    expect(await gate.decide(t, snap)).toEqual({ open: false, alert: false });
    expect(await gate.decide(t, snap)).toEqual({ open: false, alert: false });
    expect(logs.filter((l) => l.includes('down not confirmed')).length).toBe(1);
    expect(logs.join('')).toContain('below the quorum of 2: a regional problem');
    gate.observe('api', [{ ...snap, status: 'operational' }]);
    await gate.decide(t, snap);
    expect(logs.filter((l) => l.includes('down not confirmed')).length).toBe(2);
  });

  it('peers that do not answer: too few voters, no incident, and the log says why', async () => {
    const gone: PeerView = { name: 'b', state: { status: 'down', last_seen: null, latency_ms: null, error: 'ECONNREFUSED' } };
    const { gate, logs } = gateWith([gone, { name: 'c', state: undefined }], QUORUM2);
    expect(await gate.decide(parseMonitorConfig(QUORUM2).targets[0]!, snap)).toEqual({ open: false, alert: false });
    expect(logs.join('')).toContain('only 1 vantage point answered; a quorum of 2 cannot be reached');
  });

  it('down for two of three: the lowest name sends after a fresh look at the peers; the others open without alerting', async () => {
    const a = gateWith([answered('b', down()), answered('c', up())], QUORUM2);
    const t = parseMonitorConfig(QUORUM2).targets[0]!;
    expect(await a.gate.decide(t, snap)).toEqual({ open: true, alert: true });
    expect(a.polls()).toBe(1);
    const b = gateWith([answered('a', down({ confirmed: true })), answered('c', up())], QUORUM2, 'b');
    expect(await b.gate.decide(t, snap)).toEqual({ open: true, alert: false });
    expect(b.polls()).toBe(0);
  });

  it('does not send when a peer already shows an alerted incident for this outage', async () => {
    const { gate } = gateWith([answered('b', down({ confirmed: true, incident: { started_at: iso(NOW - 2000), alerted: true } })), answered('c', up())], QUORUM2);
    expect(await gate.decide(parseMonitorConfig(QUORUM2).targets[0]!, snap)).toEqual({ open: true, alert: false });
  });

  it('a target with its own quorum overrides the global one', async () => {
    const yaml = `confirm: { quorum: 2 }\n${MESH}targets:\n  api:\n    url: http://127.0.0.1/h\n    confirm: { quorum: 1 }\n`;
    const { gate } = gateWith([answered('b', up()), answered('c', up())], yaml);
    expect(await gate.decide(parseMonitorConfig(yaml).targets[0]!, snap)).toEqual({ open: true, alert: true });
  });

  it('a status shows every vantage point, this one marked, and regional when below the quorum', () => {
    const gone: PeerView = { name: 'c', state: { status: 'down', last_seen: null, latency_ms: null, error: 'ECONNREFUSED' } };
    const { gate } = gateWith([answered('b', up()), gone], QUORUM2);
    const t = parseMonitorConfig(QUORUM2).targets[0]!;
    const s: TargetStatus = { label: 'api', latest: snap, recent: [snap] };
    const out = gate.decorate(t, s);
    expect(out.vantage_points).toEqual([
      { name: 'a', self: true, status: 'down', checked_at: snap.checked_at },
      { name: 'b', status: 'operational', checked_at: iso(NOW - 500) },
      { name: 'c', status: null, checked_at: null, error: 'no answer' },
    ]);
    expect(out).toMatchObject({ down_from: ['a'], regional: true });
    expect(s.vantage_points).toBeUndefined(); // the cached status is not changed
    const both = gateWith([answered('b', down()), gone], QUORUM2).gate;
    expect(both.confirmed(t, snap)).toBe(true);
    expect(both.confirmed(t, { ...snap, maintenance: true })).toBe(false); // never the sender in maintenance
    expect(gate.confirmed(t, snap)).toBe(false);
    const confirmed = both.decorate(t, s);
    expect(confirmed.down_from).toEqual(['a', 'b']);
    expect(confirmed.regional).toBeUndefined();
  });
});

// Issue 28, finding 3: one mesh peer must not silence an alert. A peer's claims (alerted,
// confirmed, its own instance name) are hints: only a point voting down may claim the opening
// alert, the sender is ranked by the name this instance's config gives each peer, and when the
// elected sender's alert is not confirmed within a bound this instance sends it itself.
describe('peer claims are hints (issue 28)', () => {
  const t = parseMonitorConfig(QUORUM2).targets[0]!;
  const incident = { id: 7, status: 'open', started_at: iso(NOW - 3000), ended_at: null, cause: 'HTTP 503', checks: 2, duration_s: null };
  /** The bound of the test config: two mesh intervals, the target's check interval (60 s default), the margin. */
  const BOUND = 2 * INTERVAL + 60_000 + FRESH_MARGIN_MS;

  /** A gate whose clock the test moves. */
  function clocked(peers: PeerView[], name = 'a', yaml = QUORUM2): { gate: ConfirmGate; logs: string[]; at: (ms: number) => void } {
    const config: MonitorConfig = parseMonitorConfig(`name: ${name}\n${yaml}`);
    const logs: string[] = [];
    const sink = new Writable({ write: (c: Buffer, _e, cb) => (logs.push(c.toString()), cb()) });
    let now = NOW;
    const mesh: MeshViews = { enabled: true, intervalMs: () => INTERVAL, peerViews: () => peers.map((p) => ({ name: p.name, state: p.state && { ...p.state, last_seen: iso(now - 100) } })), pollAll: async () => undefined };
    const gate = new ConfirmGate({ config: () => config, mesh: () => mesh, logger: createLogger({ level: 'debug', stream: sink, pretty: false }), now: () => now });
    return { gate, logs, at: (ms) => (now = ms) };
  }
  const alerted = { incident: { started_at: iso(NOW - 2000), alerted: true } };

  it('a peer voting up that claims it already alerted does not suppress the alert', async () => {
    expect(peerPoint(answered('c', { api: summary('operational', alerted) }), 'api', NOW, FRESH).alerted).toBeUndefined();
    const { gate } = gateWith([answered('b', down({ confirmed: true })), answered('c', { api: summary('operational', alerted) })], QUORUM2);
    expect(await gate.decide(t, snap)).toEqual({ open: true, alert: true });
  });

  it('a peer reporting a forged instance name that sorts first is ranked by the name the local config gives it', async () => {
    // b calls itself "0" (before "a" in byte order), votes down, says confirmed, and never alerts.
    const forged = answered('b', down({ confirmed: true }), 100, '0');
    expect(decide([{ name: 'a', instance: 'a', self: true, status: 'down', checked_at: null, vote: 'down' }, peerPoint(forged, 'api', NOW, FRESH)], 2).sender).toBe('a');
    const { gate } = gateWith([forged, answered('c', up())], QUORUM2);
    expect(await gate.decide(t, snap)).toEqual({ open: true, alert: true });
  });

  it('an elected sender that never confirms its alert: this instance sends it after the bound', async () => {
    // This instance is c; b is elected (b < c), votes down, says confirmed, and never alerts.
    const { gate, logs, at } = clocked([answered('b', down({ confirmed: true })), answered('a', up())], 'c', QUORUM2.replace('name: b', 'name: a').replace('name: c', 'name: b'));
    expect(await gate.decide(t, snap)).toEqual({ open: true, alert: false });
    expect(gate.openingOwed(t, incident, snap)).toBe(false);
    at(NOW + BOUND - 1);
    expect(gate.openingOwed(t, incident, snap)).toBe(false);
    at(NOW + BOUND);
    expect(gate.openingOwed(t, incident, snap)).toBe(true);
    expect(logs.join('')).toContain('sending it from here');
  });

  it('an elected sender that confirms its alert (voting down, alerted) keeps this instance quiet, for good', async () => {
    const peers = [answered('b', down({ confirmed: true })), answered('a', up())];
    const { gate, at } = clocked(peers, 'c', QUORUM2.replace('name: b', 'name: a').replace('name: c', 'name: b'));
    expect(await gate.decide(t, snap)).toEqual({ open: true, alert: false });
    peers[0] = answered('b', down({ confirmed: true, ...alerted }));
    expect(gate.openingOwed(t, incident, snap)).toBe(false);
    peers[0] = { name: 'b', state: undefined }; // gone afterwards: it did send
    at(NOW + 10 * BOUND);
    expect(gate.openingOwed(t, incident, snap)).toBe(false);
  });

  it('further down the election order waits one bound per rank, so the next honest point sends first', async () => {
    // d is third among the confirmed down-voters (b, c, d): it waits two bounds.
    const yaml = `confirm: { quorum: 2 }\nmesh:\n  interval: 1s\n  peers:\n    - { name: b, url: "http://127.0.0.1:1" }\n    - { name: c, url: "http://127.0.0.1:2" }\ntargets:\n  api:\n    url: http://127.0.0.1/h\n`;
    const { gate, at } = clocked([answered('b', down({ confirmed: true })), answered('c', down({ confirmed: true }))], 'd', yaml);
    expect(await gate.decide(t, snap)).toEqual({ open: true, alert: false });
    at(NOW + 2 * BOUND - 1);
    expect(gate.openingOwed(t, incident, snap)).toBe(false);
    at(NOW + 2 * BOUND);
    expect(gate.openingOwed(t, incident, snap)).toBe(true);
  });

  it('a resolution that no peer provably sent is sent here after the bound; one a peer shows sent is not', async () => {
    const resolved = { ...incident, status: 'resolved', ended_at: iso(NOW), duration_s: 3 };
    // b claimed the opening (voting down, alerted), so this instance stayed quiet.
    const peers = [answered('b', down({ confirmed: true, ...alerted })), answered('c', up())];
    const { gate, logs, at } = clocked(peers);
    expect(await gate.decide(t, snap)).toEqual({ open: true, alert: false });
    expect(gate.openingOwed(t, incident, snap)).toBe(false);
    // Recovered: b is up again but shows no sent resolution.
    peers[0] = answered('b', up());
    expect(gate.resolutionOwed(t, resolved)).toBe('wait');
    at(NOW + BOUND - 1);
    expect(gate.resolutionOwed(t, resolved)).toBe('wait');
    at(NOW + BOUND);
    expect(gate.resolutionOwed(t, resolved)).toEqual(['incident.resolved']);
    expect(logs.join('')).toContain('sending it from here');

    // The same, but b shows its resolution sent (up, resolved_incident alerted): nothing to send.
    const peers2 = [answered('b', down({ confirmed: true, ...alerted })), answered('c', up())];
    const two = clocked(peers2);
    await two.gate.decide(t, snap);
    two.gate.openingOwed(t, incident, snap);
    peers2[0] = answered('b', { api: summary('operational', { resolved_incident: { started_at: iso(NOW - 2000), resolved_at: iso(NOW), alerted: true } }) });
    expect(two.gate.resolutionOwed(t, resolved)).toEqual([]);
    // A down-voting peer cannot claim the resolution.
    const peers3 = [answered('b', down({ confirmed: true, ...alerted })), answered('c', up())];
    const three = clocked(peers3);
    await three.gate.decide(t, snap);
    three.gate.openingOwed(t, incident, snap);
    peers3[0] = answered('b', down({ resolved_incident: { started_at: iso(NOW - 2000), resolved_at: iso(NOW), alerted: true } }));
    expect(three.gate.resolutionOwed(t, resolved)).toBe('wait');
    three.at(NOW + BOUND);
    expect(three.gate.resolutionOwed(t, resolved)).toEqual(['incident.resolved']);
  });

  it('an incident resolved before anyone provably sent its opening: both alerts are sent here', async () => {
    const resolved = { ...incident, status: 'resolved', ended_at: iso(NOW), duration_s: 3 };
    const { gate, at } = clocked([answered('b', down({ confirmed: true })), answered('a', up())], 'c', QUORUM2.replace('name: b', 'name: a').replace('name: c', 'name: b'));
    await gate.decide(t, snap);
    expect(gate.openingOwed(t, incident, snap)).toBe(false);
    expect(gate.resolutionOwed(t, resolved)).toBe('wait'); // resolved here before the bound
    at(NOW + BOUND);
    expect(gate.resolutionOwed(t, resolved)).toEqual(['incident.opened', 'incident.resolved']);
  });
});
