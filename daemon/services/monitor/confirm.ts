// Mesh confirmation (`confirm: {quorum: N}`): each vantage point's vote on a target from its
// latest result, the quorum decision that gates an incident, and which instance sends its alerts.
import type { MonitorConfig, TargetConfig } from '../../../src/config/monitor.js';
import type { Incident, MonitorStore, Snapshot } from '../../../src/store/monitor.js';
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
  /** The name the mesh config gives the peer (this instance: its own `name`): ranks possible senders. */
  name: string;
  /**
   * The instance's own name as it reports it (`instance.name`), for logs only: a peer could call
   * itself anything, so it never ranks the peer (issue 28).
   */
  instance: string;
  self: boolean;
  /** The latest status seen from there; null without a usable answer. */
  status: string | null;
  checked_at: string | null;
  /** `down`, `up` (any other status), or null: no vote. */
  vote: 'down' | 'up' | null;
  /** Why there is no vote: `no answer`, `stale`, `not checked there`, `not polled yet`. */
  reason?: string;
  /**
   * The peer, voting down, has an open incident for the target whose opening alert it sent. A
   * claim, taken only from a point that votes down: one that sees the target up has no outage to
   * alert for.
   */
  alerted?: boolean;
  /** The peer sees the outage confirmed in its own view (its summary says `confirmed: true`). */
  confirmed?: boolean;
  /**
   * The peer, voting up, says its latest incident for the target resolved at this time (ms) and
   * that it sent the resolution alert (`resolved_incident: {resolved_at, alerted: true}`).
   */
  resolvedAlertedAt?: number;
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
   * outage confirmed (this instance, deciding, and peers saying `confirmed`), the lowest name in
   * byte order, each peer by the name this instance's config gives it.
   */
  sender: string | undefined;
}

/** The alert events of an incident's two transitions. */
export type AlertEventName = 'incident.opened' | 'incident.resolved';

/** The quorum in force for a target: its own `confirm`, else the global one; undefined: no confirmation. */
export function quorumFor(config: MonitorConfig, t: TargetConfig): number | undefined {
  if (!config.mesh) return undefined;
  return (t.confirm ?? config.confirm)?.quorum;
}

