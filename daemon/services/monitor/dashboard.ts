// The dashboard page: one self-contained HTML document (inline CSS and SVG, one small inline
// script allowed by its hash, no external assets) rendered on the server, updating itself in
// place every 30 s; light and dark. Times are shown as people read them (UTC clock time and "how
// long ago").
import type { Incident } from '../../../src/store/monitor.js';
import type { IncidentEvent, IncidentEventKind } from '../../../src/schemas/monitor.js';
import type { TargetStatus } from './status.js';
import { createHash } from 'node:crypto';
import { escapeMarkup as esc } from '../../../src/util/markup.js';

export interface DashboardData {
  instance: string;
  version: string;
  generatedAt: string;
  statuses: Record<string, TargetStatus>;
  /** Mean latency per hour over the last 24 h, oldest first (null: no data). */
  trends: Record<string, (number | null)[]>;
  /** 90 daily cells per target, oldest first, today last. */
  days: Record<string, DayCell[]>;
  /** The open incident's timeline per target that has one, oldest first. */
  timelines?: Record<string, IncidentEvent[]>;
  /** The active silences (silences.ts), soonest to expire first. */
  silences?: { target: string | null; reason: string; expires_at: string }[];
}

/** How many events of an open incident's timeline a card shows (the newest). */
export const DASHBOARD_TIMELINE = 20;

const EVENT_WORDS: Record<IncidentEventKind, string> = {
  opened: 'opened',
  alerted: 'alerted',
  reminded: 'reminder sent',
  silenced: 'alert silenced',
  caused_by: 'caused by',
  resolved: 'resolved',
  alert_failed: 'alert failed',
};

/** An incident's timeline as an ordered list: what happened, when, and to whom. */
function timelineList(events: IncidentEvent[] | undefined, nowMs: number): string {
  if (!events?.length) return '';
  const items = events.slice(-DASHBOARD_TIMELINE).map((e) => `<li data-kind="${esc(e.kind)}">${when(e.at, nowMs)} · ${EVENT_WORDS[e.kind] ?? esc(e.kind)}${e.detail ? `: ${esc(e.detail)}` : ''}</li>`);
  return `<h3>Incident timeline</h3><ol class="timeline">${items.join('')}</ol>`;
}

/** One UTC day of a target: uptime of its counted checks (null without any), and what it held. */
export interface DayCell {
  /** YYYY-MM-DD (UTC) */
  date: string;
  uptime: number | null;
  /** Checks counted for uptime (operational, degraded, down). */
  checks: number;
  down: number;
  maintenance: number;
}

/** A maintenance occurrence as the status carries it (`maintenance`, `next_maintenance`). */
interface MaintenanceJson {
  name: string;
  title: string;
  start: string;
  end: string;
}

/**
 * What `GET /` answers (404) when the dashboard is off: Gatus and Uptime Kuma serve a page there,
 * so that is where a newcomer looks first, and a bare "not found" reads as a broken server.
 */
export const DASHBOARD_OFF =
  'the dashboard is off on this monitor: set `dashboard: true` in its configuration and restart it (docs/monitor.md#dashboard); the API answers at /api/health, /api/status and /openapi.json';

/** How many incidents a card lists (the status carries up to ten). */
const DASHBOARD_INCIDENTS = 5;


/** 1440 → "1,440", without Intl: this runs 90 times per target. */
function thousands(n: number): string {
  if (n < 1000) return String(n);
  const s = String(n);
  let out = s.slice(0, s.length % 3 || 3);
  for (let i = out.length; i < s.length; i += 3) out += ',' + s.slice(i, i + 3);
  return out;
}

/** An uptime percentage as shown: "99.95 %", "100 %", "—" without data. */
function percent(v: unknown): string {
  if (typeof v !== 'number') return '—';
  return `${v === 100 ? '100' : v.toFixed(2)} %`;
}

/** The colour class of a day: 100 %, at least 99 %, at least 95 %, below; no checks; only maintenance. */
export function dayClass(c: DayCell): string {
  if (c.uptime === null) return c.maintenance > 0 ? 'maint' : 'none';
  return c.uptime >= 100 ? 'up' : c.uptime >= 99 ? 'high' : c.uptime >= 95 ? 'mid' : 'low';
}

