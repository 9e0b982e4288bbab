// The health monitor's YAML configuration: parsing with line numbers for every error, defaults,
// and validation. Shared by `mkt serve monitor` and the offline `mkt monitor check-config`.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { LineCounter, parseDocument, isMap } from 'yaml';
import { ConfigError, Reader, parseDuration } from './yaml-reader.js';
import { canonicalZone, localToEpoch } from '../util/zoned-time.js';
import { scheduleProblem, type HeartbeatConfig } from '../monitor/heartbeat-schedule.js';
import { ConditionSyntaxError, parseCondition, type Condition } from '../monitor/conditions.js';
import { readAlertChannels, readTargetAlerts, type AlertChannel } from './monitor-alerts.js';
import { readDependencies } from './monitor-deps.js';

export type { HeartbeatConfig } from '../monitor/heartbeat-schedule.js';

export { ConfigError, parseDuration } from './yaml-reader.js';

export interface RouteCheckConfig {
  path: string;
  status: number;
}
export interface DnsCheckConfig {
  name: string;
  type: string;
  expected: string[];
  /** `host` or `host:port`; default: the system resolver. */
  server?: string;
}
export interface TlsCheckConfig {
  host: string;
  port: number;
  warnDays: number;
}
export interface WhoisCheckConfig {
  domain: string;
  /** `host` or `host:port` (port 43 by default). */
  server: string;
  warnDays: number;
}
export interface TestsConfig {
  command: string[];
  cwd?: string;
  intervalMs: number;
  staleAfterMs: number;
  timeoutMs: number;
}
/** `url: tcp://host:port`: a connection, then optionally a line sent and an answer expected. */
export interface TcpConfig {
  host: string;
  port: number;
  /** Sent once connected (`\r\n` and other escapes as YAML wrote them). */
  send?: string;
  /** The answer must contain this text, or match this regular expression. */
  expect?: { text: string } | { regex: string; flags: string };
}
export interface TargetConfig {
  name: string;
  label: string;
  /** What is polled: an http(s) URL, or `tcp://host:port`; empty for a heartbeat target (it is pushed to). */
  url: string;
  /** A TCP target (its url is `tcp://...`). */
  tcp?: TcpConfig;
  /** A heartbeat target: checked by the pings it receives, not polled. */
  heartbeat?: HeartbeatConfig;
  /** Conditions on the HTTP answer; when given they decide operational or down instead of today's rules. */
  conditions?: Condition[];
  intervalMs: number;
  timeoutMs: number;
  /** A health answer slower than this (but within the timeout) is `degraded`. */
  degradedAfterMs?: number;
  /** Consecutive `down` checks that open an incident for this target (default: the global one). */
  incidentThreshold?: number;
  /** Mesh confirmation for this target (default: the global one). */
  confirm?: ConfirmConfig;
  headers: Record<string, string>;
  routes: RouteCheckConfig[];
  dns: DnsCheckConfig[];
  tls?: TlsCheckConfig;
  whois?: WhoisCheckConfig;
  tests?: TestsConfig;
  /** The alert channels (by name) this target's alerts go to; absent: every channel. */
  alerts?: string[];
  /** `depends_on`: targets this one needs; while one of them has an open incident, this one's incident alerts as theirs. */
  dependsOn?: string[];
  /** `remind_every` of this target (ms; 0 = none), over the global one. */
  remindEveryMs?: number;
}
export type { AlertChannel, AlertHook, ChannelType } from './monitor-alerts.js';
/** `confirm: {quorum: N}`: vantage points (this instance included) that must see a target down before an incident opens. */
export interface ConfirmConfig {
  quorum: number;
}
export interface MeshPeer {
  name: string;
  url: string;
  token?: string;
}
export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
const WEEKDAYS: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
interface MaintenanceWindowBase {
  name: string;
  /** Shown on the dashboard; the name when not set. */
  title: string;
  /** The targets it covers; absent = every target. */
  targets?: string[];
  /** Canonical IANA zone the local times are in (UTC by default). */
  timezone: string;
}
/** A one-off window, resolved to instants when the config is read. */
export interface OneOffMaintenanceConfig extends MaintenanceWindowBase {
  kind: 'once';
  fromMs: number;
  toMs: number;
}
/** A window that starts at a local time on the given weekdays; exactly one of durationMs, endMinute. */
export interface RecurringMaintenanceConfig extends MaintenanceWindowBase {
  kind: 'recurring';
  /** The days an occurrence starts on, Monday first; all seven when not set. */
  weekdays: Weekday[];
  /** Minutes after local midnight. */
  startMinute: number;
  /** Elapsed time from the start. */
  durationMs?: number;
  /** Local minutes after midnight; at or before the start means the next day. */
  endMinute?: number;
}
export type MaintenanceWindowConfig = OneOffMaintenanceConfig | RecurringMaintenanceConfig;
export interface MonitorConfig {
  file?: string;
  name: string;
  token?: string;
  rateLimit: { requests: number; windowMs: number };
  dashboard: boolean;
  /** Who may read status badges: anyone, or only with the token. */
  badges: 'public' | 'token';
  /** Days raw checks are kept. */
  retentionDays: number;
  /** Days hourly and daily rollups are kept (at least retentionDays). */
  rollupRetentionDays: number;
  /** Consecutive `down` checks that open an incident. */
  incidentThreshold: number;
  /** `remind_every`: an open incident's alert repeated at this interval (ms); absent: no reminders. */
  remindEveryMs?: number;
  alerts: AlertChannel[];
  /** Where this monitor is reached from outside (`public_url`): links in alerts. */
  publicUrl?: string;
  mesh?: { intervalMs: number; peers: MeshPeer[] };
  /** Mesh confirmation for every target that does not set its own; absent: each instance decides alone. */
  confirm?: ConfirmConfig;
  targets: TargetConfig[];
  maintenance: MaintenanceWindowConfig[];
}


