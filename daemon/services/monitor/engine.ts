// The check engine: runs each target's checks on its own schedule with jitter, never two of one
// target at once and at most `concurrency` at a time overall; records results, opens and
// resolves incidents, and fires alerts: a child's (`depends_on`) as its down parent's, and
// reminders (`remind_every`) while one stays open.
import type { MonitorConfig, TargetConfig } from '../../../src/config/monitor.js';
import type { Incident, MonitorStore, Snapshot } from '../../../src/store/monitor.js';
import { StoreUnavailableError } from '../../../src/store/sql.js';
import type { Clock } from '../../../src/util/clock.js';
import type { Logger } from '../../logger.js';
import type { AlertSink } from './silence-gate.js';
import { checkHealth } from './checks/health.js';
import { checkTcp } from './checks/tcp.js';
import { checkRoutes } from './checks/routes.js';
import { checkDns } from './checks/dns.js';
import { checkTls } from './checks/tls.js';
import { checkWhois } from './checks/whois.js';
import { runTests } from './checks/tests.js';
import type { MaintenanceSchedule } from './maintenance.js';
import { signalSnapshot, stateVerdict, storedSignal, type PingSignal } from './checks/heartbeat.js';
import { TurnGather } from '../../turn-gather.js';
import type { HeartbeatState } from '../../../src/store/monitor-heartbeats.js';
import { Dependencies, reminderDue } from './dependencies.js';
import { asDiskFull } from '../../../src/util/disk-full.js';

export const TLS_EVERY_MS = 60 * 60 * 1000;
export const WHOIS_EVERY_MS = 12 * 60 * 60 * 1000;
/** Snapshots read past the streak's length, so that checks in maintenance can be skipped over. */
const MAINTENANCE_LOOKBACK = 100;
/** How long a "not alerted from here" answer stands before a reminder asks the store again. */
const REMIND_RECHECK_MS = 60_000;

type Kind = 'health' | 'tls' | 'whois' | 'tests';

interface Job {
  target: TargetConfig;
  kind: Kind;
  everyMs: number;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
  /** A heartbeat target's next deadline (epoch ms): its next turn comes no later. */
  dueAt?: number;
  /** When the pending timer fires (engine clock, epoch ms). */
  nextAt?: number;
}

export interface EngineOptions {
  store: MonitorStore;
  logger: Logger;
  clock: Clock;
  /** The AlertSender, behind the silences (silence-gate.ts). */
  alerts: AlertSink;
  concurrency?: number;
  /** The maintenance windows in force; a health check inside one is tagged and opens no incident. */
  maintenance?: () => MaintenanceSchedule;
  /** Extra trusted CA for TLS checks (tests use a generated one). */
  tlsCa?: string;
  /**
   * Mesh confirmation (confirm.ts): whether a down streak that reached its threshold opens an
   * incident here, and whether this instance is the one that sends its alerts. Without it every
   * streak opens and alerts.
   */
  gate?: IncidentGate;
  /**
   * On a cluster (cluster.ts): whether this instance checks the target now. A job of a target it
   * does not own keeps its timer and skips its turn; without it every target is checked here.
   */
  owns?: (target: string) => boolean;
  /**
   * Called after every recorded result, so status caches can drop the target: a check's snapshot
   * (none for a TLS, WHOIS or test result), or a group of pings' snapshots in one call.
   */
  onResult?: (target: string, snapshots: readonly Snapshot[], kind: Kind) => void;
}

/** Decides, when a target's down streak reaches its threshold, whether an incident opens and who alerts. */
export interface IncidentGate {
  decide(target: TargetConfig, snap: Snapshot): { open: boolean; alert: boolean } | Promise<{ open: boolean; alert: boolean }>;
  /**
   * At each down check of an incident open here whose opening alert this instance did not send:
   * whether it must send it now (the point that was to send it did not show it sent in time).
   */
  openingOwed?(target: TargetConfig, incident: Incident, snap: Snapshot): boolean;
  /**
   * At each check after such an incident resolved here: the alerts to send now, none when another
   * point showed them sent, or `wait`.
   */
  resolutionOwed?(target: TargetConfig, incident: Incident): ('incident.opened' | 'incident.resolved')[] | 'wait';
}