/** The hover text of a day: "2026-11-03: 99.95 % (2 down of 1,440 checks)", "…: no data", "…: maintenance only". */
export function dayTitle(c: DayCell): string {
  if (c.uptime === null) return `${c.date}: ${c.maintenance > 0 ? 'maintenance only' : 'no data'}`;
  const maint = c.maintenance > 0 ? `, ${thousands(c.maintenance)} in maintenance` : '';
  return `${c.date}: ${percent(c.uptime)} (${thousands(c.down)} down of ${thousands(c.checks)} check${c.checks === 1 ? '' : 's'}${maint})`;
}

/** The 90-day bar: one cell a day, oldest first, with "90 days ago … today" and the 90-day uptime below. */
function dayBar(cells: DayCell[], uptime90: unknown): string {
  if (cells.length === 0) return '';
  let html = '';
  for (const c of cells) html += `<i class="${dayClass(c)}" data-date="${esc(c.date)}" data-uptime="${c.uptime ?? ''}" title="${esc(dayTitle(c))}"></i>`;
  return `<div class="days" role="img" aria-label="daily uptime, last ${cells.length} days: ${percent(uptime90)}">${html}</div>
  <div class="days-legend"><span>${cells.length} days ago</span><span>${typeof uptime90 === 'number' ? `${percent(uptime90)} uptime` : 'no uptime data'}</span><span>today</span></div>`;
}

/** Steps of a decade for the y-axis maximum: round enough to read, fine enough that the line fills the chart. */
const NICE = [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10];

/** The smallest round number (NICE × 10^k) at or above v: the chart's y-axis maximum. */
function niceCeil(v: number): number {
  if (!(v > 0)) return 1;
  const decade = 10 ** Math.floor(Math.log10(v));
  for (const m of NICE) if (m * decade >= v) return m * decade;
  return 10 * decade;
}

/** A latency for the chart: whole milliseconds from 10 ms up, one decimal below ("0.4 ms"). */
function ms(v: number): string {
  return v >= 10 || Number.isInteger(v) ? `${Math.round(v)} ms` : `${v.toFixed(1)} ms`;
}

/** The 24-hour response-time chart: hourly means as area and line from a zero baseline, gaps where an hour has none. */
export function latencyChart(values: (number | null)[]): string {
  const W = 300;
  const H = 70;
  const x0 = 40;
  const x1 = 296;
  const top = 6;
  const base = 52;
  let max = 0;
  let min = Infinity;
  let last: number | null = null;
  for (const v of values) {
    if (v === null) continue;
    if (v > max) max = v;
    if (v < min) min = v;
    last = v;
  }
  const axis = `<line class="gridline" x1="${x0}" y1="${top}" x2="${x1}" y2="${top}"/><line class="base" x1="${x0}" y1="${base}" x2="${x1}" y2="${base}"/><text x="${x0}" y="${H - 3}">24 h ago</text><text x="${x1}" y="${H - 3}" text-anchor="end">now</text>`;
  if (last === null) {
    return `<svg class="latency-chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="response time, last 24 hours: no data">${axis}<text x="${(x0 + x1) / 2}" y="${(top + base) / 2 + 4}" text-anchor="middle">no data</text></svg>`;
  }
  const yMax = niceCeil(max);
  const n = values.length;
  const x = (i: number): string => (n <= 1 ? (x0 + x1) / 2 : x0 + (i / (n - 1)) * (x1 - x0)).toFixed(1);
  const y = (v: number): string => (base - (v / yMax) * (base - top)).toFixed(1);
  let shapes = '';
  let lastI = -1;
  // Consecutive hours with data form one run; a run of one hour is a dot, so it is not lost.
  for (let i = 0; i < n; ) {
    if (values[i] === null) {
      i++;
      continue;
    }
    let j = i;
    let line = '';
    while (j < n && values[j] !== null) {
      line += `${j === i ? 'M' : 'L'}${x(j)},${y(values[j]!)} `;
      lastI = j;
      j++;
    }
    if (j - i > 1) shapes += `<path class="area" d="M${x(i)},${base} ${line.replace(/^M/, 'L')}L${x(j - 1)},${base} Z"/><path class="line" d="${line.trim()}"/>`;
    else shapes += `<circle class="point" cx="${x(i)}" cy="${y(values[i]!)}" r="2"/>`;
    i = j;
  }
  const dot = `<circle class="latest" cx="${x(lastI)}" cy="${y(last)}" r="2.5"/>`;
  const labels = `<text x="${x0 - 4}" y="${top + 4}" text-anchor="end">${ms(yMax)}</text><text x="${x0 - 4}" y="${base + 3}" text-anchor="end">0</text>`;
  const label = `response time, last 24 hours, hourly mean: ${ms(min)} to ${ms(max)}, latest ${ms(last)}`;
  return `<svg class="latency-chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${label}">${axis}${labels}${shapes}${dot}</svg>`;
}

