// Dashboard wording that needs no browser: the headline counts down, degraded and unchecked
// targets (degraded is never "all operational"), and ages read as people say them.
import { describe, expect, it } from 'vitest';
import { ago, renderDashboard } from '../../../daemon/services/monitor/dashboard.js';
import type { TargetStatus } from '../../../daemon/services/monitor/status.js';

const at = '2026-01-01T12:00:00.000Z';
function st(status: string | null): TargetStatus {
  return { label: 'x', latest: status ? { status, checked_at: at, response_time_ms: status === 'down' ? 0 : 5 } : null, recent: [], uptime_24h: null, uptime_7d: null };
}
function title(statuses: Record<string, TargetStatus>): string {
  const html = renderDashboard({ instance: 'i', version: '1', generatedAt: '2026-01-01T12:00:30.000Z', statuses, trends: {} });
  return /<h1>(.*)<\/h1>/.exec(html)![1]!;
}

describe('dashboard headline', () => {
  it('names down and degraded targets; only an all-operational set says so', () => {
    expect(title({ a: st('operational'), b: st('operational') })).toBe('All systems operational');
    expect(title({ a: st('operational'), b: st('degraded') })).toBe('1 of 2 targets degraded');
    expect(title({ a: st('down'), b: st('degraded'), c: st('operational') })).toBe('1 of 3 targets down, 1 degraded');
    expect(title({ a: st('operational'), b: st(null) })).toBe('1 of 2 targets operational, 1 not checked yet');
    expect(title({})).toBe('No targets configured');
  });

  it('ages are seconds, minutes, hours or days', () => {
    expect([ago(30_000), ago(5 * 60_000), ago(3 * 3_600_000), ago(3 * 86_400_000)]).toEqual(['30 s', '5 min', '3 h', '3 d']);
  });
});