const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'CAA', 'SRV', 'PTR', 'SOA'];

/** node:dns takes resolvers only as IP addresses (`ip`, `ip:port`, `[ipv6]:port`), never names. */
export function isResolverAddress(v: string): boolean {
  if (isIP(v)) return true;
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(v);
  if (!m || Number(m[3]) < 1 || Number(m[3]) > 65535) return false;
  return m[1] !== undefined ? isIP(m[1]) === 6 : isIP(m[2]!) === 4;
}

function readTarget(r: Reader, name: string): TargetConfig | undefined {
  const p = ['targets', name];
  r.keys(p, ['label', 'url', 'heartbeat', 'send', 'expect', 'conditions', 'interval', 'timeout', 'degraded_after', 'incident_threshold', 'confirm', 'headers', 'routes', 'dns', 'tls', 'whois', 'tests', 'alerts', 'depends_on', 'remind_every']);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) r.fail(p, 'name must be 1-64 letters, digits, dot, dash or underscore (it is used in URLs)');
  const isHeartbeat = r.has([...p, 'heartbeat']);
  const rawUrl = r.get([...p, 'url']);
  const isTcp = typeof rawUrl === 'string' && /^tcp:/i.test(rawUrl.trim());
  if (isHeartbeat && r.has([...p, 'url'])) r.fail([...p, 'url'], 'cannot be given with heartbeat: a heartbeat target is pinged, not polled (give one of url, heartbeat)');
  if (!isHeartbeat && !r.has([...p, 'url'])) r.fail(p, 'needs a url (http(s):// or tcp://host:port) or a heartbeat section');
  const url = isHeartbeat ? '' : isTcp ? (rawUrl as string).trim() : r.has([...p, 'url']) ? r.url([...p, 'url'], true) : undefined;
  const tcp = isTcp ? readTcp(r, p, url!) : undefined;
  if (!isTcp) for (const k of ['send', 'expect']) if (r.has([...p, k])) r.fail([...p, k], 'is only for tcp:// targets');
  const heartbeat = isHeartbeat ? readHeartbeat(r, [...p, 'heartbeat']) : undefined;
  const conditions = r.has([...p, 'conditions']) ? readConditions(r, [...p, 'conditions'], isHeartbeat || isTcp) : undefined;
  const notPolledOverHttp = isHeartbeat ? 'a heartbeat target' : isTcp ? 'a tcp:// target' : undefined;
  if (notPolledOverHttp) {
    for (const k of ['headers', 'routes', 'degraded_after']) if (r.has([...p, k])) r.fail([...p, k], `does not apply to ${notPolledOverHttp} (it needs an http(s) url)`);
  }
  const intervalMs = r.duration([...p, 'interval'], 60_000);
  const timeoutMs = r.duration([...p, 'timeout'], Math.min(10_000, intervalMs));
  let degradedAfterMs: number | undefined;
  if (r.has([...p, 'degraded_after'])) {
    degradedAfterMs = r.duration([...p, 'degraded_after'], timeoutMs);
    if (degradedAfterMs >= timeoutMs) r.fail([...p, 'degraded_after'], `must be shorter than the timeout (${timeoutMs} ms)`);
  }
  const headers: Record<string, string> = {};
  for (const k of r.mapKeys([...p, 'headers'])) {
    const v = r.get([...p, 'headers', k]);
    if (typeof v !== 'string' && typeof v !== 'number') r.fail([...p, 'headers', k], 'must be a string');
    else headers[k] = String(v);
  }
  const routes: RouteCheckConfig[] = [];
  r.seq([...p, 'routes']).forEach((_, i) => {
    const rp = [...p, 'routes', i];
    r.keys(rp, ['path', 'status']);
    const path = r.string([...rp, 'path']);
    if (path === undefined) r.fail(rp, 'needs a path');
    else if (!path.startsWith('/')) r.fail([...rp, 'path'], 'must start with /');
    const status = r.int([...rp, 'status'], 200, 100, 599);
    if (path?.startsWith('/')) routes.push({ path, status });
  });
  const dns: DnsCheckConfig[] = [];
  r.seq([...p, 'dns']).forEach((_, i) => {
    const dp = [...p, 'dns', i];
    r.keys(dp, ['name', 'type', 'expected', 'server']);
    const dnsName = r.string([...dp, 'name']);
    if (dnsName === undefined) r.fail(dp, 'needs a name');
    const type = (r.string([...dp, 'type'], 'A') ?? 'A').toUpperCase();
    if (!RECORD_TYPES.includes(type)) r.fail([...dp, 'type'], `must be one of ${RECORD_TYPES.join(', ')}`);
    const expectedRaw = r.get([...dp, 'expected']);
    const expected = Array.isArray(expectedRaw) ? expectedRaw.map(String) : typeof expectedRaw === 'string' ? [expectedRaw] : undefined;
    if (!expected || expected.length === 0) r.fail([...dp, 'expected'], 'must list the expected values');
    const server = r.string([...dp, 'server']);
    const serverOk = server === undefined || isResolverAddress(server);
    if (!serverOk) r.fail([...dp, 'server'], `must be a resolver IP address with an optional port (192.0.2.53, 192.0.2.53:5353, [2001:db8::53]:53), got ${JSON.stringify(server)}`);
    if (dnsName && expected && expected.length && serverOk) dns.push({ name: dnsName, type, expected, server });
  });
  let tls: TlsCheckConfig | undefined;
  if (r.has([...p, 'tls'])) {
    const tp = [...p, 'tls'];
    r.keys(tp, ['host', 'port', 'warn_days']);
    const fallbackHost = tcp ? tcp.host : url ? new URL(url).hostname : undefined;
    const host = r.string([...tp, 'host'], fallbackHost);
    if (!host) r.fail(tp, isHeartbeat ? 'needs a host on a heartbeat target (there is no url to take it from)' : 'needs a host');
    else tls = { host, port: r.int([...tp, 'port'], 443, 1, 65535), warnDays: r.int([...tp, 'warn_days'], 14, 0, 3650) };
  }
  let whois: WhoisCheckConfig | undefined;
  if (r.has([...p, 'whois'])) {
    const wp = [...p, 'whois'];
    r.keys(wp, ['domain', 'server', 'warn_days']);
    const domain = r.string([...wp, 'domain']);
    const server = r.string([...wp, 'server'], 'whois.iana.org');
    if (!domain) r.fail(wp, 'needs a domain');
    else whois = { domain, server: server ?? 'whois.iana.org', warnDays: r.int([...wp, 'warn_days'], 30, 0, 3650) };
  }
  let tests: TestsConfig | undefined;
  if (r.has([...p, 'tests'])) {
    const sp = [...p, 'tests'];
    r.keys(sp, ['command', 'cwd', 'interval', 'stale_after', 'timeout']);
    const raw = r.get([...sp, 'command']);
    const command = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.trim().split(/\s+/) : undefined;
    if (!command || command.length === 0 || command[0] === '') r.fail([...sp, 'command'], 'must be a command: a list [program, arg, ...] or a string (split on spaces, never run by a shell)');
    else {
      const interval = r.duration([...sp, 'interval'], 3_600_000);
      tests = {
        command,
        cwd: r.string([...sp, 'cwd']),
        intervalMs: interval,
        staleAfterMs: r.duration([...sp, 'stale_after'], 2 * interval),
        timeoutMs: r.duration([...sp, 'timeout'], 600_000),
      };
    }
  }
  if (url === undefined || (isTcp && !tcp) || (isHeartbeat && !heartbeat) || (conditions === null)) return undefined;
  const threshold = r.has([...p, 'incident_threshold']) ? r.int([...p, 'incident_threshold'], 3, 1, 100) : undefined;
  return {
    name,
    label: r.string([...p, 'label'], name) ?? name,
    url,
    ...(tcp ? { tcp } : {}),
    ...(heartbeat ? { heartbeat } : {}),
    ...(conditions ? { conditions } : {}),
    intervalMs,
    timeoutMs,
    ...(degradedAfterMs !== undefined ? { degradedAfterMs } : {}),
    ...(threshold !== undefined ? { incidentThreshold: threshold } : {}),
    headers,
    routes,
    dns,
    tls,
    whois,
    tests,
  };
}

