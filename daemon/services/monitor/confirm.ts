// Mesh confirmation (`confirm: {quorum: N}`): each vantage point's vote on a target from its
// latest result, the quorum decision that gates an incident, and which instance sends its alert.
import type { MonitorConfig, TargetConfig } from '../../../src/config/monitor.js';
import type { MonitorStore, Snapshot } from '../../../src/store/monitor.js';
import type { Logger } from '../../logger.js';
import type { IncidentGate } from './engine.js';
import type { PeerState } from './mesh.js';
import type { TargetStatus } from './status.js';

/**
 * A peer's answer counts for this long after its last successful poll beyond two mesh intervals:
 * the 5 s connect timeout, so one slow poll does not cost a vote.
 */
export const FRESH_MARGIN_MS = 5_000;
/** How long the instance about to send an alert waits for a fresh look at its peers. */
export const REFRESH_TIMEOUT_MS = 2_000;

/** One vantage point's view of a target: this instance, or a peer from its cached peer status. */
export interface VantagePoint {
  /** The name the mesh config gives the peer (this instance: its own `name`). */
  name: string;
  /** The instance's own name as it reports it (`instance.name`): used to rank possible senders. */
  instance: string;
  self: boolean;
  /** The latest status seen from there; null without a usable answer. */
  status: string | null;
  checked_at: string | null;
  /** `down`, `up` (any other status), or null: no vote. */
  vote: 'down' | 'up' | null;
  /** Why there is no vote: `no answer`, `stale`, `not checked there`, `not polled yet`. */
  reason?: string;
  /** The peer has an open incident for the target whose opening alert it sent. */
  alerted?: boolean;
  /** The peer sees the outage confirmed in its own view (its summary says `confirmed: true`). */
  confirmed?: boolean;
}

/** A peer as the mesh poller holds it. */
export interface PeerView {
  name: string;
  state: PeerState | undefined;
}

/** What the confirmation needs of the mesh (mesh.ts); an interface so tests can hand views in. */
export interface MeshViews {
  readonly enabled: boolean;
  intervalMs(): number;
  peerViews(): PeerView[];
  /** Polls every peer now (the gate bounds the wait). */
  pollAll(): Promise<void>;
}

export type Reason = 'confirmed' | 'regional' | 'too few voters';

export interface Decision {
  open: boolean;
  reason: Reason;
  quorum: number;
  /** Vantage points that vote down, by config name. */
  down: string[];
  /** Vantage points that vote at all. */
  voters: number;
  /**
   * The config name of the point that sends the alert: of the points that vote down and see the
   * outage confirmed (this instance, deciding, and peers saying `confirmed`), the lowest
   * instance name in byte order.
   */
  sender: string | undefined;
}

/** The quorum in force for a target: its own `confirm`, else the global one; undefined: no confirmation. */
export function quorumFor(config: MonitorConfig, t: TargetConfig): number | undefined {
  if (!config.mesh) return undefined;
  return (t.confirm ?? config.confirm)?.quorum;
}

/** Byte order of UTF-8 names: the same on every instance whatever its locale. */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** A peer's vote on `target`: only from a successful poll within `freshMs`, of a peer that checks it. */
export function peerPoint(peer: PeerView, target: string, nowMs: number, freshMs: number): VantagePoint {
  const s = peer.state;
  const none = (reason: string): VantagePoint => ({ name: peer.name, instance: peer.name, self: false, status: null, checked_at: null, vote: null, reason });
  if (!s) return none('not polled yet');
  if (s.status !== 'up' || !s.data) return none('no answer');
  const seen = s.last_seen ? Date.parse(s.last_seen) : NaN;
  if (!(nowMs - seen <= freshMs)) return none('stale');
  const identity = s.data.instance as { name?: unknown } | undefined;
  const instance = typeof identity?.name === 'string' && identity.name ? identity.name : peer.name;
  const summary = (s.data.targets as Record<string, { status?: unknown; checked_at?: unknown; confirmed?: unknown; incident?: { alerted?: unknown } } | undefined> | undefined)?.[target];
  if (!summary || typeof summary.status !== 'string') return { ...none('not checked there'), instance };
  return {
    name: peer.name,
    instance,
    self: false,
    status: summary.status,
    checked_at: typeof summary.checked_at === 'string' ? summary.checked_at : null,
    vote: summary.status === 'down' ? 'down' : 'up',
    ...(summary.incident?.alerted === true ? { alerted: true } : {}),
    ...(summary.confirmed === true ? { confirmed: true } : {}),
  };
}

