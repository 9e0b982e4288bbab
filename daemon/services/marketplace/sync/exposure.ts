// Safe defaults of a marketplace reachable beyond this machine (issue 11 defect 10): which
// payment provider may run, and the public address signed and checkout URLs are built from.
// The address is never taken from a request's Host header, which any client chooses.
import type { FastifyRequest } from 'fastify';
import { ConfigError } from '../../../../src/config/yaml-reader.js';
import { isLoopbackHost } from '../../../../src/util/loopback.js';
import { socketUrl } from '../../../plugins/server-url.js';

export interface Exposure {
  /** `local` or `stripe` (or another name the caller rejects). */
  payments: string;
  /** The configured public URL without a trailing slash; undefined on loopback without one. */
  publicUrl: string | undefined;
  /** Base of pre-signed and checkout URLs for a request: the public URL, else the socket's own address. */
  baseUrl(req: FastifyRequest): string;
}

function parsePublicUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError([`the public URL is not a URL: ${JSON.stringify(raw.slice(0, 200))} (expected for example https://market.example.com)`]);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError([`the public URL must be http or https, not ${JSON.stringify(u.protocol)}`]);
  if (u.search || u.hash || u.username || u.password) throw new ConfigError(['the public URL must not carry a query, fragment or credentials']);
  return u.href.replace(/\/+$/, '');
}

export { socketUrl };

/**
 * Decides the payment provider and public address from the flags (`--payments`, `--public-url`)
 * or the environment (MKT_SYNC_PAYMENTS, MKT_PUBLIC_URL). Off loopback, a public URL is required
 * and the `local` provider (whose checkout page confirms any purchase for free) runs only when
 * chosen explicitly. Throws ConfigError (a usage error of `mkt serve`) otherwise.
 */
export function decideExposure(input: { host: string; payments?: string; publicUrl?: string }): Exposure {
  const loopback = isLoopbackHost(input.host);
  const publicUrl = input.publicUrl === undefined ? undefined : parsePublicUrl(input.publicUrl);
  if (!loopback && publicUrl === undefined) {
    throw new ConfigError([
      `the marketplace listens on ${input.host}, beyond this machine: pass --public-url (or set MKT_PUBLIC_URL) to the address clients use; signed blob and checkout URLs are built from it, never from the Host header`,
    ]);
  }
  if (!loopback && input.payments === undefined) {
    throw new ConfigError([
      `the marketplace listens on ${input.host}, beyond this machine: choose the payment provider with --payments stripe (or MKT_SYNC_PAYMENTS); the built-in local provider lets anyone holding a checkout URL confirm any storage cap for free, so it runs here only with an explicit --payments local`,
    ]);
  }
  return {
    payments: input.payments ?? 'local',
    publicUrl,
    baseUrl: (req) => publicUrl ?? socketUrl(req),
  };
}
