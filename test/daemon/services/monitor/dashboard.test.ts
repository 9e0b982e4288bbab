// Dashboard wording and markup that need no browser: the headline counts down, degraded and
// unchecked targets (degraded is never "all operational"; maintenance is its own line), the
// 90-day bar colours each day by its uptime, incidents and maintenance windows are listed, and
// every server-supplied string is escaped.
import { describe, expect, it } from 'vitest';
import { ago, dayClass, dayTitle, duration, latencyChart, renderDashboard, type DayCell } from '../../../../daemon/services/monitor/dashboard.js';
import type { TargetStatus } from '../../../../daemon/services/monitor/status.js';

const at = '2026-01-01T12:00:00.000Z';
const now = '2026-01-01T12:00:30.000Z';
function st(status: string | null, extra: Record<string, unknown> = {}): TargetStatus {
  return { label: 'x', latest: status ? { status, checked_at: at, response_time_ms: status === 'down' ? 0 : 5 } : null, recent: [], uptime_24h: null, uptime_7d: null, ...extra };
}
function render(statuses: Record<string, TargetStatus>, days: Record<string, DayCell[]> = {}, trends: Record<string, (number | null)[]> = {}): string {
  return renderDashboard({ instance: 'i', version: '1', generatedAt: now, statuses, trends, days });
}
function h1(html: string): string {
  return /<h1>(.*)<\/h1>/.exec(html)![1]!;
}
function title(statuses: Record<string, TargetStatus>): string {
  return h1(render(statuses));
}
/** 90 days ending 2026-01-01, each a full day at 100 % with `cell` applied; `last` overrides today. */
function ninety(cell: Partial<DayCell> = {}, last: Partial<DayCell> = {}): DayCell[] {
  return Array.from({ length: 90 }, (_, i) => {
    const date = new Date(Date.parse('2026-01-01') - (89 - i) * 86_400_000).toISOString().slice(0, 10);
    return { date, uptime: 100, checks: 1440, down: 0, maintenance: 0, ...cell, ...(i === 89 ? last : {}) };
  });
}
/** The cells of one card's bar as [class, data-date, data-uptime, title]. */
function cells(html: string, target: string): string[][] {
  const card = html.slice(html.indexOf(`data-target="${target}"`));
  const bar = /<div class="days"[^>]*>(.*?)<\/div>/s.exec(card)![1]!;
  return [...bar.matchAll(/<i class="([^"]*)" data-date="([^"]*)" data-uptime="([^"]*)" title="([^"]*)"><\/i>/g)].map((m) => m.slice(1));
}

describe('dashboard headline', () => {
  it('names down and degraded targets; only an all-operational set says so', () => {
    expect(title({ a: st('operational'), b: st('operational') })).toBe('All systems operational');
    expect(title({ a: st('operational'), b: st('degraded') })).toBe('1 of 2 targets degraded');
    expect(title({ a: st('down'), b: st('degraded'), c: st('operational') })).toBe('1 of 3 targets down, 1 degraded');
    expect(title({ a: st('operational'), b: st(null) })).toBe('1 of 2 targets operational, 1 not checked yet');
    expect(title({})).toBe('No targets configured');
  });

  it('a target under maintenance is not counted down; a summary line counts targets in maintenance', () => {
    const maintenance = { name: 'p', title: 'Patching', start: '2026-01-01T11:00:00.000Z', end: '2026-01-01T13:00:00.000Z' };
    const html = render({ a: st('down', { maintenance }), b: st('operational'), c: st('operational', { next_maintenance: maintenance }) });
    expect(h1(html)).toBe('All systems operational');
    expect(html).toContain('<p class="maintenance-summary" data-active="1" data-upcoming="1">1 target under maintenance · 1 with maintenance scheduled in the next 7 days</p>');
    expect(title({ a: st('down', { maintenance }) })).toBe('Under maintenance');
    expect(render({ a: st('operational') })).not.toContain('<p class="maintenance-summary"');
  });

  it('ages are seconds, minutes, hours or days; durations say hours and minutes', () => {
    expect([ago(30_000), ago(5 * 60_000), ago(3 * 3_600_000), ago(3 * 86_400_000)]).toEqual(['30 s', '5 min', '3 h', '3 d']);
    expect([duration(0), duration(45), duration(720), duration(2 * 3600 + 300), duration(3600), duration(3 * 86400 + 4 * 3600)]).toEqual(['under 1 s', '45 s', '12 min', '2 h 5 min', '1 h', '3 d 4 h']);
  });
});

