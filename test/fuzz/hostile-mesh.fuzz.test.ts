// Fuzzes mesh confirmation against hostile peers (issue 28, finding 3): fast-check scripts what
// each hostile peer's /api/peer/status answers at every step (forged votes, `alerted`,
// `confirmed` and `resolved_incident` claims, instance names, timestamps far in the future or
// past, malformed shapes), and the real ConfirmGate decides in-process with the views handed in,
// the clock stepped one check interval at a time. Honest peers never alert here, the worst case.
// Properties: nothing throws on any shape; with this instance down and a quorum of honest points
// agreeing, the incident opens, and its opening alert is sent here unless a point that verifiably
// voted down claimed it; after recovery the resolution is sent here unless a point that verifiably
// voted up showed it sent.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { parseMonitorConfig } from '../../src/config/monitor.js';
import { ConfirmGate, FRESH_MARGIN_MS, type MeshViews, type PeerView } from '../../daemon/services/monitor/confirm.js';
import type { PeerState } from '../../daemon/services/monitor/mesh.js';
import type { Snapshot } from '../../src/store/monitor.js';
import type { TargetStatus } from '../../daemon/services/monitor/status.js';
import { createLogger } from '../../daemon/logger.js';
import { settingsFromEnv } from './run.js';

const settings = settingsFromEnv(300);
const T0 = Date.parse('2026-03-01T12:00:00Z');
/** Mesh interval and check interval of the generated config, both 1 s. */
const STEP = 1_000;
const BOUND = 2 * STEP + STEP + FRESH_MARGIN_MS;
const iso = (ms: number): string => new Date(ms).toISOString();

const stamp: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('9999-12-31T23:59:59.999Z', '0001-01-01T00:00:00.000Z', '+275760-09-13T00:00:00.000Z', 'not a date', '', '2026-03-01T12:00:00Z'),
  fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => iso(ms)),
  fc.integer({ min: -600_000, max: 600_000 }).map((d) => iso(T0 + d)),
  fc.oneof(fc.integer(), fc.double(), fc.constant(null), fc.boolean(), fc.string({ maxLength: 12 })),
);
const claim: fc.Arbitrary<unknown> = fc.oneof(fc.boolean(), fc.constantFrom('true', 1, null, [true], { alerted: true }));
const statusWord: fc.Arbitrary<unknown> = fc.oneof(fc.constantFrom('down', 'operational', 'degraded', 'DOWN', 'down ', ''), fc.constantFrom(null, 0, true, ['down'], { down: true }));
const nested = (keys: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> => fc.oneof({ weight: 4, arbitrary: fc.record(keys, { requiredKeys: [] }) }, fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(null, 'x', [], 7));
const summary: fc.Arbitrary<unknown> = nested({
  label: fc.string({ maxLength: 8 }),
  status: statusWord,
  checked_at: stamp,
  response_time_ms: fc.oneof(fc.integer(), fc.string({ maxLength: 4 })),
  confirmed: claim,
  incident: nested({ started_at: stamp, alerted: claim }),
  resolved_incident: nested({ started_at: stamp, resolved_at: stamp, alerted: claim }),
});
/** JSON as a peer sends it, parsed as the poller parses it (so `__proto__` is an own key). */
const answer: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        instance: nested({ name: fc.oneof(fc.constantFrom('!', '\u0000', '0', 'a', '', 'zz'), fc.string({ maxLength: 6 }), fc.integer()) }),
        targets: fc.oneof({ weight: 5, arbitrary: fc.record({ api: summary }) }, fc.dictionary(fc.constantFrom('api', 'API', 'other', 'constructor', 'toString'), summary, { maxKeys: 3 }), fc.array(summary, { maxLength: 2 }), fc.jsonValue({ maxDepth: 2 })),
        peers: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: [] },
    ),
  },
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom('{"targets":{"__proto__":{"api":{"status":"down","incident":{"alerted":true}}}}}', '{"__proto__":{"targets":{"api":{"status":"down"}}}}', '{"targets":{"api":{"status":"down","__proto__":{"incident":{"alerted":true}}}}}').map((t) => JSON.parse(t) as unknown),
).map((v) => JSON.parse(JSON.stringify(v ?? null)) as unknown);

