// WHOIS checks (RFC 3912): send the domain on TCP port 43, read the answer, and find the
// expiry date in the field names the common registries use. A server that only refers
// (whois.iana.org names the TLD's registry) is followed, up to WHOIS_MAX_REFERRALS hops.
import { connect } from 'node:net';
import type { WhoisCheckConfig } from '../../../../src/config/monitor.js';

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

function query(server: string, domain: string, timeoutMs: number): Promise<string> {
  const m = /^(.*?)(?::(\d+))?$/.exec(server)!;
  const host = m[1]!.replace(/^\[|\]$/g, '');
  const port = m[2] ? Number(m[2]) : 43;
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

export async function checkWhois(cfg: WhoisCheckConfig, timeoutMs: number, now: () => number): Promise<WhoisResult> {
  const t = now();
  const base = { domain: cfg.domain, server: cfg.server, checked_at: new Date(t).toISOString() };
  const asked: string[] = [];
  let server = cfg.server;
  const where = (): Pick<WhoisResult, 'server' | 'referred_by'> => (asked.length ? { server, referred_by: [...asked] } : { server });
  try {
    for (;;) {
      const text = await query(server, cfg.domain, timeoutMs);
      const parsed = parseWhois(text);
      if (parsed.expiresMs !== undefined) {
        const daysLeft = Math.floor((parsed.expiresMs - t) / 86_400_000);
        return { ...base, ...where(), expires_at: new Date(parsed.expiresMs).toISOString(), days_left: daysLeft, registrar: parsed.registrar ?? null, warning: daysLeft < cfg.warnDays };
      }
      const next = parseReferral(text);
      if (next === undefined || asked.length >= WHOIS_MAX_REFERRALS || next.toLowerCase() === server.toLowerCase() || asked.some((a) => a.toLowerCase() === next.toLowerCase())) {
        return { ...base, ...where(), expires_at: null, days_left: null, registrar: parsed.registrar ?? null, warning: true, error: 'no expiry date found in the WHOIS answer' };
      }
      asked.push(server);
      server = next;
    }
  } catch (err) {
    return { ...base, ...where(), expires_at: null, days_left: null, registrar: null, warning: true, error: `${server}: ${(err as Error).message}` };
  }
}
