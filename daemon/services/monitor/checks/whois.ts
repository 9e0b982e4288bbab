// WHOIS checks (RFC 3912): send the domain on TCP port 43, read the answer, and find the
// expiry date in the field names the common registries use. A server that only refers
// (whois.iana.org names the TLD's registry) is followed, up to WHOIS_MAX_REFERRALS hops, and
// only to public WHOIS servers (see referralTarget).
import { connect, isIP } from 'node:net';
import type { WhoisCheckConfig } from '../../../../src/config/monitor.js';
import { isLoopbackAddress, isLoopbackHost } from '../../../../src/util/loopback.js';
import { isPublicAddress, systemLookup, type Lookup } from './address.js';

export const WHOIS_MAX_REFERRALS = 2;

export interface WhoisResult extends Record<string, unknown> {
  domain: string;
  /** The server whose answer the result comes from (after referrals). */
  server: string;
  /** The servers asked before it, when one referred to the next; omitted without referrals. */
  referred_by?: string[];
  checked_at: string;
  expires_at: string | null;
  days_left: number | null;
  registrar: string | null;
  warning: boolean;
  error?: string;
}

const EXPIRY = [
  /^\s*Registry Expiry Date:\s*(.+)$/im,
  /^\s*Registrar Registration Expiration Date:\s*(.+)$/im,
  /^\s*Expiration Date:\s*(.+)$/im,
  /^\s*Expiry Date:\s*(.+)$/im,
  /^\s*Expiry date:\s*(.+)$/im,
  /^\s*expires:\s*(.+)$/im,
  /^\s*paid-till:\s*(.+)$/im,
  /^\s*Expires On:\s*(.+)$/im,
  /^\s*Valid Until:\s*(.+)$/im,
  /^\s*renewal date:\s*(.+)$/im,
];

/** Parses the dates registries print: ISO 8601, `2027-01-31`, `31-Jan-2027`, `2027.01.31`. */
export function parseWhoisDate(raw: string): number | undefined {
  const s = raw.trim().replace(/\s*\(.*\)$/, '');
  let ms = Date.parse(s);
  if (Number.isFinite(ms)) return ms;
  const dotted = /^(\d{4})[./](\d{2})[./](\d{2})/.exec(s);
  if (dotted) return Date.parse(`${dotted[1]}-${dotted[2]}-${dotted[3]}T00:00:00Z`);
  const dmy = /^(\d{1,2})[-. ]([A-Za-z]{3})[-. ](\d{4})/.exec(s);
  if (dmy) {
    ms = Date.parse(`${dmy[2]} ${dmy[1]} ${dmy[3]} 00:00:00 UTC`);
    if (Number.isFinite(ms)) return ms;
  }
  return undefined;
}

export function parseWhois(text: string): { expiresMs?: number; registrar?: string } {
  const out: { expiresMs?: number; registrar?: string } = {};
  for (const re of EXPIRY) {
    const m = re.exec(text);
    if (m) {
      const ms = parseWhoisDate(m[1]!);
      if (ms !== undefined) {
        out.expiresMs = ms;
        break;
      }
    }
  }
  const reg = /^\s*Registrar:\s*(.+)$/im.exec(text);
  if (reg && reg[1]!.trim()) out.registrar = reg[1]!.trim();
  return out;
}

// [ \t] rather than \s: an empty value must not borrow the next line's first word.
const REFERRAL = [/^[ \t]*refer:[ \t]*(\S+)[ \t]*\r?$/im, /^[ \t]*whois:[ \t]*(\S+)[ \t]*\r?$/im, /^[ \t]*Registrar WHOIS Server:[ \t]*(\S+)[ \t]*\r?$/im];

/** The WHOIS server an answer refers to (`host` or `host:port`), if any; URLs are not WHOIS servers. */
export function parseReferral(text: string): string | undefined {
  for (const re of REFERRAL) {
    const m = re.exec(text);
    if (!m) continue;
    const v = m[1]!.replace(/^whois:\/\//i, '').replace(/\/+$/, '');
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v) || v === '') continue;
    return v;
  }
  return undefined;
}

/** `host` or `host:port` (IPv6 in brackets); undefined when it is neither (userinfo, a path, ...). */
function splitServer(server: string): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^\s:@/[\]]+)(?::(\d{1,5}))?$/i.exec(server);
  if (!m) return undefined;
  const port = m[2] === undefined ? 43 : Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

