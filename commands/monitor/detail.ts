// The one-target view of `mkt monitor status TARGET` (and the head of `mkt monitor detail`): every
// check the target has (health, heartbeat, latency, incident, TLS, WHOIS, tests, routes, DNS) as labelled lines.
import type { Cell } from '../../src/cli/output.js';
import type { TargetStatusJson } from '../../src/client/monitor.js';
import { pct } from './shared.js';

type Obj = Record<string, unknown>;

const str = (v: unknown): string => (v === null || v === undefined ? '-' : String(v));

function days(n: unknown): string {
  return typeof n === 'number' ? `${n} day${n === 1 ? '' : 's'} left` : 'unknown expiry';
}

/** Seconds in the largest unit that divides them (`1h`, `30m`, `90s`), as the configuration writes them. */
function span(seconds: unknown): string {
  if (typeof seconds !== 'number') return '-';
  for (const [unit, n] of [['d', 86_400], ['h', 3_600], ['m', 60]] as const) if (seconds > 0 && seconds % n === 0) return `${seconds / n}${unit}`;
  return `${seconds}s`;
}

/**
 * A ping URL with its key hidden. The key lets anyone signal the target, and these views end up in
 * terminals' scrollback, screenshots and tickets; `mkt monitor ping-url` prints it whole (and
 * `--json` keeps the API's document as it came, for scripts).
 */
export function maskedPingUrl(url: string, target: string): string {
  const at = url.lastIndexOf('/ping/');
  return `${at < 0 ? '' : url.slice(0, at)}/ping/<key> (\`mkt monitor ping-url ${target}\` prints it)`;
}

/** A heartbeat target's lines: its schedule, its last signals, when it is late, its ping URL hidden. */
function heartbeatFields(name: string, s: TargetStatusJson): [string, Cell][] {
  const hb = s.heartbeat as Obj | undefined;
  const f: [string, Cell][] = [];
  if (hb) {
    const when = typeof hb.schedule === 'string' ? `schedule "${hb.schedule}" (${str(hb.timezone ?? 'UTC')})` : `every ${span(hb.period_s)}`;
    f.push(['heartbeat', `${when}, grace ${span(hb.grace_s)}`]);
    f.push(['last ping', hb.last_ping_at ? `${str(hb.last_ping_at)} (${hb.last_ok ? 'ok' : 'failed'})` : 'none yet']);
    if (hb.last_start_at) f.push(['last start', `${str(hb.last_start_at)}${hb.running ? ' (running)' : ''}`]);
    if (hb.late_after) f.push(['late after', str(hb.late_after)]);
  }
  if (typeof s.ping_url === 'string') f.push(['ping url', maskedPingUrl(s.ping_url, name)]);
  return f;
}