/** "3 s", "4 min", "2 h", "5 d": how long ago, for people reading the page. */
export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

/** How long an incident lasted: "under 1 s", "45 s", "12 min", "2 h 5 min", "3 d 4 h". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 1) return 'under 1 s';
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) {
    const m = Math.round((s % 3600) / 60);
    return `${Math.floor(s / 3600)} h${m ? ` ${m} min` : ''}`;
  }
  const h = Math.round((s % 86400) / 3600);
  return `${Math.floor(s / 86400)} d${h ? ` ${h} h` : ''}`;
}

/** A timestamp as `HH:MM:SS UTC` (today) or `YYYY-MM-DD HH:MM UTC`, with the exact value on hover. */
function when(iso: string | null | undefined, nowMs: number): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return esc(iso);
  const d = new Date(t).toISOString();
  const short = nowMs - t < 20 * 3600_000 ? `${d.slice(11, 19)} UTC` : `${d.slice(0, 10)} ${d.slice(11, 16)} UTC`;
  return `<time datetime="${esc(iso)}" title="${esc(iso)}">${short}</time>`;
}

/** A time in a maintenance notice: `HH:MM` on the day `sameDayAs` names (YYYY-MM-DD), else `YYYY-MM-DD HH:MM`. */
function clock(iso: string, sameDayAs: string): string {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return esc(iso);
  const d = new Date(t).toISOString();
  const text = d.slice(0, 10) === sameDayAs ? d.slice(11, 16) : `${d.slice(0, 10)} ${d.slice(11, 16)}`;
  return `<time datetime="${esc(iso)}">${text}</time>`;
}

function maintenanceNotices(s: TargetStatus, nowIso: string): string {
  const active = s.maintenance as MaintenanceJson | undefined;
  const next = s.next_maintenance as MaintenanceJson | undefined;
  let html = '';
  if (active) html += `<p class="maintenance-notice active">Under maintenance: ${esc(active.title)} until ${clock(active.end, nowIso.slice(0, 10))} UTC</p>`;
  if (next) {
    const startDay = String(next.start).slice(0, 10);
    html += `<p class="maintenance-notice upcoming">Scheduled maintenance: ${esc(next.title)}, ${clock(next.start, '')}–${clock(next.end, startDay)} UTC</p>`;
  }
  return html;
}

function incidentList(list: Incident[] | undefined, nowMs: number): string {
  if (!list?.length) return '';
  const items = list.slice(0, DASHBOARD_INCIDENTS).map((i) => {
    const length = i.status === 'open' ? 'ongoing' : i.duration_s != null ? duration(i.duration_s) : 'resolved';
    return `<li class="${i.status === 'open' ? 'open' : 'resolved'}" data-incident-id="${esc(i.id)}">${when(i.started_at, nowMs)} · <span class="length">${length}</span> · ${esc(i.cause)}</li>`;
  });
  return `<h3>Recent incidents</h3><ul class="incidents">${items.join('')}</ul>`;
}

/** A vantage point as the status carries it (`vantage_points`, with a mesh). */
interface VantageJson {
  name: string;
  self?: boolean;
  status: string | null;
  checked_at: string | null;
  error?: string;
}

