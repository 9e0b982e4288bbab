// Test runs: execute the configured command without a shell, with a timeout, and record the
// exit code and duration. Staleness and duration drift are judged from the stored runs.
import { spawn } from 'node:child_process';
import type { TestsConfig } from '../../../../src/config/monitor.js';
import type { TestRun } from '../../../../src/store/monitor.js';

export function runTests(cfg: TestsConfig, now: () => number, stop?: AbortSignal): Promise<TestRun> {
  const started = now();
  const started_at = new Date(started).toISOString();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (run: TestRun): void => {
      if (settled) return;
      settled = true;
      resolve(run);
    };
    let child;
    try {
      child = spawn(cfg.command[0]!, cfg.command.slice(1), { cwd: cfg.cwd, stdio: 'ignore', shell: false, timeout: cfg.timeoutMs, killSignal: 'SIGKILL', signal: stop });
    } catch (err) {
      finish({ started_at, exit_code: null, duration_ms: 0, passed: false, error: (err as Error).message });
      return;
    }
    child.on('error', (err: NodeJS.ErrnoException) => {
      // Aborted (the monitor is stopping): the child was killed; its 'exit' follows and settles.
      if (err.name === 'AbortError') return;
      finish({ started_at, exit_code: null, duration_ms: Math.round(now() - started), passed: false, error: err.code ?? err.message });
    });
    child.once('exit', (code, signal) => {
      const duration_ms = Math.round(now() - started);
      if (signal) finish({ started_at, exit_code: null, duration_ms, passed: false, error: duration_ms >= cfg.timeoutMs ? `timed out after ${cfg.timeoutMs} ms` : `killed by ${signal}` });
      else finish({ started_at, exit_code: code, duration_ms, passed: code === 0 });
    });
  });
}

/** Runs compared: the median of the last RECENT runs against the median of up to BASELINE before them. */
export const DRIFT = { recent: 3, baseline: 10, threshold: 1.5 } as const;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Warning when the recent median duration exceeds the baseline median by the threshold; runs newest first. */
export function durationDrift(runs: TestRun[]): Record<string, unknown> | undefined {
  const passing = runs.filter((r) => r.passed);
  if (passing.length < DRIFT.recent + 3) return undefined;
  const recent = passing.slice(0, DRIFT.recent).map((r) => r.duration_ms);
  const baseline = passing.slice(DRIFT.recent, DRIFT.recent + DRIFT.baseline).map((r) => r.duration_ms);
  const rm = median(recent);
  const bm = Math.max(1, median(baseline));
  const ratio = rm / bm;
  if (ratio <= DRIFT.threshold) return undefined;
  return {
    recent_median_ms: Math.round(rm),
    baseline_median_ms: Math.round(bm),
    ratio: Math.round(ratio * 100) / 100,
    threshold: DRIFT.threshold,
    recent_runs: recent.length,
    baseline_runs: baseline.length,
    message: `tests now take ${ratio.toFixed(1)}x their usual time (${Math.round(rm)} ms vs ${Math.round(bm)} ms)`,
  };
}

export function staleness(cfg: TestsConfig, runs: TestRun[], lastPass: TestRun | undefined, nowMs: number): Record<string, unknown> {
  const last = runs[0];
  const passMs = lastPass ? Date.parse(lastPass.started_at) + lastPass.duration_ms : undefined;
  const age = passMs === undefined ? null : Math.max(0, Math.round((nowMs - passMs) / 1000));
  return {
    stale: age === null || age * 1000 > cfg.staleAfterMs,
    last_pass_at: lastPass ? lastPass.started_at : null,
    seconds_since_pass: age,
    stale_after_s: Math.round(cfg.staleAfterMs / 1000),
    last_run_at: last?.started_at ?? null,
    last_exit_code: last ? last.exit_code : null,
    last_duration_ms: last?.duration_ms ?? null,
    last_passed: last ? last.passed : null,
  };
}