export function targetFields(name: string, s: TargetStatusJson): [string, Cell][] {
  const f: [string, Cell][] = [
    ['target', name],
    ['label', s.label],
    ['status', s.latest?.status ?? 'no data'],
    ['checked', s.latest?.checked_at ?? '-'],
    ['response', s.latest ? `${s.latest.response_time_ms} ms` : '-'],
  ];
  if (s.latest?.error) f.push(['error', s.latest.error]);
  f.push(...heartbeatFields(name, s));
  f.push(['uptime 24h', pct(s.uptime_24h)], ['uptime 7d', pct(s.uptime_7d)]);
  const l = s.latency_24h;
  if (l) f.push(['latency 24h', `p50 ${l.p50} ms, p95 ${l.p95} ms, p99 ${l.p99} ms, max ${l.max} ms (${l.count} checks)`]);
  const inc = s.current_incident as Obj | undefined;
  if (inc) {
    f.push(['incident', `open since ${str(inc.started_at)}: ${str(inc.cause)} (${str(inc.checks)} checks)`]);
    if (typeof inc.caused_by === 'string') f.push(['caused by', `${inc.caused_by} (down first; this target sends no alert of its own meanwhile)`]);
    // The open incident's timeline (one target's status carries it), oldest first.
    ((inc.timeline as Obj[] | undefined) ?? []).forEach((e, i) => f.push([i === 0 ? 'timeline' : '', `${str(e.at)} ${str(e.kind).replace('_', ' ')}${e.detail !== undefined ? `: ${str(e.detail)}` : ''}`]));
  }
  const past = (s.incidents as Obj[] | undefined)?.filter((i) => i.status === 'resolved') ?? [];
  if (past.length) f.push(['past incidents', `${past.length}, last resolved ${str(past[0]!.ended_at)}`]);
  const tls = s.tls as Obj | undefined;
  if (tls) f.push(['tls', `${tls.warning ? 'WARNING ' : ''}${days(tls.days_left)}, until ${str(tls.not_after)}, issuer ${str(tls.issuer)}${tls.error ? ` (${str(tls.error)})` : ''}`]);
  const whois = s.whois as Obj | undefined;
  if (whois) f.push(['domain', `${whois.warning ? 'WARNING ' : ''}${str(whois.domain)}: ${days(whois.days_left)}${whois.expires_at ? `, until ${str(whois.expires_at)}` : ''}${whois.error ? ` (${str(whois.error)})` : ''}`]);
  const st = s.test_staleness as Obj | undefined;
  if (st) {
    const since = typeof st.seconds_since_pass === 'number' ? `last pass ${str(st.last_pass_at)} (${st.seconds_since_pass} s ago)` : 'never passed';
    f.push(['tests', `${st.stale ? 'STALE ' : ''}${since}, stale after ${str(st.stale_after_s)} s; last run exit ${str(st.last_exit_code)} in ${str(st.last_duration_ms)} ms`]);
  }
  const drift = s.test_duration_drift as Obj | undefined;
  if (drift) f.push(['test drift', str(drift.message)]);
  for (const r of (s.route_status as Obj[] | undefined) ?? []) f.push([`route ${str(r.path)}`, `${r.ok ? 'ok' : 'FAIL'} (HTTP ${str(r.status_code)}, ${str(r.response_time_ms)} ms)`]);
  for (const d of (s.dns_status as Obj[] | undefined) ?? []) {
    const actual = Array.isArray(d.actual) ? d.actual.join(' ') : '';
    f.push([`dns ${str(d.name)} ${str(d.record_type)}`, d.matches ? `ok (${actual})` : `MISMATCH: got ${actual || '-'}, want ${Array.isArray(d.expected) ? d.expected.join(' ') : '-'}`]);
  }
  return f;
}

/** One short line of what needs attention (incident, error, expiries, stale tests, failing routes, DNS). */
export function attention(s: TargetStatusJson): string {
  const notes: string[] = [];
  const inc = s.current_incident as Obj | undefined;
  if (inc) notes.push(`incident: ${str(inc.cause)}`);
  else if (s.latest?.error) notes.push(s.latest.error);
  const tls = s.tls as Obj | undefined;
  if (tls?.warning) notes.push(tls.error ? `tls: ${str(tls.error)}` : `tls: ${days(tls.days_left)}`);
  const whois = s.whois as Obj | undefined;
  if (whois?.warning) notes.push(whois.error ? `domain: ${str(whois.error)}` : `domain: ${days(whois.days_left)}`);
  if ((s.test_staleness as Obj | undefined)?.stale) notes.push('tests stale');
  if (s.test_duration_drift) notes.push('tests slower');
  const badRoutes = ((s.route_status as Obj[] | undefined) ?? []).filter((r) => !r.ok).map((r) => str(r.path));
  if (badRoutes.length) notes.push(`routes failing: ${badRoutes.join(' ')}`);
  const badDns = ((s.dns_status as Obj[] | undefined) ?? []).filter((d) => !d.matches).map((d) => `${str(d.name)} ${str(d.record_type)}`);
  if (badDns.length) notes.push(`dns mismatch: ${badDns.join(', ')}`);
  return notes.join('; ');
}