/** `url: tcp://host:port` with its optional `send` and `expect`; undefined (and a problem) when malformed. */
function readTcp(r: Reader, p: (string | number)[], url: string): TcpConfig | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return r.fail([...p, 'url'], `must be tcp://host:port, got ${JSON.stringify(url)}`);
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!host || !u.port || (u.pathname !== '' && u.pathname !== '/') || u.search || u.hash || u.username) return r.fail([...p, 'url'], `must be tcp://host:port with nothing after the port, got ${JSON.stringify(url)}`);
  const tcp: TcpConfig = { host, port: Number(u.port) };
  if (r.has([...p, 'send'])) {
    const send = r.get([...p, 'send']);
    if (typeof send !== 'string' || send === '') r.fail([...p, 'send'], 'must be a non-empty string (use double quotes for escapes: "PING\\r\\n")');
    else tcp.send = send;
  }
  if (r.has([...p, 'expect'])) {
    const expect = r.get([...p, 'expect']);
    if (typeof expect !== 'string' || expect === '') r.fail([...p, 'expect'], 'must be a non-empty string: text the answer contains, or /regex/flags');
    else {
      const m = /^\/(.+)\/([a-z]*)$/s.exec(expect);
      if (!m) tcp.expect = { text: expect };
      else {
        try {
          new RegExp(m[1]!, m[2]);
          if (/[gy]/.test(m[2]!)) throw new Error('the g and y flags make no sense for one answer');
          tcp.expect = { regex: m[1]!, flags: m[2]! };
        } catch (err) {
          r.fail([...p, 'expect'], `is not a valid regular expression: ${(err as Error).message}`);
        }
      }
    }
  }
  return tcp;
}

