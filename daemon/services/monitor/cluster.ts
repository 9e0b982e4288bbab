// A monitor cluster on one PostgreSQL: which targets this instance checks. Every tick (a third of
// the lease time) it beats its heartbeat, renews its leases, and moves towards its fair share of
// the targets, ceil(targets / live instances): over it, it frees the surplus (targets with no
// check running); under it, it takes free or expired leases. An instance that dies stops renewing;
// its leases expire after one lease time and the others take them at their next tick. It also
// compares configurations: instances whose config differs are logged and shown in /api/peer/info.
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { MonitorConfig } from '../../../src/config/monitor.js';
import type { InstanceRow, MonitorLeases } from '../../../src/store/monitor-leases.js';
import type { Logger } from '../../logger.js';

/** Lease bounds: a dead instance's targets move within one lease time plus a tick. */
const MIN_LEASE_MS = 1_000;
const MAX_LEASE_MS = 30_000;
/** A lease is trusted locally for this share of its time from the renewal's start (clock drift, a slow answer). */
const TRUST = 0.9;

/**
 * The cluster's lease time for a config: its shortest check interval, within 1-30 s. Taking over
 * costs at most a lease time and a third, so under two intervals for every target.
 */
export function leaseMs(config: MonitorConfig): number {
  const shortest = Math.min(...config.targets.map((t) => t.intervalMs), MAX_LEASE_MS);
  return Math.max(MIN_LEASE_MS, Math.min(MAX_LEASE_MS, shortest));
}

/** What identifies a configuration across instances: everything but its secrets and its file's path. */
export function configHash(config: MonitorConfig): string {
  const { file: _file, token: _token, ...rest } = config;
  const mesh = rest.mesh ? { ...rest.mesh, peers: rest.mesh.peers.map(({ token: _t, ...p }) => p) } : undefined;
  return createHash('sha256').update(JSON.stringify({ ...rest, mesh })).digest('hex').slice(0, 16);
}

export interface ClusterOptions {
  leases: MonitorLeases;
  logger: Logger;
  version: string;
  config(): MonitorConfig;
  /** Targets this instance just took: their checks resume from the last one recorded. */
  onAcquired(targets: string[]): void;
  /** Whether a check of the target is running here now (such a target is not handed over). */
  busy(target: string): boolean;
}

export interface ClusterStats {
  acquired: number;
  released: number;
  lost: number;
  ticks: number;
  failedTicks: number;
}

export function newInstanceId(): string {
  return `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
}

export class ClusterCoordinator {
  private owned = new Set<string>();
  /** Local monotonic time (performance.now) until which the owned leases are trusted. */
  private validUntil = 0;
  private live: InstanceRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  private ensured = '';
  private reportedMismatch = '';
  readonly startedAt = new Date().toISOString();
  readonly stats: ClusterStats = { acquired: 0, released: 0, lost: 0, ticks: 0, failedTicks: 0 };

  constructor(private readonly opts: ClusterOptions) {}

  get instanceId(): string {
    return this.opts.leases.instanceId;
  }

  /** Whether this instance checks the target now. */
  owns(target: string): boolean {
    return this.owned.has(target) && performance.now() < this.validUntil;
  }

  ownedCount(): number {
    return performance.now() < this.validUntil ? this.owned.size : 0;
  }

  /** One round: heartbeat, renew, then free a surplus or claim a shortfall. */
  tick(): Promise<void> {
    this.ticking ??= this.round().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async round(): Promise<void> {
    const { leases } = this.opts;
    const config = this.opts.config();
    const ttl = leaseMs(config);
    const targets = config.targets.map((t) => t.name);
    const started = performance.now();
    const hash = configHash(config);
    this.live = await leases.heartbeat({ name: config.name, configHash: hash, targets: targets.length, version: this.opts.version, startedAt: this.startedAt }, ttl);
    this.reportConfigs(hash);
    const key = targets.join('\n');
    if (key !== this.ensured) {
      await leases.ensure(targets);
      await leases.forgetDead();
      this.ensured = key;
    }
    const renewed = new Set(await leases.renew(targets, ttl));
    const lost = [...this.owned].filter((t) => !renewed.has(t));
    if (lost.length) {
      this.stats.lost += lost.length;
      this.opts.logger.warn({ targets: lost.length }, 'leases expired before renewal; another instance checks those targets now');
    }
    this.owned = renewed;
    this.validUntil = started + ttl * TRUST;
    const share = Math.ceil(targets.length / Math.max(1, this.live.length));
    if (this.owned.size > share) {
      // Stop checking them here before the database frees them: no check of ours overlaps the next owner's.
      const surplus = [...this.owned].filter((t) => !this.opts.busy(t)).slice(0, this.owned.size - share);
      for (const t of surplus) this.owned.delete(t);
      await leases.release(surplus);
      this.stats.released += surplus.length;
    } else if (this.owned.size < share) {
      const got = await leases.claim(targets, share - this.owned.size, ttl);
      for (const t of got) this.owned.add(t);
      if (got.length) {
        this.stats.acquired += got.length;
        this.opts.onAcquired(got);
      }
    }
    this.stats.ticks++;
  }

  private reportConfigs(mine: string): void {
    const others = this.live.filter((i) => i.config_hash !== mine);
    const key = others.map((i) => `${i.id}=${i.config_hash}`).join(',');
    if (key === this.reportedMismatch) return;
    this.reportedMismatch = key;
    if (others.length) {
      this.opts.logger.warn(
        { config_hash: mine, differing: others.map((i) => ({ instance: i.id, name: i.name, config_hash: i.config_hash })) },
        'instances of this cluster run different configurations: targets only some of them have are checked by those only',
      );
    } else {
      this.opts.logger.info({ config_hash: mine, instances: this.live.length }, 'every instance of the cluster runs this configuration');
    }
  }

  start(onError: (err: unknown) => void): void {
    const loop = (): void => {
      if (this.stopped) return;
      void this.tick()
        .catch((err: unknown) => {
          this.stats.failedTicks++;
          onError(err);
        })
        .finally(() => {
          if (this.stopped) return;
          this.timer = setTimeout(loop, Math.max(100, Math.floor(leaseMs(this.opts.config()) / 3)));
          this.timer.unref();
        });
    };
    loop();
  }

  /** Stops ticking and hands every lease back, so the other instances take over at their next tick. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking?.catch(() => undefined);
    this.owned.clear();
    this.validUntil = 0;
    await this.opts.leases.leave().catch(() => undefined);
  }

  /** For /api/peer/info: this instance, the live ones, and whether their configurations agree. */
  async info(): Promise<Record<string, unknown>> {
    const mine = configHash(this.opts.config());
    const owners = await this.opts.leases.owners().catch(() => new Map<string, number>());
    return {
      instance_id: this.instanceId,
      config_hash: mine,
      consistent: this.live.every((i) => i.config_hash === mine),
      instances: this.live.map((i) => ({
        id: i.id,
        name: i.name,
        version: i.version,
        started_at: i.started_at,
        config_hash: i.config_hash,
        same_config: i.config_hash === mine,
        targets: i.targets,
        leases: owners.get(i.id) ?? 0,
      })),
    };
  }
}