/** A ping waiting for its group write. */
interface QueuedPing {
  job: Job;
  signal: PingSignal;
  log: { text: string; truncated: boolean } | undefined;
  at: number;
  /** Called once, with the ping's snapshot or the error that kept it from being recorded. */
  done(err: Error | null, snap?: Snapshot): void;
}

class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

export class CheckEngine {
  private jobs = new Map<string, Job>();
  private consecutiveDown = new Map<string, number>();
  /** Incidents resolved here whose opening alert another mesh point was to send: the gate says when they are settled. */
  private readonly unsettled = new Map<string, Incident>();
  private readonly gate: Semaphore;
  private stopped = false;
  /** Aborted at stop: in-flight HTTP checks and test commands end now instead of at their timeout. */
  private readonly halt = new AbortController();
  private config!: MonitorConfig;
  private readonly deps: Dependencies;
  /**
   * Per target, the reminder last handled for its open incident and when that incident began to
   * alert: a cache only (the claims in the store decide), so a restart sends no reminder twice.
   */
  private readonly reminded = new Map<string, { id: number; n: number; since?: number; askAfter?: number }>();

  constructor(private readonly opts: EngineOptions) {
    this.gate = new Semaphore(opts.concurrency ?? 64);
    this.deps = new Dependencies(opts.store);
  }

  private now = (): number => this.opts.clock.now();

  /** (Re)schedules every job of the configuration; unchanged targets keep their timers. */
  apply(config: MonitorConfig): void {
    this.config = config;
    this.deps.apply(config);
    // A target dropped from the config leaves no per-target state behind (months of reloads).
    const names = new Set(config.targets.map((t) => t.name));
    for (const k of this.consecutiveDown.keys()) if (!names.has(k)) this.consecutiveDown.delete(k);
    for (const k of this.reminded.keys()) if (!names.has(k)) this.reminded.delete(k);
    for (const k of this.unsettled.keys()) if (!names.has(k)) this.unsettled.delete(k);
    const wanted = new Map<string, Job>();
    for (const t of config.targets) {
      wanted.set(`${t.name}/health`, { target: t, kind: 'health', everyMs: t.intervalMs });
      if (t.tls) wanted.set(`${t.name}/tls`, { target: t, kind: 'tls', everyMs: Math.max(t.intervalMs, TLS_EVERY_MS) });
      if (t.whois) wanted.set(`${t.name}/whois`, { target: t, kind: 'whois', everyMs: Math.max(t.intervalMs, WHOIS_EVERY_MS) });
      if (t.tests) wanted.set(`${t.name}/tests`, { target: t, kind: 'tests', everyMs: t.tests.intervalMs });
    }
    for (const [key, job] of this.jobs) {
      const next = wanted.get(key);
      if (next && JSON.stringify(next.target) === JSON.stringify(job.target)) wanted.set(key, job);
      else if (job.timer) clearTimeout(job.timer);
    }
    const fresh = [...wanted].filter(([k, j]) => this.jobs.get(k) !== j);
    this.jobs = wanted;
    if (this.started) for (const [, job] of fresh) this.schedule(job, this.firstDelay(job));
  }

  private started = false;

  start(): void {
    this.started = true;
    for (const job of this.jobs.values()) this.schedule(job, this.firstDelay(job));
  }

  private firstDelay(job: Job): number {
    return Math.floor(Math.random() * Math.min(job.everyMs, 2000));
  }