/** With a mesh: one chip per vantage point with its latest status, and "regional" when down from too few to confirm. */
function vantageLine(s: TargetStatus, nowMs: number): string {
  const points = s.vantage_points as VantageJson[] | undefined;
  if (!points?.length) return '';
  const chips = points.map((p) => {
    const status = p.status ?? 'unknown';
    const seen = p.checked_at ? `checked ${ago(nowMs - Date.parse(p.checked_at))} ago` : (p.error ?? 'no answer');
    return `<li class="vp ${esc(status)}" data-vantage="${esc(p.name)}" data-status="${esc(status)}"${p.self ? ' data-self="true"' : ''} title="${esc(`${p.name}${p.self ? ' (this instance)' : ''}: ${status}, ${seen}`)}">${esc(p.name)}${p.self ? ' <small>(here)</small>' : ''}: ${esc(p.status ?? p.error ?? 'no answer')}</li>`;
  });
  const down = (s.down_from as string[] | undefined) ?? [];
  const regional = s.regional === true ? `<p class="regional" data-regional="true">Regional: down from ${down.map((n) => esc(n)).join(', ')} only, not confirmed by the mesh</p>` : '';
  return `${regional}<ul class="vantage" aria-label="latest status from each vantage point">${chips.join('')}</ul>`;
}

function card(name: string, s: TargetStatus, trend: (number | null)[], days: DayCell[], nowMs: number, nowIso: string, timeline?: IncidentEvent[]): string {
  const status = s.latest?.status ?? 'unknown';
  // In maintenance the card is blue whatever the checks say; data-status stays the checked status.
  const shown = s.maintenance != null ? 'maintenance' : esc(status);
  const lat = s.latency_24h as { p50?: number; p95?: number } | undefined;
  const tls = s.tls as { days_left?: number | null; warning?: boolean; error?: string } | undefined;
  const whois = s.whois as { days_left?: number | null; warning?: boolean; error?: string } | undefined;
  const inc = s.current_incident as { started_at?: string; cause?: string; caused_by?: string } | undefined;
  const rows: string[] = [`<dt>Latency p50 / p95</dt><dd>${lat ? `${esc(lat.p50)} / ${esc(lat.p95)} ms` : '—'}</dd>`];
  if (tls) rows.push(`<dt>TLS</dt><dd class="${tls.warning ? 'warn' : ''}">${tls.days_left != null ? `${esc(tls.days_left)} days left` : esc(tls.error ?? 'unknown')}</dd>`);
  if (whois) rows.push(`<dt>Domain</dt><dd class="${whois.warning ? 'warn' : ''}">${whois.days_left != null ? `${esc(whois.days_left)} days left` : esc(whois.error ?? 'unknown')}</dd>`);
  const tests = s.test_staleness as { stale?: boolean; seconds_since_pass?: number | null; last_passed?: boolean | null } | undefined;
  if (tests) {
    const text = tests.seconds_since_pass == null ? 'never passed' : `passed ${ago(tests.seconds_since_pass * 1000)} ago`;
    rows.push(`<dt>Tests</dt><dd class="${tests.stale || tests.last_passed === false ? 'bad' : ''}">${tests.stale ? 'stale · ' : ''}${text}</dd>`);
  }
  if (s.test_duration_drift) rows.push(`<dt>Test time</dt><dd class="warn">${esc((s.test_duration_drift as { message?: string }).message ?? 'slower')}</dd>`);
  const routes = (s.route_status as { ok: boolean; path: string }[] | undefined) ?? [];
  if (routes.length) {
    const bad = routes.filter((r) => !r.ok);
    rows.push(`<dt>Routes</dt><dd class="${bad.length ? 'bad' : ''}">${bad.length ? `failing: ${bad.map((r) => esc(r.path)).join(', ')}` : `${routes.length} ok`}</dd>`);
  }
  const dns = (s.dns_status as { matches: boolean; name: string; record_type: string }[] | undefined) ?? [];
  if (dns.length) {
    const bad = dns.filter((r) => !r.matches);
    rows.push(`<dt>DNS</dt><dd class="${bad.length ? 'bad' : ''}">${bad.length ? `mismatch: ${bad.map((r) => `${esc(r.name)} ${esc(r.record_type)}`).join(', ')}` : `${dns.length} ok`}</dd>`);
  }
  const uptime = `<dl class="uptime"><div><dt>24 h</dt><dd>${percent(s.uptime_24h)}</dd></div><div><dt>7 d</dt><dd>${percent(s.uptime_7d)}</dd></div><div><dt>30 d</dt><dd>${percent(s.uptime_30d)}</dd></div><div><dt>90 d</dt><dd>${percent(s.uptime_90d)}</dd></div></dl>`;
  const checked = s.latest ? `checked ${ago(nowMs - Date.parse(s.latest.checked_at))} ago, ${when(s.latest.checked_at, nowMs)}${s.latest.maintenance ? ' · in maintenance' : ''}${s.latest.error ? ` · ${esc(s.latest.error)}` : ''}` : 'not checked yet';
  return `<article class="target ${shown}" data-target="${esc(name)}" data-status="${esc(status)}">
  <header><h2>${esc(s.label)}</h2><span class="badge">${shown}</span></header>
  ${inc ? `<p class="incident">Incident since ${when(inc.started_at, nowMs)} (${ago(nowMs - Date.parse(inc.started_at ?? ''))}): ${esc(inc.cause)}${inc.caused_by ? ` · caused by ${esc(inc.caused_by)}` : ''}</p>` : ''}
  ${timelineList(timeline, nowMs)}
  ${maintenanceNotices(s, nowIso)}
  ${vantageLine(s, nowMs)}
  ${dayBar(days, s.uptime_90d)}
  ${uptime}
  ${latencyChart(trend)}
  <dl class="facts">${rows.join('')}</dl>
  ${incidentList(s.incidents as Incident[] | undefined, nowMs)}
  <footer>${checked}</footer>
</article>`;
}

