// Whether an address or host name can only be reached from this machine: the test behind the
// marketplace's "off loopback" start-up rules and the monitor's WHOIS referral rule.
import { isIP } from 'node:net';

/** 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(ip: string): boolean {
  const h = ip.toLowerCase();
  const v4 = h.startsWith('::ffff:') && isIP(h.slice(7)) === 4 ? h.slice(7) : h;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return isIP(h) === 6 && /^(0{0,4}:){7}0{0,3}1$|^::1$/.test(h);
}

/** A loopback address (bracketed IPv6 too) or `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || isLoopbackAddress(h);
}