  private schedule(job: Job, delay: number): void {
    if (this.stopped || this.jobs.get(`${job.target.name}/${job.kind}`) !== job) return;
    if (job.timer) clearTimeout(job.timer);
    job.nextAt = this.now() + delay;
    job.timer = setTimeout(() => {
      const owned = this.opts.owns?.(job.target.name) ?? true;
      void (owned ? this.exclusive(job, () => this.gate.run(() => this.runJob(job))) : Promise.resolve())
        .catch((err: Error) => {
          // On a full disk the check is lost, said plainly; the next turn comes as usual and records again once space is freed.
          const full = asDiskFull(err, `recording a ${job.kind} check of ${job.target.name}`);
          // A lost database is logged once by the store (logAvailability), not once a check.
          const level = err instanceof StoreUnavailableError ? 'debug' : 'error';
          this.opts.logger[level]({ target: job.target.name, kind: job.kind, err: err.message }, full ? full.message : 'check failed to record');
        })
        .finally(() => this.scheduleNext(job));
    }, delay);
    job.timer.unref?.();
  }

  /** The turn after a run: one interval on (±10% jitter spreads targets that share one), or a heartbeat's deadline if sooner. */
  private scheduleNext(job: Job): void {
    let delay = Math.max(1, Math.round(job.everyMs * (0.9 + Math.random() * 0.2)));
    if (job.dueAt !== undefined) delay = Math.min(delay, Math.max(1, job.dueAt - this.now()));
    this.schedule(job, delay);
  }

  /** Runs `fn` after the job's current run (if any): never two checks of one kind of one target at once. */
  private exclusive(job: Job, fn: () => Promise<void>): Promise<void> {
    const run = (job.running ?? Promise.resolve()).then(fn);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    job.running = settled;
    void settled.then(() => {
      if (job.running === settled) job.running = undefined;
    });
    return run;
  }

  /** Whether a check of the target is running (or queued) here now. */
  busy(target: string): boolean {
    for (const job of this.jobs.values()) if (job.target.name === target && job.running) return true;
    return false;
  }

  /**
   * Targets this instance just took over (a cluster lease): each job's next turn is one interval
   * after the last result any instance recorded, at once if that is past, so the hand-over
   * neither repeats nor skips a check. The down streak is read again from the store.
   */
  acquired(targets: readonly string[]): void {
    const names = new Set(targets);
    for (const job of this.jobs.values()) {
      if (!names.has(job.target.name)) continue;
      this.consecutiveDown.delete(job.target.name);
      if (!this.started) continue;
      void this.lastResultAt(job)
        .then((last) => {
          this.schedule(job, last === undefined ? this.firstDelay(job) : Math.max(0, last + job.everyMs - this.now()));
          // A heartbeat deadline sooner than that turn is met by the new owner too.
          if (job.target.heartbeat) this.signalled(job.target.name);
        })
        .catch(() => this.schedule(job, this.firstDelay(job)));
    }
  }

  /** When the job's kind last recorded a result for its target (any instance), ms since the epoch. */
  private async lastResultAt(job: Job): Promise<number | undefined> {
    const { store } = this.opts;
    const t = job.target.name;
    let at: unknown;
    if (job.kind === 'health') at = (await store.recent(t, 1))[0]?.checked_at;
    else if (job.kind === 'tests') at = (await store.testRuns(t, 1))[0]?.started_at;
    else at = (await store.result(t, job.kind))?.checked_at;
    const ms = typeof at === 'string' ? Date.parse(at) : NaN;
    return Number.isFinite(ms) ? ms : undefined;
  }

  /** Runs one target's checks of a kind now (tests, and `check now` style tooling). */
  async runNow(target: string, kind: Kind = 'health'): Promise<void> {
    const job = this.jobs.get(`${target}/${kind}`);
    if (!job) throw new Error(`no ${kind} check for ${target}`);
    await this.exclusive(job, () => this.runJob(job));
  }

