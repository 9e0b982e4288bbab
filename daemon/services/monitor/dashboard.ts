// The dashboard page: one self-contained HTML document (inline CSS and SVG, no scripts, no
// external assets) rendered on the server, refreshing itself every 30 s; light and dark.
// Times are shown as people read them (UTC clock time and "how long ago").
import type { TargetStatus } from './status.js';

export interface DashboardData {
  instance: string;
  version: string;
  generatedAt: string;
  statuses: Record<string, TargetStatus>;
  /** Mean latency per hour over the last 24 h, oldest first (null: no data). */
  trends: Record<string, (number | null)[]>;
}

function esc(v: unknown): string {
  return String(v ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function sparkline(values: (number | null)[], width = 160, height = 32): string {
  const pts = values.map((v, i) => ({ v, i })).filter((p): p is { v: number; i: number } => p.v !== null);
  if (pts.length === 0) return `<svg class="spark" width="${width}" height="${height}" role="img" aria-label="no latency data"></svg>`;
  const max = Math.max(...pts.map((p) => p.v));
  const min = Math.min(...pts.map((p) => p.v));
  const span = max - min || 1;
  const x = (i: number): number => (values.length <= 1 ? width / 2 : (i / (values.length - 1)) * (width - 4) + 2);
  const y = (v: number): number => height - 3 - ((v - min) / span) * (height - 6);
  const d = pts.map((p, k) => `${k === 0 ? 'M' : 'L'}${x(p.i).toFixed(1)},${y(p.v).toFixed(1)}`).join(' ');
  const last = pts[pts.length - 1]!;
  // The newest point as a dot, so that a target with one hour of data still shows something.
  const dot = `<circle cx="${x(last.i).toFixed(1)}" cy="${y(last.v).toFixed(1)}" r="2.5" fill="currentColor"/>`;
  return `<svg class="spark" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="latency, last 24 hours: ${Math.round(min)} to ${Math.round(max)} ms"><path d="${d}" fill="none" stroke="currentColor" stroke-width="1.5"/>${dot}</svg>`;
}

/** "3 s", "4 min", "2 h", "5 d": how long ago, for people reading the page. */
export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
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

function pct(v: unknown): string {
  return typeof v === 'number' ? `${v.toFixed(2)}%` : '—';
}

function card(name: string, s: TargetStatus, trend: (number | null)[], nowMs: number): string {
  const status = s.latest?.status ?? 'unknown';
  const lat = s.latency_24h as { p50?: number; p95?: number } | undefined;
  const tls = s.tls as { days_left?: number | null; warning?: boolean; error?: string } | undefined;
  const whois = s.whois as { days_left?: number | null; warning?: boolean; error?: string } | undefined;
  const inc = s.current_incident as { started_at?: string; cause?: string } | undefined;
  const rows: string[] = [
    `<dt>Uptime 24 h</dt><dd>${pct(s.uptime_24h)}</dd>`,
    `<dt>Uptime 7 d</dt><dd>${pct(s.uptime_7d)}</dd>`,
    `<dt>Latency p50 / p95</dt><dd>${lat ? `${esc(lat.p50)} / ${esc(lat.p95)} ms` : '—'}</dd>`,
  ];
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
  return `<article class="target ${esc(status)}" data-target="${esc(name)}" data-status="${esc(status)}">
  <header><h2>${esc(s.label)}</h2><span class="badge">${esc(status)}</span></header>
  ${inc ? `<p class="incident">Incident since ${when(inc.started_at, nowMs)} (${ago(nowMs - Date.parse(inc.started_at ?? ''))}): ${esc(inc.cause)}</p>` : ''}
  ${sparkline(trend)}
  <dl>${rows.join('')}</dl>
  <footer>${s.latest ? `checked ${ago(nowMs - Date.parse(s.latest.checked_at))} ago, ${when(s.latest.checked_at, nowMs)}${s.latest.error ? ` · ${esc(s.latest.error)}` : ''}` : 'not checked yet'}</footer>
</article>`;
}

export function renderDashboard(d: DashboardData): string {
  const names = Object.keys(d.statuses);
  const count = (st: string | undefined): number => names.filter((n) => d.statuses[n]!.latest?.status === st).length;
  const down = count('down');
  const degraded = count('degraded');
  const unchecked = count(undefined);
  const nowMs = Date.parse(d.generatedAt);
  const summary =
    names.length === 0
      ? 'No targets configured'
      : down > 0
        ? `${down} of ${names.length} targets down${degraded ? `, ${degraded} degraded` : ''}`
        : degraded > 0
          ? `${degraded} of ${names.length} targets degraded`
          : unchecked > 0
            ? `${names.length - unchecked} of ${names.length} targets operational, ${unchecked} not checked yet`
            : 'All systems operational';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="30">
<title>${esc(summary)} · ${esc(d.instance)}</title>
<style>
:root { color-scheme: light dark; --bg: #f6f7f9; --fg: #1d2330; --muted: #5d6678; --card: #fff; --line: #dde1e8; --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; }
@media (prefers-color-scheme: dark) { :root { --bg: #0f1218; --fg: #e6e9ef; --muted: #9aa3b5; --card: #181c24; --line: #2a303c; --ok: #3fb950; --warn: #d29922; --bad: #f85149; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
main { max-width: 1100px; margin: 0 auto; padding: 24px 16px; }
h1 { font-size: 1.4rem; margin: 0 0 4px; }
.sub { color: var(--muted); margin: 0 0 20px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 14px; }
.target { background: var(--card); border: 1px solid var(--line); border-left: 5px solid var(--muted); border-radius: 8px; padding: 14px 16px; }
.target.operational { border-left-color: var(--ok); } .target.degraded { border-left-color: var(--warn); } .target.down { border-left-color: var(--bad); }
.target header { display: flex; justify-content: space-between; align-items: center; gap: 8px; }
.target h2 { font-size: 1.05rem; margin: 0; }
.badge { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; padding: 2px 8px; border-radius: 999px; border: 1px solid currentColor; }
.operational .badge { color: var(--ok); } .degraded .badge { color: var(--warn); } .down .badge { color: var(--bad); }
.spark { display: block; margin: 10px 0; color: var(--muted); }
dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; margin: 0; }
dt { color: var(--muted); } dd { margin: 0; text-align: right; font-variant-numeric: tabular-nums; }
.warn { color: var(--warn); } .bad { color: var(--bad); }
.incident { color: var(--bad); margin: 8px 0 0; }
footer { color: var(--muted); font-size: .8rem; margin-top: 10px; }
</style>
</head>
<body>
<main>
<h1>${esc(summary)}</h1>
<p class="sub">${esc(d.instance)} · mkt ${esc(d.version)} · updated ${when(d.generatedAt, nowMs)} · refreshes every 30 s</p>
<section class="grid">
${names.map((n) => card(n, d.statuses[n]!, d.trends[n] ?? [], nowMs)).join('\n')}
</section>
</main>
</body>
</html>
`;
}