/** A `timezone` setting as a canonical IANA zone; UTC when absent (or, with a problem, when unknown). */
function readZone(r: Reader, path: (string | number)[]): string {
  const raw = r.string(path);
  if (raw === undefined) return 'UTC';
  const zone = canonicalZone(raw);
  if (zone === undefined) r.fail(path, `is not a known IANA time zone (like Europe/Berlin or UTC): ${raw}`);
  return zone ?? 'UTC';
}

/** Ping keys: at least 16 URL-safe characters (they are the whole secret of a ping URL). */
export const PING_KEY = /^[A-Za-z0-9_-]{16,128}$/;

/** The `heartbeat:` section: a schedule (cron, in a zone) or a period, a grace, and an optional ping key. */
function readHeartbeat(r: Reader, hp: (string | number)[]): HeartbeatConfig | undefined {
  const raw = r.get(hp);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return r.fail(hp, 'must be a mapping: a schedule (cron) or a period, and a grace');
  r.keys(hp, ['schedule', 'period', 'timezone', 'grace', 'ping_key']);
  const problems = r.problems.length;
  const zoneRaw = r.string([...hp, 'timezone']);
  const timezone = readZone(r, [...hp, 'timezone']);
  const hb: HeartbeatConfig = { timezone, graceMs: r.has([...hp, 'grace']) ? r.duration([...hp, 'grace'], 3_600_000) : 3_600_000 };
  const hasSchedule = r.has([...hp, 'schedule']);
  const hasPeriod = r.has([...hp, 'period']);
  if (hasSchedule && hasPeriod) r.fail([...hp, 'period'], 'cannot be given with schedule: give one');
  else if (hasSchedule) {
    const schedule = r.string([...hp, 'schedule']);
    const problem = schedule === undefined ? undefined : scheduleProblem(schedule.trim(), timezone);
    if (schedule === undefined || schedule.trim() === '') r.fail([...hp, 'schedule'], 'must be a cron expression like "0 3 * * *"');
    else if (problem) r.fail([...hp, 'schedule'], `is not a cron expression the monitor can read (${problem}): ${JSON.stringify(schedule)}`);
    else hb.schedule = schedule.trim();
  } else if (hasPeriod) hb.periodMs = r.duration([...hp, 'period'], 86_400_000);
  else r.fail(hp, 'needs a schedule (a cron expression like "0 3 * * *") or a period (like 1d)');
  if (zoneRaw !== undefined && !hasSchedule) r.fail([...hp, 'timezone'], 'applies only to a schedule');
  if (r.has([...hp, 'ping_key'])) {
    const key = r.string([...hp, 'ping_key']);
    if (key === undefined || !PING_KEY.test(key)) r.fail([...hp, 'ping_key'], 'must be 16-128 URL-safe characters (letters, digits, - and _): it is the only secret of the ping URL');
    else hb.pingKey = key;
  }
  return r.problems.length === problems ? hb : undefined;
}

