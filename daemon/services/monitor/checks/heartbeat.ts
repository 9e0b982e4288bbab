// A heartbeat target's verdicts: the snapshot a ping signal records, and, between pings, the
// snapshot of its state (on time, late, a run too long, the last run failed) with the instant
// that verdict next changes, which the engine waits for to the millisecond.
import type { TargetConfig } from '../../../../src/config/monitor.js';
import type { Snapshot } from '../../../../src/store/monitor.js';
import type { HeartbeatSignal, HeartbeatState } from '../../../../src/store/monitor-heartbeats.js';
import { lateAt } from '../../../../src/monitor/heartbeat-schedule.js';

/** What a ping URL's last segment says. */
export type PingSignal = { kind: 'success' } | { kind: 'start' } | { kind: 'fail' } | { kind: 'exit'; code: number };

/** `/ping/{key}`, `/start`, `/fail`, `/{0-255}`; undefined for anything else. */
export function parseSignal(segment: string | undefined): PingSignal | undefined {
  if (segment === undefined || segment === '') return { kind: 'success' };
  if (segment === 'start' || segment === 'fail') return { kind: segment };
  if (/^(0|[1-9]\d{0,2})$/.test(segment) && Number(segment) <= 255) return { kind: 'exit', code: Number(segment) };
  return undefined;
}

export function signalName(s: PingSignal): string {
  return s.kind === 'exit' ? String(s.code) : s.kind;
}

/** How the store keeps the signal. */
export function storedSignal(s: PingSignal): HeartbeatSignal {
  if (s.kind === 'start') return { kind: 'start' };
  if (s.kind === 'success' || (s.kind === 'exit' && s.code === 0)) return { kind: 'end', ok: true };
  return { kind: 'end', ok: false, error: s.kind === 'fail' ? 'the job signalled failure' : `the job exited with status ${s.code}` };
}

/** Whether a run is under way: started after the last end. */
function running(s: HeartbeatState): boolean {
  return s.lastStart !== undefined && (s.lastEnd === undefined || s.lastStart > s.lastEnd);
}

let isoMs = NaN;
let isoText = '';
/** `ms` as ISO text, made once a millisecond: a group of pings mostly shares one (2 % of a ping's CPU). */
function iso(ms: number): string {
  if (ms !== isoMs) {
    isoText = new Date(ms).toISOString();
    isoMs = ms;
  }
  return isoText;
}

/** Seconds or a larger unit, for messages. */
function span(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${ms / 1000}s`;
}

/**
 * The snapshot a signal records, given the state before it. A success after a start is timed (the
 * run's duration is its response time); a start carries the last run's verdict (it is no verdict
 * of its own); a failure names the exit status.
 */
export function signalSnapshot(signal: PingSignal, before: HeartbeatState | undefined, atMs: number, log: { text: string; truncated: boolean } | undefined): Snapshot {
  const stored = storedSignal(signal);
  const details: Record<string, unknown> = { signal: signalName(signal) };
  if (signal.kind === 'exit') details.exit_code = signal.code;
  const startedAt = before && running(before) ? before.lastStart : undefined;
  const duration = stored.kind === 'end' && startedAt !== undefined ? Math.max(1, atMs - startedAt) : undefined;
  if (duration !== undefined) details.duration_ms = duration;
  if (log) {
    details.log = log.text;
    if (log.truncated) details.log_truncated = true;
  }
  const snap: Snapshot = { status: 'operational', checked_at: iso(atMs), response_time_ms: 0, details };
  if (stored.kind === 'start') {
    if (before?.lastEnd !== undefined && before.lastOk === false) {
      snap.status = 'down';
      snap.error = before.lastError ?? 'the last run failed';
    }
    return snap;
  }
  if (!stored.ok) {
    snap.status = 'down';
    snap.error = stored.error ?? 'failed';
    return snap;
  }
  if (duration !== undefined) snap.response_time_ms = duration;
  return snap;
}

export interface HeartbeatVerdict {
  snapshot: Snapshot;
  /** When the verdict next changes by time alone (a deadline), epoch ms; undefined when only a ping changes it. */
  changesAt?: number;
}

/** The target's state at `nowMs` as a snapshot: late, a run too long, the last run failed, or on time. */
export function stateVerdict(t: TargetConfig, s: HeartbeatState, nowMs: number): HeartbeatVerdict {
  const hb = t.heartbeat!;
  const snap: Snapshot = { status: 'operational', checked_at: iso(nowMs), response_time_ms: 0 };
  // Lateness counts from the last sign of life: a run's start or end, or (before any) the first sighting.
  const last = Math.max(s.lastEnd ?? -Infinity, s.lastStart ?? -Infinity);
  const ref = Number.isFinite(last) ? last : s.since;
  const late = lateAt(hb, ref);
  const overrun = running(s) ? s.lastStart! + hb.graceMs : undefined;
  if (overrun !== undefined && nowMs > overrun) {
    snap.status = 'down';
    snap.error = `run started at ${iso(s.lastStart!)} has not finished within the grace of ${span(hb.graceMs)}`;
    return { snapshot: snap };
  }
  if (nowMs > late) {
    snap.status = 'down';
    snap.error = Number.isFinite(last) ? `no ping since ${iso(ref)}` : `no ping since the monitor began watching at ${iso(ref)}`;
    return { snapshot: snap };
  }
  if (s.lastEnd !== undefined && s.lastOk === false && !running(s)) {
    snap.status = 'down';
    snap.error = s.lastError ?? 'the last run failed';
  }
  // The verdict flips one millisecond past a deadline ("later than" is strict).
  const next = Math.min(late, overrun ?? Infinity) + 1;
  return { snapshot: snap, changesAt: next };
}

/** The state as GET /api/status shows it (never the key). */
export function heartbeatJson(t: TargetConfig, s: HeartbeatState | undefined): Record<string, unknown> {
  const hb = t.heartbeat!;
  const out: Record<string, unknown> = hb.schedule !== undefined ? { schedule: hb.schedule, timezone: hb.timezone } : { period_s: (hb.periodMs ?? 0) / 1000 };
  out.grace_s = hb.graceMs / 1000;
  if (!s) return out;
  out.watching_since = iso(s.since);
  if (s.lastEnd !== undefined) {
    out.last_ping_at = iso(s.lastEnd);
    out.last_ok = s.lastOk === true;
  }
  if (s.lastStart !== undefined) out.last_start_at = iso(s.lastStart);
  out.running = running(s);
  const last = Math.max(s.lastEnd ?? -Infinity, s.lastStart ?? -Infinity);
  out.late_after = iso(lateAt(hb, Number.isFinite(last) ? last : s.since));
  return out;
}