  private async runJob(job: Job): Promise<void> {
    if (this.stopped) return; // queued behind the concurrency gate when stop() came
    const t = job.target;
    const { store } = this.opts;
    let recorded: Snapshot | undefined;
    if (job.kind === 'health' && t.heartbeat) {
      recorded = await this.heartbeatTurn(job);
      if (!recorded) return;
    } else if (job.kind === 'health') {
      const [snap, routes, dns] = await Promise.all([
        t.tcp ? checkTcp(t, this.now, this.halt.signal) : checkHealth(t, this.now, this.halt.signal),
        t.routes.length ? checkRoutes(t, this.now, this.halt.signal) : Promise.resolve(undefined),
        t.dns.length ? checkDns(t.dns, t.timeoutMs, this.now) : Promise.resolve(undefined),
      ]);
      // A check cut short by stop() says nothing about the target: it is not recorded. Nor is one
      // whose lease ran out meanwhile: the next owner checks it, and the store keeps one check a turn.
      if (this.stopped || !(this.opts.owns?.(t.name) ?? true)) return;
      const inMaintenance = this.opts.maintenance?.().activeAt(t.name, Date.parse(snap.checked_at));
      if (inMaintenance) snap.maintenance = true;
      await store.recordSnapshot(t.name, snap);
      recorded = snap;
      if (routes) await store.saveRoutes(t.name, routes);
      if (dns) await store.saveDns(t.name, dns);
      // In maintenance: no incident opens, an open one neither grows nor resolves, no alert.
      if (!inMaintenance) await this.trackIncident(t, snap);
    } else if (job.kind === 'tls' && t.tls) {
      const r = await checkTls(t.tls, t.timeoutMs, this.now, this.opts.tlsCa);
      if (this.stopped) return;
      await store.saveResult(t.name, 'tls', r);
    } else if (job.kind === 'whois' && t.whois) {
      const r = await checkWhois(t.whois, t.timeoutMs, this.now);
      if (this.stopped) return;
      await store.saveResult(t.name, 'whois', r);
    } else if (job.kind === 'tests' && t.tests) {
      const run = await runTests(t.tests, this.now, this.halt.signal);
      if (this.stopped) return;
      await store.recordTestRun(t.name, run);
    }
    this.opts.onResult?.(t.name, recorded ? [recorded] : [], job.kind);
  }

  /**
   * A heartbeat target's turn: its state now, recorded like a poll (late, a run too long, the
   * last run failed, or on time), and its next deadline, which the next turn waits for.
   */
  private async heartbeatTurn(job: Job): Promise<Snapshot | undefined> {
    const t = job.target;
    const state = (await this.opts.store.heartbeats.get(t.name)) ?? (await this.opts.store.heartbeats.ensure(t.name, this.now()));
    const verdict = stateVerdict(t, state, this.now());
    job.dueAt = verdict.changesAt;
    if (this.stopped || !(this.opts.owns?.(t.name) ?? true)) return undefined;
    await this.recordVerdict(t, verdict.snapshot, true);
    return verdict.snapshot;
  }

  /** Records a check's snapshot, tagged when in maintenance, and (outside maintenance, when it is a verdict) tracks the incident. */
  private async recordVerdict(t: TargetConfig, snap: Snapshot, verdict: boolean): Promise<void> {
    const inMaintenance = this.opts.maintenance?.().activeAt(t.name, Date.parse(snap.checked_at));
    if (inMaintenance) snap.maintenance = true;
    await this.opts.store.recordSnapshot(t.name, snap);
    if (!inMaintenance && verdict) await this.trackIncident(t, snap);
  }

  /** Pings waiting for the next group write, and whether a flush is under way. */
  private pings: QueuedPing[] = [];
  private flushing = false;

  /**
   * A ping to a heartbeat target (on any instance of a cluster): its signal stored, its snapshot
   * recorded with the run's log, the incident tracked (a success resolves it), and, when this
   * instance checks the target, its next turn moved to the new deadline. Pings that arrive while
   * others are written go together in the next write (one transaction per target), so a burst
   * costs one commit; each is answered once its write committed.
   */
  ping(target: string, signal: PingSignal, log: { text: string; truncated: boolean } | undefined): Promise<Snapshot> {
    return new Promise<Snapshot>((resolve, reject) => this.pingThen(target, signal, log, (err, snap) => (err ? reject(err) : resolve(snap!))));
  }