/** A host name as DNS spells one: labels of letters, digits and hyphens. */
const HOST_NAME = /^(?=.{1,253}\.?$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

/** The configured server is on loopback (a local test set-up): referrals may then stay on loopback. */
export function isLoopbackServer(server: string): boolean {
  const hp = splitServer(server);
  return hp !== undefined && isLoopbackHost(hp.host);
}

/**
 * Where a referral may send the next query, decided before connecting: a host name (no IP
 * literal, no userinfo) on port 43 whose every address is public, and the connection goes to
 * the address checked here (no second lookup to rebind). Only when the configured server is on
 * loopback may a referral name a loopback address, on any port: that is how local tests run.
 */
export async function referralTarget(ref: string, loopbackMode: boolean, lookup: Lookup = systemLookup): Promise<{ ok: true; host: string; port: number } | { ok: false; reason: string }> {
  const hp = splitServer(ref);
  if (!hp) return { ok: false, reason: 'not a host name with an optional port' };
  const loopbackOk = (ip: string): boolean => loopbackMode && isLoopbackAddress(ip);
  if (isIP(hp.host)) {
    return loopbackOk(hp.host) ? { ok: true, host: hp.host, port: hp.port } : { ok: false, reason: 'an IP address, not a host name' };
  }
  if (!HOST_NAME.test(hp.host)) return { ok: false, reason: 'not a host name with an optional port' };
  let addresses: string[];
  try {
    addresses = await lookup(hp.host);
  } catch (err) {
    return { ok: false, reason: `cannot resolve it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  if (addresses.length === 0) return { ok: false, reason: 'it resolves to no address' };
  if (addresses.every(loopbackOk)) return { ok: true, host: addresses[0]!, port: hp.port };
  if (hp.port !== 43) return { ok: false, reason: `port ${hp.port}: WHOIS referrals are followed on port 43 only` };
  const bad = addresses.find((a) => !isPublicAddress(a));
  if (bad !== undefined) return { ok: false, reason: `it resolves to ${bad}, not a public address` };
  return { ok: true, host: addresses[0]!, port: 43 };
}

function query(target: { host: string; port: number }, domain: string, timeoutMs: number): Promise<string> {
  const { host, port } = target;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const socket = connect({ host, port, timeout: timeoutMs }, () => socket.write(`${domain}\r\n`));
    socket.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 1024 * 1024) socket.destroy(new Error('answer larger than 1 MiB'));
      else chunks.push(c);
    });
    socket.once('timeout', () => socket.destroy(new Error(`timed out after ${timeoutMs} ms`)));
    socket.once('error', reject);
    socket.once('close', (hadError) => {
      if (!hadError) resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

export async function checkWhois(cfg: WhoisCheckConfig, timeoutMs: number, now: () => number, lookup: Lookup = systemLookup): Promise<WhoisResult> {
  const t = now();
  const base = { domain: cfg.domain, server: cfg.server, checked_at: new Date(t).toISOString() };
  const asked: string[] = [];
  let server = cfg.server;
  const loopbackMode = isLoopbackServer(cfg.server);
  // The configured server is the operator's choice and is asked as written.
  let target = splitServer(cfg.server) ?? { host: cfg.server, port: 43 };
  const where = (): Pick<WhoisResult, 'server' | 'referred_by'> => (asked.length ? { server, referred_by: [...asked] } : { server });
  const failed = (error: string): WhoisResult => ({ ...base, ...where(), expires_at: null, days_left: null, registrar: null, warning: true, error });
  try {
    for (;;) {
      const text = await query(target, cfg.domain, timeoutMs);
      const parsed = parseWhois(text);
      if (parsed.expiresMs !== undefined) {
        const daysLeft = Math.floor((parsed.expiresMs - t) / 86_400_000);
        return { ...base, ...where(), expires_at: new Date(parsed.expiresMs).toISOString(), days_left: daysLeft, registrar: parsed.registrar ?? null, warning: daysLeft < cfg.warnDays };
      }
      const next = parseReferral(text);
      if (next === undefined || asked.length >= WHOIS_MAX_REFERRALS || next.toLowerCase() === server.toLowerCase() || asked.some((a) => a.toLowerCase() === next.toLowerCase())) {
        return { ...failed('no expiry date found in the WHOIS answer'), registrar: parsed.registrar ?? null };
      }
      // The answer chose this hop: it must not reach into the monitor's own network.
      const allowed = await referralTarget(next, loopbackMode, lookup);
      if (!allowed.ok) return { ...failed(`referral to ${JSON.stringify(next.slice(0, 200))} not followed: ${allowed.reason}`), registrar: parsed.registrar ?? null };
      asked.push(server);
      server = next;
      target = allowed;
    }
  } catch (err) {
    return failed(`${server}: ${(err as Error).message}`);
  }
}