/** Byte order of UTF-8 names: the same on every instance whatever its locale. */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** A JSON object (not an array, not null) from a peer's answer, else undefined. */
function objectOf(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** An own property only: a target named like an Object.prototype member reads nothing inherited. */
function own(o: Record<string, unknown> | undefined, key: string): unknown {
  return o && Object.hasOwn(o, key) ? o[key] : undefined;
}

/** The statuses a check gives (checks/health.ts); anything else a peer reports is not a vote. */
const PEER_STATUSES = new Set(['operational', 'degraded', 'down']);

/**
 * A peer's vote on `target`: only from a successful poll within `freshMs`, of a peer that checks
 * it. Everything in the answer is the peer's say-so: any shape is read without throwing, and its
 * claims (`alerted`, `confirmed`, `resolved_incident`) are hints that the gate checks (issue 28).
 */
export function peerPoint(peer: PeerView, target: string, nowMs: number, freshMs: number): VantagePoint {
  const s = peer.state;
  const none = (reason: string): VantagePoint => ({ name: peer.name, instance: peer.name, self: false, status: null, checked_at: null, vote: null, reason });
  if (!s) return none('not polled yet');
  const data = objectOf(s.data);
  if (s.status !== 'up' || !data) return none('no answer');
  const seen = s.last_seen ? Date.parse(s.last_seen) : NaN;
  if (!(nowMs - seen <= freshMs)) return none('stale');
  const reported = own(objectOf(own(data, 'instance')), 'name');
  const instance = typeof reported === 'string' && reported ? reported : peer.name;
  const summary = objectOf(own(objectOf(own(data, 'targets')), target));
  const status = own(summary, 'status');
  if (typeof status !== 'string') return { ...none('not checked there'), instance };
  // What a peer says is shown on the public status page and in /api/status: only a status this
  // monitor itself could report, and a real time, never the peer's free text.
  if (!PEER_STATUSES.has(status)) return { ...none('unreadable answer'), instance };
  const rawCheckedAt = own(summary, 'checked_at');
  const checkedAt = typeof rawCheckedAt === 'string' && rawCheckedAt.length <= 40 && Number.isFinite(Date.parse(rawCheckedAt)) ? new Date(Date.parse(rawCheckedAt)).toISOString() : null;
  const vote = status === 'down' ? 'down' : 'up';
  const resolved = objectOf(own(summary, 'resolved_incident'));
  const resolvedAt = typeof own(resolved, 'resolved_at') === 'string' ? Date.parse(own(resolved, 'resolved_at') as string) : NaN;
  return {
    name: peer.name,
    instance,
    self: false,
    status,
    checked_at: checkedAt,
    vote,
    // Only a point voting down can have sent an opening alert for this outage; only one voting
    // up can have sent its resolution.
    ...(vote === 'down' && own(objectOf(own(summary, 'incident')), 'alerted') === true ? { alerted: true } : {}),
    ...(own(summary, 'confirmed') === true ? { confirmed: true } : {}),
    ...(vote === 'up' && own(resolved, 'alerted') === true && Number.isFinite(resolvedAt) ? { resolvedAlertedAt: resolvedAt } : {}),
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
  const sender = senders(points)[0];
  const down = downPoints.map((p) => p.name);
  if (downPoints.length >= quorum) return { open: true, reason: 'confirmed', quorum, down, voters, sender };
  return { open: false, reason: voters < quorum ? 'too few voters' : 'regional', quorum, down, voters, sender };
}

/**
 * The points that may send an opening alert, in election order: those voting down that see the
 * outage confirmed (this instance, deciding, and peers saying `confirmed`), by name in byte
 * order. The name is the one this instance's config gives each peer, never the name a peer
 * reports for itself, so a peer cannot put itself first by calling itself "0"; every instance
 * ranks the same points the same way as long as the mesh configs name each instance as it names
 * itself, and where they do not, the fallback in `openingOwed` still gets the alert out.
 */
export function senders(points: VantagePoint[]): string[] {
  return points
    .filter((p) => p.vote === 'down' && (p.self || p.confirmed))
    .map((p) => p.name)
    .sort(byteOrder);
}

/** An incident that opened here while another point was to send its alerts: what has been seen of it. */
interface Watch {
  /** When it opened here without an alert (ms): the bound for the opening alert runs from then. */
  since: number;
  /** The down-voting peer seen claiming the opening alert: once seen, the opening counts as sent. */
  openedBy?: string;
  /** When this instance saw it resolved (ms): the bound for the resolution alert runs from then. */
  resolvedAt?: number;
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
  /** Per target: the incident `decide` just let open without alerting, until its id is known. */
  private readonly opening = new Map<string, Watch>();
  /** Per incident id: an incident open (or just resolved) here whose alerts another point was to send. */
  private readonly watches = new Map<number, Watch>();

  constructor(private readonly deps: ConfirmDeps) {}

  private freshMs(): number {
    return 2 * this.deps.mesh().intervalMs() + FRESH_MARGIN_MS;
  }

  /**
   * How long a point further down the election order waits for the elected sender to show its
   * alert sent: two mesh intervals (a poll there, a poll here), one check interval of the target
   * (the sender's own streak may reach the threshold a turn later), and the margin.
   */
  alertBoundMs(t: TargetConfig): number {
    return 2 * this.deps.mesh().intervalMs() + t.intervalMs + FRESH_MARGIN_MS;
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
    // Only a point voting down may claim the alert (peerPoint drops any other claim).
    const alertedBy = points.find((p) => !p.self && p.vote === 'down' && p.alerted)?.name;
    const alert = points[0]!.name === d.sender && alertedBy === undefined;
    if (alert) this.opening.delete(t.name);
    else this.opening.set(t.name, { since: this.deps.now(), ...(alertedBy !== undefined ? { openedBy: alertedBy } : {}) });
    this.logged.delete(t.name);
    this.deps.logger.warn({ target: t.name, down_from: d.down, quorum, sender: alertedBy ?? d.sender, alerting: alert }, 'down confirmed by the mesh quorum');
    return { open: true, alert };
  }

  /** The watch of an incident: the one `decide` started, else a new one from now (after a restart). */
  private watch(target: string, incidentId: number): Watch {
    let w = this.watches.get(incidentId);
    if (!w) {
      w = this.opening.get(target) ?? { since: this.deps.now() };
      this.opening.delete(target);
      this.watches.set(incidentId, w);
    }
    return w;
  }

  /**
   * Asked at each down check while an incident is open here and this instance has not sent its
   * opening alert: whether it must send it now. Not when a peer voting down has shown the alert
   * sent (`incident.alerted`); otherwise once this instance's wait is over: one bound
   * (`alertBoundMs`) for each point ahead of it in the election order, at least one. A missed
   * alert is worse than a second one, so a sender that is elected and stays silent (or a peer
   * that lies about being confirmed) costs one bound, not the alert.
   */
  openingOwed(t: TargetConfig, incident: Pick<Incident, 'id'>, latest: Pick<Snapshot, 'status' | 'checked_at'> | null): boolean {
    const quorum = quorumFor(this.deps.config(), t);
    if (quorum === undefined) return true; // deciding alone: it should have been sent at opening
    const w = this.watch(t.name, incident.id);
    if (w.openedBy !== undefined) return false;
    const points = this.points(t.name, latest);
    const claim = points.find((p) => !p.self && p.vote === 'down' && p.alerted);
    if (claim) {
      w.openedBy = claim.name;
      return false;
    }
    const order = senders(points);
    const rank = order.indexOf(points[0]!.name);
    const waitMs = Math.max(1, rank < 0 ? order.length : rank) * this.alertBoundMs(t);
    const waited = this.deps.now() - w.since;
    if (waited < waitMs) return false;
    this.watches.delete(incident.id); // sent here from now on: the resolution follows the usual rule
    this.deps.logger.warn({ target: t.name, elected: order[0], waited_ms: waited }, 'no vantage point voting down showed the opening alert sent in time; sending it from here');
    return true;
  }

  /**
   * Asked at each check after an incident resolved here whose opening alert this instance did not
   * send: the alerts it must send now. None when a peer voting up shows a resolution alert sent
   * for an incident that ended after this one started; `wait` within the bound; after it, the
   * resolution, and the opening too when no peer voting down ever showed it sent.
   */
  resolutionOwed(t: TargetConfig, incident: Pick<Incident, 'id' | 'started_at'>): AlertEventName[] | 'wait' {
    if (quorumFor(this.deps.config(), t) === undefined) return [];
    const w = this.watch(t.name, incident.id);
    const now = this.deps.now();
    w.resolvedAt ??= now;
    const started = Date.parse(incident.started_at);
    const fresh = this.freshMs();
    const proof = this.deps
      .mesh()
      .peerViews()
      .map((p) => peerPoint(p, t.name, now, fresh))
      .find((p) => p.resolvedAlertedAt !== undefined && !(p.resolvedAlertedAt < started));
    if (proof) {
      this.watches.delete(incident.id);
      return [];
    }
    if (now - w.resolvedAt < this.alertBoundMs(t)) return 'wait';
    this.watches.delete(incident.id);
    const owed: AlertEventName[] = w.openedBy !== undefined ? ['incident.resolved'] : ['incident.opened', 'incident.resolved'];
    this.deps.logger.warn({ target: t.name, opened_by: w.openedBy, owed }, 'no vantage point voting up showed the resolution alert sent in time; sending it from here');
    return owed;
  }

  /** A result that is not down ends the outage: the next one logs its reason again. */
  observe(target: string, snaps: readonly Snapshot[]): void {
    if (snaps.some((s) => s.status !== 'down')) this.logged.delete(target);
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
 * `confirmed` (targets with a quorum), `incident: {started_at, alerted}` while an incident is
 * open here, so a peer about to alert sees that this instance already did, and else
 * `resolved_incident: {started_at, resolved_at, alerted}` for the latest one, so a peer that
 * left the alerts to this instance sees the resolution sent.
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
    const last = (s.incidents as Incident[] | undefined)?.[0];
    if (!inc && confirmed !== undefined && last?.ended_at) extra.resolved_incident = { started_at: last.started_at, resolved_at: last.ended_at, alerted: await store.alertClaimed(last.id, 'incident.resolved') };
    if (Object.keys(extra).length) out[t.name] = extra;
  }
  return out;
}
