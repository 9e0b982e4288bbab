// The health monitor's YAML configuration: parsing with line numbers for every error, defaults,
// and validation. Shared by `mkt serve monitor` and the offline `mkt monitor check-config`.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { LineCounter, parseDocument, isMap } from 'yaml';
import { ConfigError, Reader } from './yaml-reader.js';

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
export interface TargetConfig {
  name: string;
  label: string;
  url: string;
  intervalMs: number;
  timeoutMs: number;
  /** A health answer slower than this (but within the timeout) is `degraded`. */
  degradedAfterMs?: number;
  /** Consecutive `down` checks that open an incident for this target (default: the global one). */
  incidentThreshold?: number;
  headers: Record<string, string>;
  routes: RouteCheckConfig[];
  dns: DnsCheckConfig[];
  tls?: TlsCheckConfig;
  whois?: WhoisCheckConfig;
  tests?: TestsConfig;
}
export interface AlertHook {
  url: string;
  format: 'json' | 'slack';
}
export interface MeshPeer {
  name: string;
  url: string;
  token?: string;
}
export interface MonitorConfig {
  file?: string;
  name: string;
  token?: string;
  rateLimit: { requests: number; windowMs: number };
  dashboard: boolean;
  retentionDays: number;
  /** Consecutive `down` checks that open an incident. */
  incidentThreshold: number;
  alerts: AlertHook[];
  mesh?: { intervalMs: number; peers: MeshPeer[] };
  targets: TargetConfig[];
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
  r.keys(p, ['label', 'url', 'interval', 'timeout', 'degraded_after', 'incident_threshold', 'headers', 'routes', 'dns', 'tls', 'whois', 'tests']);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) r.fail(p, 'name must be 1-64 letters, digits, dot, dash or underscore (it is used in URLs)');
  const url = r.url([...p, 'url'], true);
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
    const fallbackHost = url ? new URL(url).hostname : undefined;
    const host = r.string([...tp, 'host'], fallbackHost);
    if (!host) r.fail(tp, 'needs a host');
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
  if (!url) return undefined;
  const threshold = r.has([...p, 'incident_threshold']) ? r.int([...p, 'incident_threshold'], 3, 1, 100) : undefined;
  return {
    name,
    label: r.string([...p, 'label'], name) ?? name,
    url,
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

/** Parses configuration text; throws ConfigError listing every problem with its line. */
export function parseMonitorConfig(text: string, file = 'monitor.yaml'): MonitorConfig {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    throw new ConfigError(doc.errors.map((e) => `${file}:${e.linePos?.[0]?.line ?? '?'}: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`));
  }
  const r = new Reader(doc, lines, file);
  if (doc.contents !== null && !isMap(doc.contents)) throw new ConfigError([`${file}:1: the file must be a mapping of settings`]);
  r.keys([], ['name', 'token', 'rate_limit', 'dashboard', 'retention_days', 'incident_threshold', 'alerts', 'mesh', 'targets']);
  r.keys(['rate_limit'], ['requests', 'window']);
  const cfg: MonitorConfig = {
    file,
    name: r.string(['name'], hostname()) ?? hostname(),
    token: r.string(['token']),
    rateLimit: { requests: r.int(['rate_limit', 'requests'], 60, 1, 1_000_000), windowMs: r.duration(['rate_limit', 'window'], 60_000) },
    dashboard: r.bool(['dashboard'], false),
    retentionDays: r.int(['retention_days'], 30, 1, 3650),
    incidentThreshold: r.int(['incident_threshold'], 3, 1, 100),
    alerts: [],
    targets: [],
  };
  r.seq(['alerts']).forEach((_, i) => {
    r.keys(['alerts', i], ['url', 'format']);
    const url = r.url(['alerts', i, 'url'], true);
    const format = r.string(['alerts', i, 'format'], 'json');
    if (format !== 'json' && format !== 'slack') r.fail(['alerts', i, 'format'], 'must be json or slack');
    else if (url) cfg.alerts.push({ url, format });
  });
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
  for (const name of r.mapKeys(['targets'])) {
    const t = readTarget(r, name);
    if (t) cfg.targets.push(t);
  }
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