/** The headline: targets in maintenance are left out of the down and degraded counts (they have their own line). */
function headline(d: DashboardData, names: string[]): string {
  const counted = names.filter((n) => d.statuses[n]!.maintenance == null);
  const count = (st: string | undefined): number => counted.filter((n) => d.statuses[n]!.latest?.status === st).length;
  const down = count('down');
  const degraded = count('degraded');
  const unchecked = count(undefined);
  if (names.length === 0) return 'No targets configured';
  if (counted.length === 0) return names.length === 1 ? 'Under maintenance' : `All ${names.length} targets under maintenance`;
  if (down > 0) return `${down} of ${names.length} targets down${degraded ? `, ${degraded} degraded` : ''}`;
  if (degraded > 0) return `${degraded} of ${names.length} targets degraded`;
  if (unchecked > 0) return `${counted.length - unchecked} of ${names.length} targets operational, ${unchecked} not checked yet`;
  return 'All systems operational';
}

/** How many active silences the page lists (the rest are counted). */
const DASHBOARD_SILENCES = 20;

/** "Silenced: api until 14:00 UTC (deploy)": reasons are user input, escaped like every text. */
function silenceSummary(list: DashboardData['silences'], nowIso: string): string {
  if (!list || list.length === 0) return '';
  const items = list.slice(0, DASHBOARD_SILENCES).map((s) => `<li>${s.target === null ? 'all targets' : esc(s.target)} until ${clock(s.expires_at, nowIso.slice(0, 10))} UTC (${esc(s.reason)})</li>`);
  if (list.length > DASHBOARD_SILENCES) items.push(`<li>and ${list.length - DASHBOARD_SILENCES} more</li>`);
  return `<div class="silences" data-count="${list.length}">Silenced: <ul>${items.join('')}</ul></div>`;
}

function maintenanceSummary(d: DashboardData, names: string[]): string {
  let active = 0;
  let upcoming = 0;
  for (const n of names) {
    if (d.statuses[n]!.maintenance != null) active++;
    if (d.statuses[n]!.next_maintenance != null) upcoming++;
  }
  if (active === 0 && upcoming === 0) return '';
  const parts: string[] = [];
  if (active) parts.push(`${active} target${active === 1 ? '' : 's'} under maintenance`);
  if (upcoming) parts.push(`${upcoming} with maintenance scheduled in the next 7 days`);
  return `<p class="maintenance-summary" data-active="${active}" data-upcoming="${upcoming}">${parts.join(' · ')}</p>`;
}