  /**
   * ping() with a callback: the ping route answers from it, without a promise of its own and the
   * turns of the microtask queue that fastify's handling of a returned promise takes (a few µs
   * of a ping's ~50).
   */
  pingThen(target: string, signal: PingSignal, log: { text: string; truncated: boolean } | undefined, done: (err: Error | null, snap?: Snapshot) => void): void {
    // Every target has a health job (apply): found by name, not by a scan of 10,000 targets (59 µs a ping).
    const job = this.jobs.get(`${target}/health`);
    if (!job?.target.heartbeat) return done(new Error(`${target} is not a heartbeat target`));
    this.pings.push({ job, signal, log, at: this.now(), done });
    if (this.flushing) return;
    this.flushing = true;
    this.gather.start();
  }

  /** A group is written once the pings stop coming (daemon/turn-gather.ts): ~19 under 20 busy connections, not ~13. */
  private readonly gather = new TurnGather(
    () => this.pings.length,
    () => void this.flushPings(),
  );

  private async flushPings(): Promise<void> {
    while (this.pings.length) {
      const batch = this.pings;
      this.pings = [];
      const byJob = new Map<Job, QueuedPing[]>();
      for (const p of batch) {
        const list = byJob.get(p.job);
        if (list) list.push(p);
        else byJob.set(p.job, [p]);
      }
      // In turn with each target's own turns: a deadline and a ping never record out of order.
      await Promise.all(
        [...byJob].map(([job, pings]) =>
          this.exclusive(job, () => this.writePings(job, pings)).catch((err: Error) => {
            for (const p of pings) p.done(err);
          }),
        ),
      );
    }
    this.flushing = false;
  }

  private async writePings(job: Job, pings: QueuedPing[]): Promise<void> {
    const t = job.target;
    const schedule = this.opts.maintenance?.();
    // The down streak as it stands before the group: read after it, the store's newest rows would be the group's own.
    if (!this.consecutiveDown.has(t.name)) this.consecutiveDown.set(t.name, await this.leadingDown(t.name));
    const { snapshots, state } = await this.opts.store.recordHeartbeatPings(
      t.name,
      pings.map((p) => ({ signal: storedSignal(p.signal), at: p.at })),
      (before, i) => {
        const p = pings[i]!;
        const snap = signalSnapshot(p.signal, before, p.at, p.log);
        if (schedule?.activeAt(t.name, p.at)) snap.maintenance = true;
        return snap;
      },
    );
    // A start is no verdict, nor is a snapshot in maintenance. Of a run of operational verdicts only
    // the first can change the incident (it resolves it); every down one counts.
    let last: string | undefined;
    for (let i = 0; i < pings.length; i++) {
      const snap = snapshots[i]!;
      if (pings[i]!.signal.kind !== 'start' && !snap.maintenance) {
        if (snap.status === 'down' || snap.status !== last) await this.trackIncident(t, snap);
        last = snap.status;
      }
    }
    this.opts.onResult?.(t.name, snapshots, 'health');
    // Answered after every write of the group: a callback that throws must not fail the group
    // (its pings are recorded) nor answer anyone twice.
    for (let i = 0; i < pings.length; i++) {
      try {
        pings[i]!.done(null, snapshots[i]!);
      } catch (err) {
        this.opts.logger.error({ err: String(err) }, 'ping answer failed');
      }
    }
    if (state && this.started && !this.stopped && (this.opts.owns?.(t.name) ?? true)) this.moveDeadline(job, state);
  }

  /**
   * A heartbeat target's state changed (a ping another cluster instance recorded): its next turn
   * is taken from the state now, so a new deadline is met to the millisecond.
   */
  signalled(target: string): void {
    const job = this.jobs.get(`${target}/health`);
    if (!job?.target.heartbeat || !this.started || this.stopped) return;
    void this.opts.store.heartbeats
      .get(target)
      .then((s) => s && this.moveDeadline(job, s))
      .catch((err: Error) => this.opts.logger.warn({ target, err: err.message }, 'reading the heartbeat state failed; the next turn reads it again'));
  }