/** What the poller holds for a hostile peer at a step: an answer, a failed poll, a stale one, or none yet. */
type Held = { kind: 'answer'; data: unknown } | { kind: 'failed'; data: unknown } | { kind: 'stale'; data: unknown } | { kind: 'none' };
const held: fc.Arbitrary<Held> = fc.oneof(
  { weight: 6, arbitrary: answer.map((data) => ({ kind: 'answer' as const, data })) },
  answer.map((data) => ({ kind: 'failed' as const, data })),
  answer.map((data) => ({ kind: 'stale' as const, data })),
  fc.constant({ kind: 'none' as const }),
);

interface Scenario {
  self: string;
  honest: { name: string; down: boolean; confirmed: boolean }[];
  hostile: { name: string; script: Held[] }[];
  quorumSlack: number;
}
const NAMES = ['!', '0', '00', 'A', 'a', 'a0', 'b', 'm', 'z', 'é'];
const scenario: fc.Arbitrary<Scenario> = fc
  .uniqueArray(fc.constantFrom(...NAMES), { minLength: 2, maxLength: 6 })
  .chain((names) =>
    fc.record({
      self: fc.constant(names[0]!),
      honest: fc.tuple(...names.slice(1).map((name) => fc.record({ name: fc.constant(name), down: fc.boolean(), confirmed: fc.boolean() }))),
      hostileCount: fc.integer({ min: 1, max: names.length - 1 }),
      scripts: fc.array(fc.array(held, { minLength: 1, maxLength: 4 }), { minLength: names.length - 1, maxLength: names.length - 1 }),
      quorumSlack: fc.nat(3),
    }),
  )
  .map(({ self, honest, hostileCount, scripts, quorumSlack }) => ({
    self,
    // The last `hostileCount` peers are hostile; the rest honest.
    honest: honest.slice(0, honest.length - hostileCount),
    hostile: honest.slice(honest.length - hostileCount).map((p, i) => ({ name: p.name, script: scripts[i]! })),
    quorumSlack,
  }));

const sink = createLogger({ level: 'silent', stream: new Writable({ write: (_c, _e, cb) => cb() }), pretty: false });

/** A hostile peer's view as the poller would hold it at `now`. */
function hostileView(name: string, h: Held, now: number): PeerView {
  if (h.kind === 'none') return { name, state: undefined };
  const data = h.data as Record<string, unknown>;
  const state: PeerState = h.kind === 'failed' ? { status: 'down', last_seen: iso(now - 100), latency_ms: null, data, error: 'ECONNRESET' } : { status: 'up', last_seen: iso(now - (h.kind === 'stale' ? 60_000 : 100)), latency_ms: 1, data };
  return { name, state };
}

/** The rule, restated plainly: a fresh answer whose `api` summary is an object with exactly `status`. */
function freshSummary(h: Held): Record<string, unknown> | undefined {
  if (h.kind !== 'answer' || typeof h.data !== 'object' || h.data === null || Array.isArray(h.data)) return undefined;
  const targets = Object.hasOwn(h.data, 'targets') ? (h.data as { targets: unknown }).targets : undefined;
  if (typeof targets !== 'object' || targets === null || Array.isArray(targets) || !Object.hasOwn(targets, 'api')) return undefined;
  const s = (targets as { api: unknown }).api;
  return typeof s === 'object' && s !== null && !Array.isArray(s) ? (s as Record<string, unknown>) : undefined;
}
const sub = (s: Record<string, unknown>, key: string): Record<string, unknown> | undefined => {
  const v = Object.hasOwn(s, key) ? s[key] : undefined;
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
};
/** A point that verifiably votes down and claims the opening alert. */
function claimsOpening(h: Held): boolean {
  const s = freshSummary(h);
  const inc = s && sub(s, 'incident');
  return s?.status === 'down' && !!inc && Object.hasOwn(inc, 'alerted') && inc.alerted === true;
}
/** A point that verifiably votes up and shows a resolution sent for an incident ending after `startedMs`. */
function showsResolution(h: Held, startedMs: number): boolean {
  const s = freshSummary(h);
  const r = s && sub(s, 'resolved_incident');
  if (!s || !r || typeof s.status !== 'string' || s.status === 'down' || !Object.hasOwn(r, 'alerted') || r.alerted !== true) return false;
  const at = typeof r.resolved_at === 'string' ? Date.parse(r.resolved_at) : NaN;
  return Number.isFinite(at) && at >= startedMs;
}