/** This instance's point, from its own latest result. */
export function selfPoint(name: string, latest: Pick<Snapshot, 'status' | 'checked_at'> | null): VantagePoint {
  if (!latest) return { name, instance: name, self: true, status: null, checked_at: null, vote: null, reason: 'not checked yet' };
  return { name, instance: name, self: true, status: latest.status, checked_at: latest.checked_at, vote: latest.status === 'down' ? 'down' : 'up' };
}

/**
 * The quorum rule: an incident is confirmed when at least `quorum` points vote down. Points
 * without a vote do not count either way, so with fewer than `quorum` voters nothing can be
 * confirmed: an instance cut off from its peers is the likeliest one to be wrong.
 */
export function decide(points: VantagePoint[], quorum: number): Decision {
  const downPoints = points.filter((p) => p.vote === 'down');
  const voters = points.filter((p) => p.vote !== null).length;
  const sender = downPoints.filter((p) => p.self || p.confirmed).sort((a, b) => byteOrder(a.instance, b.instance) || byteOrder(a.name, b.name))[0]?.name;
  const down = downPoints.map((p) => p.name);
  if (downPoints.length >= quorum) return { open: true, reason: 'confirmed', quorum, down, voters, sender };
  return { open: false, reason: voters < quorum ? 'too few voters' : 'regional', quorum, down, voters, sender };
}

export interface ConfirmDeps {
  config(): MonitorConfig;
  mesh(): MeshViews;
  logger: Logger;
  now(): number;
}

/** The engine's incident gate, and the vantage points shown in statuses. */
export class ConfirmGate implements IncidentGate {
  /** The reason last logged per target while it stays down, so the log says it once. */
  private readonly logged = new Map<string, Reason>();

  constructor(private readonly deps: ConfirmDeps) {}

  private freshMs(): number {
    return 2 * this.deps.mesh().intervalMs() + FRESH_MARGIN_MS;
  }

  /** Every vantage point of a target: this instance first, then the peers that check it or did not answer. */
  points(target: string, latest: Pick<Snapshot, 'status' | 'checked_at'> | null): VantagePoint[] {
    const now = this.deps.now();
    const fresh = this.freshMs();
    const peers = this.deps.mesh().peerViews().map((p) => peerPoint(p, target, now, fresh));
    return [selfPoint(this.deps.config().name, latest), ...peers.filter((p) => p.reason !== 'not checked there')];
  }

  async decide(t: TargetConfig, snap: Snapshot): Promise<{ open: boolean; alert: boolean }> {
    const quorum = quorumFor(this.deps.config(), t);
    if (quorum === undefined) return { open: true, alert: true };
    let points = this.points(t.name, snap);
    let d = decide(points, quorum);
    if (d.open && points[0]!.name === d.sender) {
      // About to send: look again, so a lower-named peer that went down meanwhile, or one that
      // already sent for this outage, is seen before the alert goes out.
      await this.refresh();
      points = this.points(t.name, snap);
      d = decide(points, quorum);
    }
    if (!d.open) {
      this.logOnce(t.name, d);
      return { open: false, alert: false };
    }
    const alertedBy = points.find((p) => p.alerted)?.name;
    const alert = points[0]!.name === d.sender && alertedBy === undefined;
    this.logged.delete(t.name);
    this.deps.logger.warn({ target: t.name, down_from: d.down, quorum, sender: alertedBy ?? d.sender, alerting: alert }, 'down confirmed by the mesh quorum');
    return { open: true, alert };
  }