  /** The job's deadline from the state; its pending timer stays unless the deadline comes sooner (a run's start moves it closer). */
  private moveDeadline(job: Job, state: HeartbeatState): void {
    job.dueAt = stateVerdict(job.target, state, this.now()).changesAt;
    // During a turn too: the turn's end reschedules by the same rule (scheduleNext).
    if (job.dueAt !== undefined && job.dueAt < (job.nextAt ?? Infinity)) this.schedule(job, Math.max(1, job.dueAt - this.now()));
  }

  private async trackIncident(t: TargetConfig, snap: Snapshot): Promise<void> {
    const { store, alerts } = this.opts;
    await this.settle(t);
    const open = await store.currentIncident(t.name);
    if (snap.status === 'down') {
      const n = (this.consecutiveDown.get(t.name) ?? (await this.leadingDown(t.name))) + (this.consecutiveDown.has(t.name) ? 1 : 0);
      this.consecutiveDown.set(t.name, n);
      if (open) {
        await store.addIncidentCheck(open.id);
        const gate = this.opts.gate;
        if (open.caused_by && !(await store.alertClaimed(open.id, 'incident.opened'))) {
          // A child suppressed by its parent: once no parent is down (a release missed at the
          // parent's resolution, say by a restart) it alerts on its own.
          if (!(await this.deps.downParent(t)) && this.ownOpeningOwed(t, open, snap)) await this.alertOnItsOwn(t, open);
        } else if (gate?.openingOwed && !(await store.alertClaimed(open.id, 'incident.opened')) && gate.openingOwed(t, open, snap) && (await store.claimAlert(open.id, 'incident.opened'))) {
          // A mesh point that was to send the opening alert and has not shown it sent: send it here.
          this.openedHere(t.name);
          this.opts.logger.warn({ target: t.name, cause: open.cause }, 'incident opened');
          alerts.send({ event: 'incident.opened', instance: this.config.name, target: t.name, label: t.label, incident: open, ...(await this.affected(t)) });
        }
        await this.remind(t, open, Date.parse(snap.checked_at));
      } else if (n >= this.threshold(t)) {
        // A heartbeat target's pings come to this store: mesh peers see nothing to confirm.
        const gate = this.opts.gate && !t.heartbeat ? await this.opts.gate.decide(t, snap) : { open: true, alert: true };
        if (!gate.open) return;
        const at = Date.parse(snap.checked_at);
        // Up to this snapshot: a group of pings may have recorded later ones already.
        const recent = (await store.recent(t.name, n + MAINTENANCE_LOOKBACK)).filter((x) => !x.maintenance && x.checked_at <= snap.checked_at).slice(0, n);
        const first = recent[recent.length - 1] ?? snap;
        // A parent with an open incident makes this one its consequence; a parent whose down streak
        // has not reached its threshold yet, or not been checked since this streak began, is
        // waited for (bounded), so a child checked first does not alert ahead of its cause.
        const causedBy = t.dependsOn ? await this.deps.downParent(t) : undefined;
        if (!causedBy && t.dependsOn && (await this.deps.pendingParent(t, at, Date.parse(first.checked_at)))) return;
        // Another instance on this store may have opened it first: the store answers that one,
        // and the alert goes to whoever claims the transition.
        const incident = await store.openIncident(t.name, first.checked_at, snap.error ?? 'down', n, causedBy);
        // The timeline's first events, once per cluster (a claim of its own, not an alert's).
        if (await store.claimAlert(incident.id, 'timeline.opened')) {
          await store.addIncidentEvent(incident.id, 'opened', at);
          if (incident.caused_by) await store.addIncidentEvent(incident.id, 'caused_by', at, incident.caused_by);
        }
        if (incident.caused_by) {
          this.opts.logger.info({ target: t.name, cause: incident.cause, caused_by: incident.caused_by }, 'incident opened, caused by a parent: no alert of its own');
          return;
        }
        if (gate.alert && (await store.claimAlert(incident.id, 'incident.opened'))) {
          this.opts.logger.warn({ target: t.name, cause: incident.cause }, 'incident opened');
          alerts.send({ event: 'incident.opened', instance: this.config.name, target: t.name, label: t.label, incident, ...(await this.affected(t)) });
        }
      }
      return;
    }
    this.consecutiveDown.set(t.name, 0);
    if (open) {
      const resolvedHere = await store.resolveIncident(open.id, snap.checked_at);
      if (!resolvedHere) return;
      this.reminded.delete(t.name);
      await store.addIncidentEvent(open.id, 'resolved', Date.parse(snap.checked_at));
      await this.alertResolution(t, open);
      // Children still down that this one held back alert on their own now (each once per cluster).
      for (const c of this.deps.childrenOf(t.name)) {
        const inc = await store.currentIncident(c.name);
        if (!inc?.caused_by || (await store.alertClaimed(inc.id, 'incident.opened')) || (await this.deps.downParent(c))) continue;
        const latest = this.opts.gate?.openingOwed ? (await store.recent(c.name, 1))[0] : undefined;
        if (!this.opts.gate?.openingOwed || (latest && this.ownOpeningOwed(c, inc, latest))) await this.alertOnItsOwn(c, inc);
      }
    }
  }

