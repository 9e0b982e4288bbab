// reportRun: `mkt monitor report [TARGET...] --from --to --format table|csv|json` — the SLA report
// of each target over a period (every target when none is named), as the server computes it.
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { printFields, printJson, printTable } from '../../src/cli/output.js';
import type { SlaReportJson } from '../../src/client/monitor.js';
import { monitorClient, pct, type ClientFlags } from './shared.js';

export interface ReportOptions extends ClientFlags {
  factory: Factory;
  targets: string[];
  from?: string;
  to?: string;
  /** commander's .choices() has already refused any other value (exit 2). */
  format?: 'table' | 'csv' | 'json';
}

/** The CSV columns: one row per target, for spreadsheets and monthly SLA sheets. */
const CSV_COLUMNS: [string, (r: SlaReportJson) => string | number | null | undefined][] = [
  ['target', (r) => r.target],
  ['label', (r) => r.label],
  ['from', (r) => r.from],
  ['to', (r) => r.to],
  ['uptime_percent', (r) => r.uptime],
  ['downtime_minutes', (r) => r.downtime_minutes],
  ['checks_counted', (r) => r.checks.counted],
  ['checks_operational', (r) => r.checks.operational],
  ['checks_degraded', (r) => r.checks.degraded],
  ['checks_down', (r) => r.checks.down],
  ['checks_maintenance', (r) => r.checks.maintenance],
  ['maintenance_minutes', (r) => r.minutes.maintenance],
  ['no_data_minutes', (r) => r.minutes.no_data],
  ['incidents', (r) => r.incident_count],
  ['incident_seconds', (r) => r.incidents.reduce((n, i) => n + i.in_period_s, 0)],
  ['latency_p50_ms', (r) => r.latency?.p50],
  ['latency_p95_ms', (r) => r.latency?.p95],
  ['latency_p99_ms', (r) => r.latency?.p99],
  // Last, so that scripts reading the columns before it by position keep working.
  ['watched_minutes', (r) => (typeof r.watched_seconds === 'number' ? Math.round(r.watched_seconds / 6) / 10 : undefined)],
];

/** RFC 4180: quote a field holding a comma, quote or line break; double the quotes inside. */
function csvField(v: string | number | null | undefined): string {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function reportCsv(reports: SlaReportJson[]): string {
  const lines = [CSV_COLUMNS.map(([h]) => h).join(',')];
  for (const r of reports) lines.push(CSV_COLUMNS.map(([, f]) => csvField(f(r))).join(','));
  return lines.join('\r\n') + '\r\n';
}

function duration(s: number): string {
  if (s < 90) return `${s} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/**
 * How much of the period the target was watched, and the rule that follows from it: time before
 * its first check is no data, so downtime can never exceed the time it was watched.
 */
export function watchedLine(r: SlaReportJson): string | undefined {
  // A server from before `watched_seconds` leaves the line out rather than guess.
  if (typeof r.watched_seconds !== 'number') return undefined;
  const period = Math.round((Date.parse(r.to) - Date.parse(r.from)) / 1000);
  if (r.watched_seconds <= 0 || r.watched_from === null) return 'not watched in this period (no check before its end); all of it is no data';
  if (r.watched_seconds >= period) return 'the whole period';
  return `${duration(r.watched_seconds)} of the period (since ${r.watched_from}); downtime counts watched time only`;
}

export async function reportRun(opts: ReportOptions): Promise<void> {
  const { io } = opts.factory;
  const format = opts.json ? 'json' : (opts.format ?? 'table');
  const client = await monitorClient(opts.factory, opts);
  const names = opts.targets.length ? opts.targets : Object.keys((await callApi('monitor', () => client.statusAll())).targets);
  const reports: SlaReportJson[] = [];
  for (const name of names) reports.push(await callApi('monitor', () => client.report(name, opts.from, opts.to)));
  if (format === 'json') {
    printJson(io, opts.targets.length === 1 ? reports[0] : { reports });
    return;
  }
  // As `mkt monitor status` says it: nothing printed at all would read as a report of nothing wrong.
  if (names.length === 0) io.stderr.write(`no targets configured on ${client.http.baseUrl}\n`);
  if (format === 'csv') {
    io.stdout.write(reportCsv(reports));
    return;
  }
  reports.forEach((r, i) => {
    if (i > 0) io.stdout.write('\n');
    const watched = watchedLine(r);
    printFields(io, [
      ['target', `${r.target} (${r.label})`],
      ['period', `${r.from} to ${r.to}`],
      ...(watched === undefined ? [] : [['watched', watched] as [string, string]]),
      ['uptime', pct(r.uptime)],
      ['downtime', `${r.downtime_minutes} min`],
      ['checks', `${r.checks.counted} counted: ${r.checks.operational} operational, ${r.checks.degraded} degraded, ${r.checks.down} down; ${r.checks.maintenance} in maintenance`],
      ['minutes', `${r.minutes.period} in period: ${r.minutes.maintenance} maintenance, ${r.minutes.no_data} no data`],
      ['latency', r.latency ? `p50 ${r.latency.p50} ms, p95 ${r.latency.p95} ms, p99 ${r.latency.p99} ms (${r.latency.count} checks)` : 'no data'],
      ['incidents', r.incident_count],
      ['maintenance', r.maintenance_windows.length ? r.maintenance_windows.map((w) => `${w.title} ${w.start} to ${w.end}`).join('; ') : 'none'],
    ]);
    if (r.incidents.length) {
      printTable(
        io,
        ['incident', 'started', 'ended', 'in period', 'cause'],
        r.incidents.map((x) => [x.id, x.started_at, x.ended_at ?? 'open', duration(x.in_period_s), x.cause]),
      );
    }
  });
}