const STYLE = `
:root { color-scheme: light dark; --bg: #f6f7f9; --fg: #1d2330; --muted: #5d6678; --card: #fff; --line: #dde1e8; --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; --maint: #0969da; --bad-text: #a40e26; --warn-text: #7d4e00;
  --d-up: #2da44e; --d-high: #9bd36b; --d-mid: #e3a008; --d-low: #d1242f; --d-none: #d5dae1; --d-maint: #3b82f6; --chart: #4f5d95; }
@media (prefers-color-scheme: dark) { :root { --bg: #0f1218; --fg: #e6e9ef; --muted: #9aa3b5; --card: #181c24; --line: #2a303c; --ok: #3fb950; --warn: #d29922; --bad: #f85149; --maint: #4493f8; --bad-text: #ff8e86; --warn-text: #e3b341;
  --d-up: #3fb950; --d-high: #8fc45a; --d-mid: #d29922; --d-low: #f85149; --d-none: #2f3542; --d-maint: #4493f8; --chart: #8ea2f0; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
main { max-width: 1180px; margin: 0 auto; padding: 24px 16px; }
h1 { font-size: 1.4rem; margin: 0 0 4px; }
.sub { color: var(--muted); margin: 0 0 20px; }
.maintenance-summary { color: var(--maint); margin: -12px 0 20px; }
.silences { color: var(--muted); margin: -12px 0 20px; overflow-wrap: anywhere; } .silences ul { display: inline; margin: 0; padding: 0; list-style: none; } .silences li { display: inline; } .silences li + li::before { content: " · "; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(340px, 100%), 1fr)); gap: 14px; }
.target { background: var(--card); border: 1px solid var(--line); border-left: 5px solid var(--muted); border-radius: 8px; padding: 14px 16px; min-width: 0; }
.target.operational { border-left-color: var(--ok); } .target.degraded { border-left-color: var(--warn); } .target.down { border-left-color: var(--bad); } .target.maintenance { border-left-color: var(--maint); }
.target header { display: flex; justify-content: space-between; align-items: center; gap: 8px; }
.target h2 { font-size: 1.05rem; margin: 0; overflow-wrap: anywhere; }
.badge { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; padding: 2px 8px; border-radius: 999px; border: 1px solid currentColor; white-space: nowrap; }
.operational .badge { color: var(--ok); } .degraded .badge { color: var(--warn); } .down .badge { color: var(--bad); } .maintenance .badge { color: var(--maint); }
.incident { color: var(--bad-text); background: color-mix(in srgb, var(--bad) 12%, transparent); border-radius: 6px; padding: 6px 10px; margin: 10px 0 0; font-weight: 600; overflow-wrap: anywhere; }
.maintenance-notice { border-radius: 6px; padding: 6px 10px; margin: 10px 0 0; overflow-wrap: anywhere; }
.maintenance-notice.active { color: var(--maint); background: color-mix(in srgb, var(--maint) 12%, transparent); font-weight: 600; }
.maintenance-notice.upcoming { color: var(--maint); border: 1px dashed color-mix(in srgb, var(--maint) 50%, transparent); font-size: .88rem; }
.days { display: grid; grid-auto-flow: column; grid-auto-columns: 1fr; gap: 1px; height: 30px; margin: 14px 0 2px; }
.days i { display: block; border-radius: 1px; background: var(--d-none); }
.days i:hover { opacity: .7; }
.days .up { background: var(--d-up); } .days .high { background: var(--d-high); } .days .mid { background: var(--d-mid); } .days .low { background: var(--d-low); } .days .maint { background: var(--d-maint); }
.days-legend { display: flex; justify-content: space-between; color: var(--muted); font-size: .75rem; }
.days-legend span:nth-child(2) { color: var(--fg); font-weight: 600; }
dl { margin: 0; }
dl.uptime { display: grid; grid-template-columns: repeat(4, 1fr); gap: 6px; margin: 10px 0 4px; text-align: center; }
dl.uptime div { border: 1px solid var(--line); border-radius: 6px; padding: 3px 0; }
dl.uptime dt { color: var(--muted); font-size: .72rem; } dl.uptime dd { margin: 0; font-variant-numeric: tabular-nums; font-size: .9rem; white-space: nowrap; }
.latency-chart { display: block; width: 100%; height: auto; margin: 8px 0 6px; color: var(--chart); }
.latency-chart text { font-size: 10px; fill: var(--muted); }
.latency-chart .gridline { stroke: var(--line); stroke-dasharray: 3 3; } .latency-chart .base { stroke: var(--line); }
.latency-chart .area { fill: currentColor; fill-opacity: .16; stroke: none; } .latency-chart .line { fill: none; stroke: currentColor; stroke-width: 1.5; stroke-linejoin: round; }
.latency-chart .point, .latency-chart .latest { fill: currentColor; }
dl.facts { display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; text-align: right; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.warn { color: var(--warn); } .bad { color: var(--bad); }
h3 { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 12px 0 4px; font-weight: 600; }
.timeline { margin: 6px 0 0; padding-left: 20px; font-size: .85rem; } .timeline li { margin: 1px 0; overflow-wrap: anywhere; }
.incidents { list-style: none; margin: 0; padding: 0; font-size: .85rem; }
.incidents li { padding: 3px 0 3px 10px; border-left: 3px solid var(--line); margin: 2px 0; overflow-wrap: anywhere; }
.incidents li.open { border-left-color: var(--bad); } .incidents li.open .length { color: var(--bad); font-weight: 600; }
.vantage { list-style: none; margin: 10px 0 0; padding: 0; display: flex; flex-wrap: wrap; gap: 4px; font-size: .8rem; }
.vantage li { border: 1px solid var(--line); border-radius: 999px; padding: 1px 8px; overflow-wrap: anywhere; }
.vantage .operational { color: var(--ok); } .vantage .degraded { color: var(--warn); } .vantage .down { color: var(--bad); } .vantage .unknown { color: var(--muted); }
.regional { color: var(--warn-text); background: color-mix(in srgb, var(--warn) 12%, transparent); border-radius: 6px; padding: 6px 10px; margin: 10px 0 0; overflow-wrap: anywhere; }
footer { color: var(--muted); font-size: .8rem; margin-top: 10px; overflow-wrap: anywhere; }
.visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
`;