/** `conditions:` as parsed conditions; null (with a problem per bad line) when any is malformed. */
function readConditions(r: Reader, cp: (string | number)[], notHttp: boolean): Condition[] | null {
  if (notHttp) {
    r.fail(cp, 'apply only to an http(s) target');
    return null;
  }
  const items = givenList(r, cp, 'must list at least one condition, like "[STATUS] == 200" (leave it out for the default rules)');
  if (!items) return null;
  const out: Condition[] = [];
  let ok = true;
  items.forEach((_, i) => {
    const v = r.get([...cp, i]);
    if (typeof v !== 'string') {
      ok = false;
      r.fail([...cp, i], 'must be a string like "[STATUS] == 200"');
      return;
    }
    try {
      out.push(parseCondition(v));
    } catch (err) {
      if (!(err instanceof ConditionSyntaxError)) throw err;
      ok = false;
      r.fail([...cp, i], `is not a condition: ${err.message}`);
    }
  });
  return ok ? out : null;
}

/** The most vantage points a quorum may ask for: every instance of a large mesh. */
const MAX_QUORUM = 100;

/**
 * `confirm: {quorum: N}` at `path`: at least 1, and no more than the vantage points there are
 * (this instance and its mesh peers), so a quorum that could never be reached is refused.
 */
function readConfirm(r: Reader, path: (string | number)[], mesh: MonitorConfig['mesh']): ConfirmConfig | undefined {
  if (!r.has(path)) return undefined;
  const raw = r.get(path);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return r.fail(path, 'must be a mapping like {quorum: 2}');
  r.keys(path, ['quorum']);
  if (!r.has([...path, 'quorum'])) return r.fail(path, 'needs a quorum: how many vantage points, this instance included, must see a target down');
  const problems = r.problems.length;
  const quorum = r.int([...path, 'quorum'], 1, 1, MAX_QUORUM);
  if (r.problems.length > problems) return undefined;
  const points = 1 + (mesh?.peers.length ?? 0);
  if (quorum > 1 && !mesh) return r.fail([...path, 'quorum'], `is ${quorum}, but without a mesh: section this instance is the only vantage point (add mesh peers, or use 1)`);
  if (quorum > points) return r.fail([...path, 'quorum'], `is ${quorum}, but there are only ${points} vantage points (this instance and ${points - 1} mesh peer${points === 2 ? '' : 's'})`);
  return { quorum };
}