describe('dashboard 90-day bar', () => {
  it('has exactly 90 cells, oldest first, each with its date and uptime', () => {
    const html = render({ a: st('operational', { uptime_90d: 99.97 }) }, { a: ninety({}, { uptime: 99.5, down: 7 }) });
    const c = cells(html, 'a');
    expect(c).toHaveLength(90);
    expect(c[0]![1]).toBe('2025-10-04');
    expect(c[89]!.slice(1, 3)).toEqual(['2026-01-01', '99.5']);
    expect(html).toMatch(/<div class="days-legend"><span>90 days ago<\/span><span>99\.97 % uptime<\/span><span>today<\/span><\/div>/);
  });

  it('colours a day by its uptime: 100 green, >= 99 light green, >= 95 amber, below red, no checks grey, only maintenance blue', () => {
    const day = (uptime: number | null, checks = 1440, maintenance = 0): DayCell => ({ date: '2026-11-03', uptime, checks, down: 0, maintenance });
    expect([day(100), day(99.99), day(99), day(98.99), day(95), day(94.99), day(0), day(null, 0), day(null, 0, 30)].map(dayClass)).toEqual(['up', 'high', 'high', 'mid', 'mid', 'low', 'low', 'none', 'maint']);
    const html = render({ a: st('operational') }, { a: ninety({ uptime: null, checks: 0 }, { uptime: 94, checks: 100, down: 6 }) });
    const c = cells(html, 'a');
    expect(c[0]![0]).toBe('none');
    expect(c[0]![2]).toBe('');
    expect(c[89]![0]).toBe('low');
  });

  it('hover text gives the date, the uptime and the checks behind it', () => {
    expect(dayTitle({ date: '2026-11-03', uptime: 99.86, checks: 1440, down: 2, maintenance: 0 })).toBe('2026-11-03: 99.86 % (2 down of 1,440 checks)');
    expect(dayTitle({ date: '2026-11-03', uptime: 100, checks: 1, down: 0, maintenance: 0 })).toBe('2026-11-03: 100 % (0 down of 1 check)');
    expect(dayTitle({ date: '2026-11-03', uptime: 99.9, checks: 1000, down: 1, maintenance: 440 })).toBe('2026-11-03: 99.90 % (1 down of 1,000 checks, 440 in maintenance)');
    expect(dayTitle({ date: '2026-11-03', uptime: null, checks: 0, down: 0, maintenance: 0 })).toBe('2026-11-03: no data');
    expect(dayTitle({ date: '2026-11-03', uptime: null, checks: 0, down: 0, maintenance: 12 })).toBe('2026-11-03: maintenance only');
  });
});