/**
 * Updates the page in place every 30 s: it fetches the page again and swaps its `<main>`, and the
 * live region (outside `<main>`) reads out the headline when it changes. A `<meta refresh>` would
 * reload the whole page under a reader's cursor (WCAG 2.2.1); this keeps the scroll position and
 * focus. A failed fetch says so once and tries again at the next turn.
 */
const LIVE_SCRIPT = `(() => {
  const live = document.getElementById('live');
  let failed = false;
  const turn = async () => {
    try {
      const res = await fetch(location.href, { headers: { accept: 'text/html' }, cache: 'no-store' });
      if (!res.ok) throw new Error('HTTP ' + res.status);
      const next = new DOMParser().parseFromString(await res.text(), 'text/html');
      const fresh = next.querySelector('main');
      const shown = document.querySelector('main');
      if (fresh && shown) {
        const before = shown.querySelector('h1')?.textContent;
        shown.replaceWith(document.adoptNode(fresh));
        document.title = next.title;
        const after = fresh.querySelector('h1')?.textContent;
        if (failed || after !== before) live.textContent = after || '';
      }
      failed = false;
    } catch {
      if (!failed) live.textContent = 'The status could not be updated; trying again in 30 seconds.';
      failed = true;
    }
    setTimeout(turn, 30000);
  };
  setTimeout(turn, 30000);
})();`;

/** The page's CSP: its inline styles, data: images, its one script by hash, and fetches of itself. */
export const DASHBOARD_CSP = `default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-${createHash('sha256').update(LIVE_SCRIPT).digest('base64')}'; connect-src 'self'`;

export function renderDashboard(d: DashboardData): string {
  const names = Object.keys(d.statuses);
  const nowMs = Date.parse(d.generatedAt);
  const summary = headline(d, names);
  let cards = '';
  for (const n of names) cards += card(n, d.statuses[n]!, d.trends[n] ?? [], d.days[n] ?? [], nowMs, d.generatedAt, d.timelines?.[n]) + '\n';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(summary)} · ${esc(d.instance)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${esc(summary)}</h1>
<p class="sub">${esc(d.instance)} · mkt ${esc(d.version)} · updated ${when(d.generatedAt, nowMs)} · updates every 30 s</p>
${maintenanceSummary(d, names)}
${silenceSummary(d.silences, d.generatedAt)}
<section class="grid">
${cards}</section>
</main>
<p id="live" class="visually-hidden" role="status" aria-live="polite"></p>
<script>${LIVE_SCRIPT}</script>
</body>
</html>
`;
}