  /** The resolution alert of an incident this instance resolved, when it is owed. */
  private async alertResolution(t: TargetConfig, open: Incident): Promise<void> {
    const { store, alerts } = this.opts;
    // The resolution is sent by whoever resolved it, for an incident whose opening was sent
    // from this store. One whose opening a mesh peer was to send waits for that peer to show
    // its resolution sent, within a bound (the gate's `resolutionOwed`), else it is sent here.
    // A child that recovered while its parent was down sent no opening: nor its resolution.
    if (!(await store.alertClaimed(open.id, 'incident.opened'))) {
      if (open.caused_by || !this.opts.gate?.resolutionOwed) return;
      this.unsettled.set(t.name, (await store.incidents(t.name, 1))[0] ?? open);
      await this.settle(t);
      return;
    }
    if (!(await store.claimAlert(open.id, 'incident.resolved'))) return;
    const resolved = (await store.incidents(t.name, 1))[0] ?? open;
    this.opts.logger.info({ target: t.name, duration_s: resolved.duration_s }, 'incident resolved');
    alerts.send({ event: 'incident.resolved', instance: this.config.name, target: t.name, label: t.label, incident: resolved });
  }

  /** `affected` of an alert of `t`: its children down now, when there are any. */
  private async affected(t: TargetConfig): Promise<{ affected?: string[] }> {
    const affected = await this.deps.affected(t.name);
    return affected.length ? { affected } : {};
  }

  /**
   * Whether a released child sends its own opening alert from here: always on a store of its own
   * or a cluster's (the claim makes it once); on a mesh, each point holding the incident in its own
   * store, as the gate elects the sender of any opening alert not yet shown sent by a peer.
   */
  private ownOpeningOwed(t: TargetConfig, incident: Incident, latest: Snapshot): boolean {
    const gate = this.opts.gate;
    // A heartbeat target's pings come to one store: no mesh peer elects anything for it.
    return !gate?.openingOwed || t.heartbeat !== undefined || gate.openingOwed(t, incident, latest);
  }

  /** A child held back by its parent, still down after every parent recovered: its own opening alert, claimed once. */
  private async alertOnItsOwn(t: TargetConfig, incident: Incident): Promise<void> {
    if (!(await this.opts.store.claimAlert(incident.id, 'incident.opened'))) return;
    this.openedHere(t.name);
    this.opts.logger.warn({ target: t.name, cause: incident.cause, caused_by: incident.caused_by }, 'incident opened: still down after its parent recovered');
    this.opts.alerts.send({ event: 'incident.opened', instance: this.config.name, target: t.name, label: t.label, incident, ...(await this.affected(t)) });
  }