const MAX_MAINTENANCE_MS = 7 * 86_400_000;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const DATE_TIME_HELP = 'must be a date-time like 2026-12-01T22:00 (local to the timezone), or with an offset like 2026-12-01T22:00Z';

/** A `from`/`to` value as an instant: local to `zone` unless it carries Z or an offset. */
function readInstant(r: Reader, path: (string | number)[], zone: string): number | undefined {
  const v = r.get(path);
  if (v instanceof Date) return v.getTime(); // a YAML 1.1 timestamp: already an instant
  const m = typeof v === 'string' ? DATE_TIME.exec(v.trim()) : null;
  if (!m) return r.fail(path, DATE_TIME_HELP);
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map((x) => Number(x ?? 0)) as [number, number, number, number, number, number];
  const local = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(local);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return r.fail(path, `is not a real date and time: ${JSON.stringify(v)}`);
  const offset = m[7];
  if (offset === undefined) return localToEpoch(zone, local);
  if (offset.toUpperCase() === 'Z') return local;
  const digits = offset.replace(':', '');
  const [oh, om] = [Number(digits.slice(1, 3)), Number(digits.slice(3, 5) || 0)];
  if (oh > 23 || om > 59) return r.fail(path, `has an offset that no zone has: ${JSON.stringify(v)}`);
  const minutes = oh * 60 + om;
  return local - (offset.startsWith('-') ? -1 : 1) * minutes * 60_000;
}

/** An `HH:MM` time of day as minutes after midnight. */
function readClock(r: Reader, path: (string | number)[]): number | undefined {
  const v = r.get(path);
  const m = typeof v === 'string' ? /^(\d{1,2}):(\d{2})$/.exec(v.trim()) : null;
  if (!m || Number(m[1]) > 23 || Number(m[2]) > 59) return r.fail(path, 'must be a time of day HH:MM, like "02:00"');
  return Number(m[1]) * 60 + Number(m[2]);
}