  /** A result that is not down ends the outage: the next one logs its reason again. */
  observe(target: string, snap: Snapshot | undefined): void {
    if (snap && snap.status !== 'down') this.logged.delete(target);
  }

  /**
   * The mesh fields of a status, computed at response time from the mesh cache: each vantage
   * point's latest status, `down_from`, and `regional: true` when down from fewer places than
   * the quorum. A new object: cached statuses are never changed.
   */
  decorate(t: TargetConfig, s: TargetStatus): TargetStatus {
    if (!this.deps.mesh().enabled) return s;
    const points = this.points(t.name, s.latest);
    const out: TargetStatus = { ...s, vantage_points: points.map(pointJson) };
    const down = points.filter((p) => p.vote === 'down').map((p) => p.name);
    if (down.length) out.down_from = down;
    const quorum = quorumFor(this.deps.config(), t);
    if (quorum !== undefined && down.length > 0 && down.length < quorum) out.regional = true;
    return out;
  }

  /**
   * Whether this instance, from its own latest result and its view of the peers, sees the target
   * down from at least the quorum: `confirmed` in its peer status summaries, which tells the
   * others whether it can be the sender. Undefined when the target has no confirmation.
   */
  confirmed(t: TargetConfig, latest: Pick<Snapshot, 'status' | 'checked_at' | 'maintenance'> | null): boolean | undefined {
    const quorum = quorumFor(this.deps.config(), t);
    if (quorum === undefined) return undefined;
    // In a maintenance window this instance opens no incident, so it must not be the sender.
    if (latest?.maintenance) return false;
    return decide(this.points(t.name, latest), quorum).open;
  }

  private async refresh(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.deps.mesh().pollAll(), new Promise<void>((r) => (timer = setTimeout(r, REFRESH_TIMEOUT_MS)))]);
    clearTimeout(timer);
  }

  private logOnce(target: string, d: Decision): void {
    if (this.logged.get(target) === d.reason) return;
    this.logged.set(target, d.reason);
    const why =
      d.reason === 'too few voters'
        ? `only ${d.voters} vantage point${d.voters === 1 ? '' : 's'} answered; a quorum of ${d.quorum} cannot be reached, so no incident opens`
        : `down from ${d.down.length} of ${d.voters} vantage points, below the quorum of ${d.quorum}: a regional problem, no incident`;
    this.deps.logger.warn({ target, down_from: d.down, voters: d.voters, quorum: d.quorum }, `down not confirmed: ${why}`);
  }
}

/** A vantage point as statuses show it. */
function pointJson(p: VantagePoint): Record<string, unknown> {
  return { name: p.name, ...(p.self ? { self: true } : {}), status: p.status, checked_at: p.checked_at, ...(p.reason ? { error: p.reason } : {}) };
}

/**
 * What this instance adds to its /api/peer/status target summaries for the others' decisions:
 * `confirmed` (targets with a quorum), and `incident: {started_at, alerted}` while an incident
 * is open here, so a peer about to alert sees that this instance already did.
 */
export async function summaryExtras(gate: ConfirmGate, config: MonitorConfig, store: MonitorStore, statuses: Record<string, TargetStatus>): Promise<Record<string, Record<string, unknown>>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const t of config.targets) {
    const s = statuses[t.name];
    if (!s?.latest) continue;
    const extra: Record<string, unknown> = {};
    const confirmed = gate.confirmed(t, s.latest);
    if (confirmed !== undefined) extra.confirmed = confirmed;
    const inc = s.current_incident as { id: number; started_at: string } | undefined;
    if (inc) extra.incident = { started_at: inc.started_at, alerted: await store.alertClaimed(inc.id, 'incident.opened') };
    if (Object.keys(extra).length) out[t.name] = extra;
  }
  return out;
}