/** One scenario end to end; throws when a property fails. */
async function run(sc: Scenario): Promise<void> {
  const honestDown = sc.honest.filter((p) => p.down).length;
  const quorum = Math.max(1, 1 + honestDown - sc.quorumSlack); // this instance and the honest peers reach it alone
  const peers = [...sc.honest.map((p) => p.name), ...sc.hostile.map((p) => p.name)];
  const yaml = `name: "${sc.self}"\nconfirm: { quorum: ${quorum} }\nmesh:\n  interval: 1s\n  peers:\n${peers.map((n, i) => `    - { name: "${n}", url: "http://127.0.0.1:${i + 1}" }`).join('\n')}\ntargets:\n  api:\n    url: http://127.0.0.1/h\n    interval: 1s\n`;
  const config = parseMonitorConfig(yaml);
  const t = config.targets[0]!;
  let now = T0;
  let step = 0;
  const heldAt = (p: Scenario['hostile'][number]): Held => p.script[step % p.script.length]!;
  const honestView = (p: Scenario['honest'][number]): PeerView => ({
    name: p.name,
    state: { status: 'up', last_seen: iso(now - 100), latency_ms: 1, data: { instance: { name: p.name }, targets: { api: { label: 'api', status: p.down ? 'down' : 'operational', response_time_ms: 1, checked_at: iso(now - 300), confirmed: p.down && p.confirmed } }, peers: {} } },
  });
  const mesh: MeshViews = { enabled: true, intervalMs: () => STEP, peerViews: () => [...sc.honest.map(honestView), ...sc.hostile.map((p) => hostileView(p.name, heldAt(p), now))], pollAll: async () => undefined };
  const gate = new ConfirmGate({ config: () => config, mesh: () => mesh, logger: sink, now: () => now });
  const snapNow = (status: string): Snapshot => ({ status, checked_at: iso(now), response_time_ms: 0 });
  const look = (snap: Snapshot): void => {
    const s: TargetStatus = { label: 'api', latest: snap, recent: [snap] };
    JSON.stringify(gate.decorate(t, s)); // never throws, always serialisable
    gate.confirmed(t, snap);
  };
  const claimedNow = (): boolean => sc.hostile.some((p) => claimsOpening(heldAt(p)));
  const horizon = (peers.length + 2) * Math.ceil(BOUND / STEP);
  const tick = (): void => {
    step++;
    now += STEP;
  };

  // Opening: the gate decides when the streak reaches the threshold, then is asked at each down check.
  look(snapNow('down'));
  const d = await gate.decide(t, snapNow('down'));
  expect(d.open).toBe(true); // the honest quorum is reached whatever the hostile peers say
  let sentHere = d.alert;
  let claimSeen = !d.alert && claimedNow();
  const incident = { id: 1, status: 'open', started_at: iso(now - STEP), ended_at: null, cause: 'HTTP 503', checks: 2, duration_s: null };
  for (let i = 0; !sentHere && i < horizon; i++) {
    tick();
    look(snapNow('down'));
    const claimed = claimedNow();
    if (gate.openingOwed(t, incident, snapNow('down'))) sentHere = true;
    else claimSeen ||= claimed;
  }
  if (!sentHere && !claimSeen) throw new Error(`the opening alert was silenced: nobody verifiably voting down claimed it, and it was not sent here within ${horizon} s`);
  if (sentHere) return; // the resolution then follows the engine's usual rule (its opening was claimed here)

  // Resolution: this instance recovered; the gate is asked at each check until it settles.
  const started = Date.parse(incident.started_at);
  const resolved = { ...incident, status: 'resolved', ended_at: iso(now), duration_s: Math.round((now - started) / 1000) };
  for (let i = 0; i < horizon; i++) {
    tick();
    look(snapNow('operational'));
    const shown = sc.hostile.some((p) => showsResolution(heldAt(p), started));
    const owed = gate.resolutionOwed(t, resolved);
    if (owed === 'wait') continue;
    if (owed.includes('incident.resolved')) return;
    if (owed.length === 0 && shown) return;
    throw new Error(`the resolution was given up (${JSON.stringify(owed)}) without a point verifiably voting up showing it sent`);
  }
  throw new Error(`the resolution was neither sent here nor shown sent within ${horizon} s`);
}

describe('mesh confirmation against hostile peers (issue 28)', () => {
  it(`never lets peer claims silence an alert, nor throws on any answer (${settings.runs} runs, seed ${settings.seed})`, async () => {
    await fc.assert(
      fc.asyncProperty(scenario, (sc) => run(sc)),
      { seed: settings.seed, numRuns: settings.runs },
    );
  }, 600_000);
});