function readMaintenance(r: Reader, index: number, targetNames: string[], seen: Set<string>): MaintenanceWindowConfig | undefined {
  const wp = ['maintenance', index];
  const raw = r.get(wp);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return r.fail(wp, 'must be a mapping: a name, then from and to, or start and a duration or end');
  r.keys(wp, ['name', 'title', 'targets', 'timezone', 'from', 'to', 'weekdays', 'start', 'duration', 'end']);
  const problems = r.problems.length;
  const nameRaw = r.get([...wp, 'name']);
  const name = nameRaw === undefined || nameRaw === null ? r.fail(wp, 'needs a name') : r.string([...wp, 'name']);
  if (name !== undefined) {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) r.fail([...wp, 'name'], 'must be 1-64 letters, digits, dot, dash or underscore');
    else if (seen.has(name)) r.fail([...wp, 'name'], `repeats the maintenance window name ${name}`);
    else seen.add(name);
  }
  const title = r.string([...wp, 'title'], name);

  let targets: string[] | undefined;
  if (r.has([...wp, 'targets'])) {
    // `targets:` with nothing under it would silently cover every target: say so instead.
    const items = givenList(r, [...wp, 'targets'], 'must name at least one target (leave it out to cover every target)') ?? [];
    targets = [];
    items.forEach((_, j) => {
      const t = r.string([...wp, 'targets', j]);
      if (t === undefined) return;
      if (!targetNames.includes(t)) r.fail([...wp, 'targets', j], `names no configured target: ${t}`);
      else if (!targets!.includes(t)) targets!.push(t);
    });
  }

  const timezone = readZone(r, [...wp, 'timezone']);

  const onceKeys = ['from', 'to'].filter((k) => r.has([...wp, k]));
  const recurringKeys = ['weekdays', 'start', 'duration', 'end'].filter((k) => r.has([...wp, k]));
  const base = { name: name ?? '', title: title ?? name ?? '', ...(targets ? { targets } : {}), timezone };
  let window: MaintenanceWindowConfig | undefined;
  if (onceKeys.length && recurringKeys.length) {
    r.fail(wp, `mixes a one-off window (${onceKeys.join(', ')}) with a recurring one (${recurringKeys.join(', ')}): give from and to, or start and a duration or end`);
  } else if (onceKeys.length) {
    const fromMs = r.has([...wp, 'from']) ? readInstant(r, [...wp, 'from'], timezone) : r.fail([...wp, 'from'], 'is required with to');
    const toMs = r.has([...wp, 'to']) ? readInstant(r, [...wp, 'to'], timezone) : r.fail([...wp, 'to'], 'is required with from');
    if (fromMs !== undefined && toMs !== undefined) {
      if (toMs <= fromMs) r.fail([...wp, 'to'], 'must be after from');
      else window = { ...base, kind: 'once', fromMs, toMs };
    }
  } else if (recurringKeys.length) {
    const weekdays = readWeekdays(r, [...wp, 'weekdays']);
    const startMinute = r.has([...wp, 'start']) ? readClock(r, [...wp, 'start']) : r.fail([...wp, 'start'], 'is required for a recurring window (HH:MM local time)');
    let durationMs: number | undefined;
    let endMinute: number | undefined;
    const hasDuration = r.has([...wp, 'duration']);
    if (hasDuration && r.has([...wp, 'end'])) r.fail([...wp, 'end'], 'cannot be given with duration: give one');
    else if (hasDuration) {
      durationMs = parseDuration(r.get([...wp, 'duration']));
      if (durationMs === undefined) r.fail([...wp, 'duration'], 'must be a duration above zero: seconds, or a string like 30m, 2h, 1d');
      else if (durationMs > MAX_MAINTENANCE_MS) {
        durationMs = undefined;
        r.fail([...wp, 'duration'], 'must be at most 7 days');
      }
    } else if (r.has([...wp, 'end'])) endMinute = readClock(r, [...wp, 'end']);
    else r.fail(wp, 'needs a duration or an end');
    if (weekdays && startMinute !== undefined && (durationMs !== undefined || endMinute !== undefined)) {
      window = { ...base, kind: 'recurring', weekdays, startMinute, ...(durationMs !== undefined ? { durationMs } : { endMinute }) };
    }
  } else {
    r.fail(wp, 'needs from and to (a one-off window), or start and a duration or end (a recurring one)');
  }
  return r.problems.length === problems ? window : undefined;
}

/**
 * The items of a list setting that is present: an empty one (`key:` or `key: []`) is a problem,
 * since leaving the key out is how "all" is said. Undefined when not a non-empty list.
 */
function givenList(r: Reader, path: (string | number)[], emptyMessage: string): unknown[] | undefined {
  const items = r.seq(path);
  const listed = r.get(path);
  if (listed === null || (Array.isArray(listed) && listed.length === 0)) return r.fail(path, emptyMessage);
  return Array.isArray(listed) ? items : undefined; // not a list: r.seq reported it
}

/** `weekdays`: a list of mon..sun (any case); absent means every day. */
function readWeekdays(r: Reader, path: (string | number)[]): Weekday[] | undefined {
  if (!r.has(path)) return [...WEEKDAYS];
  const items = givenList(r, path, 'must list at least one day (leave it out for every day)');
  if (!items) return undefined;
  const days = new Set<Weekday>();
  let ok = true;
  items.forEach((_, j) => {
    const v = r.get([...path, j]);
    const day = typeof v === 'string' ? (v.trim().toLowerCase() as Weekday) : undefined;
    if (day === undefined || !WEEKDAYS.includes(day)) {
      ok = false;
      r.fail([...path, j], `must be a day of the week (${WEEKDAYS.join(', ')}), got ${JSON.stringify(v)}`);
    } else days.add(day);
  });
  return ok ? WEEKDAYS.filter((d) => days.has(d)) : undefined;
}

