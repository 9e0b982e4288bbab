// The monitor mesh: this instance's identity and summaries, and a poller that fetches each
// peer's /api/peer/status with that peer's token and caches the answer for /api/mesh.
import type { MonitorConfig, MeshPeer } from '../../../src/config/monitor.js';
import { HttpClient, isResponseTooLarge } from '../../../src/client/http.js';
import type { Logger } from '../../logger.js';
import type { TargetStatus } from './status.js';
import { VERSION } from '../../../src/version.js';

/**
 * The largest /api/peer/status answer read from a peer. A real one is an identity, a summary
 * of a few hundred bytes per target and one per peer: 8 MiB is over ten thousand targets. A
 * peer answering 300 MB held this instance's event loop until its public health check timed out.
 */
export const PEER_STATUS_MAX_BYTES = 8 * 1024 * 1024;

export interface PeerState {
  status: 'up' | 'down';
  last_seen: string | null;
  latency_ms: number | null;
  data?: Record<string, unknown>;
  error?: string;
}

/** The spec's target summaries; `extras` adds properties per target (mesh confirmation, confirm.ts). */
export function targetSummaries(statuses: Record<string, TargetStatus>, extras: Record<string, Record<string, unknown>> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(statuses)) {
    if (!s.latest) continue; // a target with no recorded health is left out
    out[name] = { label: s.label, status: s.latest.status, response_time_ms: s.latest.response_time_ms, checked_at: s.latest.checked_at, ...extras[name] };
  }
  return out;
}

export class Mesh {
  private readonly peers = new Map<string, PeerState>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  readonly startedAt: string;

  constructor(
    private config: MonitorConfig,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {
    this.startedAt = new Date(now()).toISOString();
  }

  get enabled(): boolean {
    return this.config.mesh !== undefined;
  }

  setConfig(config: MonitorConfig): void {
    this.config = config;
    const names = new Set(config.mesh?.peers.map((p) => p.name) ?? []);
    for (const name of this.peers.keys()) if (!names.has(name)) this.peers.delete(name);
  }

  intervalMs(): number {
    return this.config.mesh?.intervalMs ?? 30_000;
  }

  /** Each configured peer with its last poll, cached answer included (confirm.ts reads votes from it). */
  peerViews(): { name: string; state: PeerState | undefined }[] {
    return (this.config.mesh?.peers ?? []).map((p) => ({ name: p.name, state: this.peers.get(p.name) }));
  }

  identity(): Record<string, unknown> {
    return { name: this.config.name, version: VERSION, started_at: this.startedAt, targets: this.config.targets.length };
  }

  peerSummaries(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const p of this.config.mesh?.peers ?? []) {
      const s = this.peers.get(p.name);
      out[p.name] = { status: s?.status ?? 'unknown', last_seen: s?.last_seen ?? null, latency_ms: s?.latency_ms ?? null };
    }
    return out;
  }

  /** Entries for the peers in /api/mesh: cached status data, or why there is none. */
  peerEntries(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const p of this.config.mesh?.peers ?? []) {
      const s = this.peers.get(p.name);
      out[p.name] = s?.data ?? { status: s?.status ?? 'unknown', last_seen: s?.last_seen ?? null, error: `no status data cached for peer ${p.name}${s?.error ? ` (last error: ${s.error})` : ''}` };
    }
    return out;
  }

  start(): void {
    if (!this.enabled) return;
    const tick = (): void => {
      void this.pollAll().finally(() => {
        if (!this.stopped) {
          this.timer = setTimeout(tick, this.config.mesh?.intervalMs ?? 30_000);
          this.timer.unref?.();
        }
      });
    };
    tick();
  }

  async pollAll(): Promise<void> {
    await Promise.all((this.config.mesh?.peers ?? []).map((p) => this.poll(p)));
  }

  private async poll(p: MeshPeer): Promise<void> {
    const started = this.now();
    const prev = this.peers.get(p.name);
    try {
      const client = new HttpClient({ baseUrl: p.url, token: p.token, timeoutMs: 10_000, connectTimeoutMs: 5_000, maxResponseBytes: PEER_STATUS_MAX_BYTES });
      const data = await client.json<unknown>('GET', '/api/peer/status');
      // Text, an array or null would be cached and served in /api/mesh as this peer's status.
      if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error('the peer answered something other than a JSON object');
      this.peers.set(p.name, { status: 'up', last_seen: new Date(this.now()).toISOString(), latency_ms: Math.round(this.now() - started), data: data as Record<string, unknown> });
    } catch (err) {
      const error = (err as Error).message;
      this.peers.set(p.name, { status: 'down', last_seen: prev?.last_seen ?? null, latency_ms: null, data: prev?.data, error });
      if (isResponseTooLarge(err)) this.logger.warn({ peer: p.name, err: error, limit_bytes: err.limitBytes }, `mesh peer poll failed: refused answer: larger than ${err.limitBytes} bytes`);
      else this.logger.warn({ peer: p.name, err: error }, 'mesh peer poll failed');
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