describe('dashboard card', () => {
  it('shows the uptime row for 24 h, 7 d, 30 d and 90 d, a dash where there is no data', () => {
    const html = render({ a: st('operational', { uptime_24h: 100, uptime_7d: 99.5, uptime_30d: 99.123, uptime_90d: null }) });
    expect(html).toContain('<dl class="uptime"><div><dt>24 h</dt><dd>100 %</dd></div><div><dt>7 d</dt><dd>99.50 %</dd></div><div><dt>30 d</dt><dd>99.12 %</dd></div><div><dt>90 d</dt><dd>—</dd></div></dl>');
  });

  it('draws the 24-hour latency chart with a y-axis maximum and gaps where an hour has no data', () => {
    const values: (number | null)[] = Array.from({ length: 24 }, (_, i) => (i >= 10 && i < 14 ? null : 40 + i));
    const svg = latencyChart(values);
    expect(svg).toMatch(/^<svg class="latency-chart" [^>]*role="img" aria-label="response time, last 24 hours, hourly mean: 40 ms to 63 ms, latest 63 ms"/);
    expect(svg).toContain('>80 ms</text>'); // the next round number above the highest mean
    expect(svg.match(/class="line"/g)).toHaveLength(2); // the gap splits the line in two
    expect(latencyChart(Array(24).fill(null))).toMatch(/aria-label="response time, last 24 hours: no data"/);
    const one = latencyChart([...Array(23).fill(null), 12]);
    expect(one).toContain('class="point"');
    expect(render({ a: st('operational') }, {}, { a: values })).toContain('<svg class="latency-chart"');
  });

  it('shows the open incident prominently and lists up to 5 recent incidents, resolved ones with their duration', () => {
    const open = { id: 9, status: 'open', started_at: '2026-01-01T11:50:00.000Z', ended_at: null, cause: 'HTTP 503', checks: 4, duration_s: null };
    const resolved = Array.from({ length: 6 }, (_, k) => ({ id: 8 - k, status: 'resolved', started_at: '2025-12-30T10:00:00.000Z', ended_at: '2025-12-30T10:12:00.000Z', cause: 'timeout', checks: 12, duration_s: 720 }));
    const html = render({ a: st('down', { current_incident: open, incidents: [open, ...resolved] }) });
    expect(html).toMatch(/<p class="incident">Incident since <time[^>]*>11:50:00 UTC<\/time> \(11 min\): HTTP 503<\/p>/);
    const items = [...html.matchAll(/<li class="(open|resolved)" data-incident-id="(\d+)">(.*?)<\/li>/g)];
    expect(items.map((m) => m[2])).toEqual(['9', '8', '7', '6', '5']);
    expect(items[0]![3]).toContain('<span class="length">ongoing</span> · HTTP 503');
    expect(items[1]![3]).toMatch(/2025-12-30 10:00 UTC<\/time> · <span class="length">12 min<\/span> · timeout$/);
    expect(render({ a: st('operational') })).not.toContain('class="incidents"');
  });

  it('a window in force turns the card blue with a notice until its end; the next window is announced', () => {
    const maintenance = { name: 'p', title: 'Kernel patching', start: '2026-01-01T11:00:00.000Z', end: '2026-01-01T14:30:00.000Z' };
    const next_maintenance = { name: 'db', title: 'DB upgrade', start: '2026-01-03T02:00:00.000Z', end: '2026-01-03T04:00:00.000Z' };
    const html = render({ a: st('down', { maintenance, next_maintenance, latest: { status: 'down', checked_at: at, response_time_ms: 0, maintenance: true } }) });
    expect(html).toMatch(/<article class="target maintenance" data-target="a" data-status="down">/);
    expect(html).toContain('<span class="badge">maintenance</span>');
    expect(html).toMatch(/<p class="maintenance-notice active">Under maintenance: Kernel patching until <time datetime="2026-01-01T14:30:00.000Z">14:30<\/time> UTC<\/p>/);
    expect(html).toMatch(/<p class="maintenance-notice upcoming">Scheduled maintenance: DB upgrade, <time[^>]*>2026-01-03 02:00<\/time>–<time[^>]*>04:00<\/time> UTC<\/p>/);
    expect(html).toMatch(/<footer>checked .* · in maintenance<\/footer>/);
    // a window ending on another day gives the date
    expect(render({ a: st('operational', { maintenance: { ...maintenance, end: '2099-01-01T00:00:00.000Z' } }) })).toContain('>2099-01-01 00:00</time> UTC');
  });

  it('escapes every server-supplied string: label, cause, window titles, dates', () => {
    const evil = '<script>alert(1)</script>';
    const inc = { id: 1, status: 'open', started_at: at, ended_at: null, cause: evil, checks: 3, duration_s: null };
    const win = { name: 'w', title: evil, start: at, end: '2026-01-01T13:00:00.000Z' };
    const html = render(
      { [evil]: st('down', { label: evil, current_incident: inc, incidents: [inc], maintenance: win, next_maintenance: win, latest: { status: 'down', checked_at: at, response_time_ms: 0, error: evil } }) },
      { [evil]: ninety({ date: evil }) },
    );
    // The page's own script (one, allowed by its hash) and nothing of the input's.
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
  });

  it("shows an open incident's timeline in order, its details escaped, and none for a target without one", () => {
    const inc = { id: 7, status: 'open', started_at: at, ended_at: null, cause: 'HTTP 500', checks: 3, duration_s: null, caused_by: 'router' };
    const timeline = [
      { at, kind: 'opened' as const },
      { at, kind: 'caused_by' as const, detail: 'router' },
      { at, kind: 'silenced' as const, detail: '<b>deploy</b>' },
      { at, kind: 'reminded' as const, detail: '1' },
    ];
    const html = renderDashboard({ instance: 'i', version: '1', generatedAt: now, statuses: { api: st('down', { current_incident: inc, incidents: [inc] }), web: st('operational') }, trends: {}, days: {}, timelines: { api: timeline } });
    const api = html.slice(html.indexOf('data-target="api"'), html.indexOf('data-target="web"'));
    expect([...api.matchAll(/<li data-kind="([a-z_]+)">/g)].map((m) => m[1])).toEqual(['opened', 'caused_by', 'silenced', 'reminded']);
    expect(api).toContain('caused by: router');
    expect(api).toMatch(/<p class="incident">[^<]*<time[^>]*>[^<]*<\/time>[^<]*HTTP 500 · caused by router<\/p>/);
    expect(api).toContain('alert silenced: &#60;b&#62;deploy&#60;/b&#62;');
    expect(html.slice(html.indexOf('data-target="web"'))).not.toContain('Incident timeline');
  });

  // How fast is bench/monitor.ts's (BENCH_ONLY=dashboard): a timed bound here failed or passed
  // with the machine's load, not with the code.
  it('renders 1,000 targets, each card with its 90 days', () => {
    const statuses: Record<string, TargetStatus> = {};
    const days: Record<string, DayCell[]> = {};
    const trends: Record<string, (number | null)[]> = {};
    for (let i = 0; i < 1000; i++) {
      statuses[`t${i}`] = st('operational', { uptime_90d: 99.9 });
      days[`t${i}`] = ninety({ uptime: 99.9, down: 1 });
      trends[`t${i}`] = Array.from({ length: 24 }, (_, h) => 20 + h);
    }
    const html = render(statuses, days, trends);
    expect(html.match(/data-date=/g)).toHaveLength(90_000);
    expect(html.match(/<[a-z]+ [^>]*data-target="/g)).toHaveLength(1000);
  });
});

describe('dashboard vantage points (mesh confirmation)', () => {
  const points = [
    { name: 'a', self: true, status: 'down', checked_at: at },
    { name: 'b', status: 'operational', checked_at: at },
    { name: '<c>', status: null, checked_at: null, error: 'no answer' },
  ];

  it('shows each vantage point with its latest status, this instance marked, and a regional marker below the quorum', () => {
    const html = render({ api: st('down', { vantage_points: points, down_from: ['a'], regional: true }) });
    expect(html).toContain('<li class="vp down" data-vantage="a" data-status="down" data-self="true"');
    expect(html).toContain('>a <small>(here)</small>: down</li>');
    expect(html).toContain('<li class="vp operational" data-vantage="b" data-status="operational"');
    expect(html).toContain('>&#60;c&#62;: no answer</li>');
    expect(html).toContain('<p class="regional" data-regional="true">Regional: down from a only, not confirmed by the mesh</p>');
  });

  it('no regional marker once the quorum sees it down; no vantage line without a mesh', () => {
    const confirmed = render({ api: st('down', { vantage_points: points, down_from: ['a', 'b'] }) });
    expect(confirmed).toContain('data-vantage="a"');
    expect(confirmed).not.toContain('data-regional');
    expect(render({ api: st('down') })).not.toContain('class="vantage"');
  });
});