  /**
   * At a down check of an open incident: the reminder due now (`remind_every`), if this store sent
   * its opening alert. Reminder N is due N intervals after the incident began to alert (its start;
   * a held-back child's: its parent's recovery), sent at the first check from then, claimed as
   * `incident.reminder.N` so a cluster sends it once and a restart does not send it again; one
   * missed while nobody checked is not caught up (only the latest due one goes out).
   */
  private async remind(t: TargetConfig, open: Incident, nowMs: number): Promise<void> {
    const every = t.remindEveryMs ?? this.config.remindEveryMs ?? 0;
    if (!every) return;
    const { store } = this.opts;
    let memo = this.reminded.get(t.name);
    if (memo?.id !== open.id) this.reminded.set(t.name, (memo = { id: open.id, n: 0 }));
    if (memo.since === undefined) {
      // Asked again a minute after a "no", not at every down check: a no can turn into a yes (a
      // held-back child alerted once its parent recovers, a peer's incident whose opening falls to
      // this instance), and a reminder may be up to one check interval late anyway.
      if (memo.askAfter !== undefined && nowMs < memo.askAfter) return;
      // Not alerted from here (held back by a parent, or a mesh peer's to send): no reminders here.
      if (!(await store.alertClaimed(open.id, 'incident.opened'))) {
        memo.askAfter = nowMs + REMIND_RECHECK_MS;
        return;
      }
      memo.since = open.caused_by ? await this.deps.releasedAt(open, nowMs) : Date.parse(open.started_at);
    }
    const n = reminderDue(every, memo.since, nowMs);
    if (n <= memo.n) return;
    memo.n = n;
    if (!(await store.claimAlert(open.id, `incident.reminder.${n}`))) return;
    await store.addIncidentEvent(open.id, 'reminded', nowMs, String(n));
    this.opts.logger.warn({ target: t.name, cause: open.cause, reminder: n }, 'incident still open');
    this.opts.alerts.send({ event: 'incident.opened', instance: this.config.name, target: t.name, label: t.label, incident: open, reminder: n, ...(await this.affected(t)) });
  }

  /** This engine claimed the opening alert of `target`'s open incident: its reminders start from here, not a minute later. */
  private openedHere(target: string): void {
    const memo = this.reminded.get(target);
    if (memo) memo.askAfter = undefined;
  }

  /** An incident resolved here whose alerts a mesh peer was to send: sends what the gate says is owed. */
  private async settle(t: TargetConfig): Promise<void> {
    const incident = this.unsettled.get(t.name);
    const owed = incident && this.opts.gate?.resolutionOwed?.(t, incident);
    if (!incident || owed === undefined || owed === 'wait') return;
    this.unsettled.delete(t.name);
    for (const event of owed) {
      if (!(await this.opts.store.claimAlert(incident.id, event))) continue;
      this.opts.logger.info({ target: t.name, duration_s: incident.duration_s }, event === 'incident.opened' ? 'incident opened' : 'incident resolved');
      this.opts.alerts.send({ event, instance: this.config.name, target: t.name, label: t.label, incident });
    }
  }

  private threshold(t: TargetConfig): number {
    return t.incidentThreshold ?? this.config.incidentThreshold;
  }

  /** After a restart: how many of the newest snapshots (this one included) are down. */
  private async leadingDown(target: string): Promise<number> {
    let n = 0;
    const t = this.config.targets.find((x) => x.name === target);
    const threshold = t ? this.threshold(t) : this.config.incidentThreshold;
    // Checks in maintenance neither extend nor break the streak.
    for (const s of await this.opts.store.recent(target, threshold + MAINTENANCE_LOOKBACK)) {
      if (s.maintenance) continue;
      if (s.status !== 'down' || n >= threshold) break;
      n++;
    }
    return n;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.halt.abort();
    for (const job of this.jobs.values()) if (job.timer) clearTimeout(job.timer);
    await Promise.allSettled([...this.jobs.values()].map((j) => j.running));
  }
}