/** Parses configuration text; throws ConfigError listing every problem with its line. */
export function parseMonitorConfig(text: string, file = 'monitor.yaml'): MonitorConfig {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    throw new ConfigError(doc.errors.map((e) => `${file}:${e.linePos?.[0]?.line ?? '?'}: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`));
  }
  const r = new Reader(doc, lines, file);
  if (doc.contents !== null && !isMap(doc.contents)) throw new ConfigError([`${file}:1: the file must be a mapping of settings`]);
  r.keys([], ['name', 'token', 'rate_limit', 'dashboard', 'badges', 'retention_days', 'rollup_retention_days', 'incident_threshold', 'confirm', 'alerts', 'public_url', 'mesh', 'targets', 'maintenance', 'remind_every']);
  r.keys(['rate_limit'], ['requests', 'window']);
  const retentionDays = r.int(['retention_days'], 14, 1, 3650);
  // Left out, rollups outlive a raw retention set past the default rather than failing the file.
  const rollupRetentionDays = r.int(['rollup_retention_days'], Math.max(400, retentionDays), 1, 3650);
  if (rollupRetentionDays < retentionDays) r.fail(['rollup_retention_days'], `must be at least retention_days (${retentionDays})`);
  const badges = r.string(['badges'], 'token');
  if (badges !== undefined && badges !== 'public' && badges !== 'token') r.fail(['badges'], 'must be public or token');
  const cfg: MonitorConfig = {
    file,
    name: r.string(['name'], hostname()) ?? hostname(),
    token: r.string(['token']),
    rateLimit: { requests: r.int(['rate_limit', 'requests'], 60, 1, 1_000_000), windowMs: r.duration(['rate_limit', 'window'], 60_000) },
    dashboard: r.bool(['dashboard'], false),
    badges: badges === 'public' ? 'public' : 'token',
    retentionDays,
    rollupRetentionDays,
    incidentThreshold: r.int(['incident_threshold'], 3, 1, 100),
    alerts: [],
    targets: [],
    maintenance: [],
  };
  cfg.alerts = readAlertChannels(r);
  const publicUrl = r.url(['public_url'], false);
  if (publicUrl) cfg.publicUrl = publicUrl.replace(/\/+$/, '');
  if (r.has(['mesh'])) {
    r.keys(['mesh'], ['interval', 'peers']);
    const peers: MeshPeer[] = [];
    r.seq(['mesh', 'peers']).forEach((_, i) => {
      const pp = ['mesh', 'peers', i];
      r.keys(pp, ['name', 'url', 'token']);
      const name = r.string([...pp, 'name']);
      const url = r.url([...pp, 'url'], true);
      if (!name) r.fail(pp, 'needs a name');
      else if (peers.some((p) => p.name === name)) r.fail([...pp, 'name'], `repeats the peer name ${name}`);
      else if (url) peers.push({ name, url: url.replace(/\/+$/, ''), token: r.string([...pp, 'token']) });
    });
    cfg.mesh = { intervalMs: r.duration(['mesh', 'interval'], 30_000), peers };
  }
  const confirm = readConfirm(r, ['confirm'], cfg.mesh);
  if (confirm) cfg.confirm = confirm;
  const targetNames = r.mapKeys(['targets']);
  const pingKeys = new Map<string, string>();
  for (const name of targetNames) {
    const t = readTarget(r, name);
    const routed = readTargetAlerts(r, name, cfg.alerts.map((c) => c.name));
    if (t && routed) t.alerts = routed;
    const own = readConfirm(r, ['targets', name, 'confirm'], cfg.mesh);
    if (t && own) t.confirm = own;
    const key = t?.heartbeat?.pingKey;
    // One URL, one target: a second target with the key would never receive a ping.
    if (key !== undefined && pingKeys.has(key)) r.fail(['targets', name, 'heartbeat', 'ping_key'], `is the ping key of ${pingKeys.get(key)} too: each heartbeat target needs its own`);
    else if (key !== undefined) pingKeys.set(key, name);
    if (t) cfg.targets.push(t);
  }
  readDependencies(r, cfg, targetNames);
  const windowNames = new Set<string>();
  r.seq(['maintenance']).forEach((_, i) => {
    const w = readMaintenance(r, i, targetNames, windowNames);
    if (w) cfg.maintenance.push(w);
  });
  if (r.problems.length) throw new ConfigError(r.problems);
  return cfg;
}

export function loadMonitorConfig(file: string): MonitorConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`${file}: cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`]);
  }
  return parseMonitorConfig(text, file);
}

/** The configuration of a monitor started without a file: no targets, defaults elsewhere. */
export function emptyMonitorConfig(): MonitorConfig {
  return parseMonitorConfig('{}', '(defaults)');
}
