// TLS checks: connect, read the peer certificate, and report validity, days left, issuer and
// whether it matches the host name. An untrusted chain is reported, not fatal to the check.
import { isIP } from 'node:net';
import { connect, checkServerIdentity, type PeerCertificate } from 'node:tls';
import type { TlsCheckConfig } from '../../../../src/config/monitor.js';

export interface TlsResult extends Record<string, unknown> {
  host: string;
  port: number;
  checked_at: string;
  valid: boolean;
  hostname_match: boolean;
  trusted: boolean;
  days_left: number | null;
  not_before: string | null;
  not_after: string | null;
  issuer: string | null;
  subject: string | null;
  warning: boolean;
  error?: string;
}

function dn(x: Record<string, string | string[]> | undefined): string | null {
  if (!x) return null;
  return x.CN ? String(x.CN) : (Object.entries(x).map(([k, v]) => `${k}=${String(v)}`).join(', ') || null);
}

export async function checkTls(cfg: TlsCheckConfig, timeoutMs: number, now: () => number, ca?: string | Buffer): Promise<TlsResult> {
  const checked_at = new Date(now()).toISOString();
  const blank: TlsResult = { host: cfg.host, port: cfg.port, checked_at, valid: false, hostname_match: false, trusted: false, days_left: null, not_before: null, not_after: null, issuer: null, subject: null, warning: true };
  return new Promise((resolve) => {
    const socket = connect({ host: cfg.host, port: cfg.port, servername: isIP(cfg.host) ? undefined : cfg.host, rejectUnauthorized: false, ca, timeout: timeoutMs });
    const done = (r: TlsResult): void => {
      socket.destroy();
      resolve(r);
    };
    socket.once('timeout', () => done({ ...blank, error: `timed out after ${timeoutMs} ms` }));
    socket.once('error', (err: NodeJS.ErrnoException) => done({ ...blank, error: err.code ?? err.message }));
    socket.once('secureConnect', () => {
      const cert = socket.getPeerCertificate() as PeerCertificate;
      if (!cert || !cert.valid_to) return done({ ...blank, error: 'no certificate presented' });
      const notAfter = Date.parse(cert.valid_to);
      const notBefore = Date.parse(cert.valid_from);
      const t = now();
      const daysLeft = Math.floor((notAfter - t) / 86_400_000);
      const hostnameMatch = checkServerIdentity(cfg.host, cert) === undefined;
      const inDate = t >= notBefore && t <= notAfter;
      const trusted = socket.authorized;
      const r: TlsResult = {
        host: cfg.host,
        port: cfg.port,
        checked_at,
        valid: inDate && hostnameMatch && trusted,
        hostname_match: hostnameMatch,
        trusted,
        days_left: daysLeft,
        not_before: new Date(notBefore).toISOString(),
        not_after: new Date(notAfter).toISOString(),
        issuer: dn(cert.issuer as unknown as Record<string, string>),
        subject: dn(cert.subject as unknown as Record<string, string>),
        warning: !(inDate && hostnameMatch && trusted) || daysLeft < cfg.warnDays,
      };
      if (!trusted) r.error = `certificate not trusted: ${String(socket.authorizationError)}`;
      else if (!hostnameMatch) r.error = `certificate does not match ${cfg.host}`;
      else if (!inDate) r.error = t > notAfter ? 'certificate expired' : 'certificate not yet valid';
      done(r);
    });
  });
}
