// Address classes for hops a remote answer chooses (WHOIS referrals, health-check redirects):
// only public unicast addresses, so a hostile answer cannot point the monitor at its own network.
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

// Two lists: a BlockList matches IPv4 addresses against IPv4-mapped IPv6 rules too.
const nonPublic4 = new BlockList();
const nonPublic6 = new BlockList();
// IANA special-purpose registries (RFC 6890 and successors): private, shared, loopback,
// link-local, documentation, benchmarking, multicast and reserved space.
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic4.addSubnet(net, prefix, 'ipv4');
}
// IPv6: unspecified, loopback, IPv4-mapped and translated (they would smuggle the v4 classes),
// discard, documentation, 6to4 and Teredo (they embed v4 addresses), ULA, link-local, multicast.
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  nonPublic6.addSubnet(net, prefix, 'ipv6');
}

/** True for a public unicast IP address; false for anything special-purpose or not an IP. */
export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return false;
  return family === 4 ? !nonPublic4.check(ip, 'ipv4') : !nonPublic6.check(ip, 'ipv6');
}

// Loopback and private ranges (RFC 1918, shared address space, ULA): where a monitor's own
// local set-up lives. Link-local (cloud metadata), unspecified and multicast are not among them.
const local = new BlockList();
for (const [net, prefix] of [
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  local.addSubnet(net, prefix, 'ipv4');
}
local.addAddress('::1', 'ipv6');
local.addSubnet('fc00::', 7, 'ipv6');

/** `public` unicast, `local` (loopback or a private range), or `other` (special-purpose, or not an IP). */
export type AddressClass = 'public' | 'local' | 'other';

export function addressClass(ip: string): AddressClass {
  const family = isIP(ip);
  if (family === 0) return 'other';
  if (isPublicAddress(ip)) return 'public';
  return local.check(ip, family === 4 ? 'ipv4' : 'ipv6') ? 'local' : 'other';
}

/** Every address a host name resolves to (in the resolver's order). */
export type Lookup = (host: string) => Promise<string[]>;

export const systemLookup: Lookup = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Resolves a host the way a hop the remote side chose must be: an IP literal is its own
 * address, a name is resolved once, and every address must pass `allowed` (one bad address
 * among several refuses: no choosing the good one and connecting by name later). The caller
 * connects to the addresses returned, never resolving the name again (no DNS rebinding).
 */
export async function resolveChecked(
  host: string,
  allowed: (ip: string) => boolean,
  lookup: Lookup,
): Promise<{ ok: true; addresses: string[] } | { ok: false; reason: string }> {
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await lookup(host);
    } catch (err) {
      return { ok: false, reason: `cannot resolve it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: 'it resolves to no address' };
  const bad = addresses.find((a) => !allowed(a));
  if (bad !== undefined) return { ok: false, reason: `it resolves to ${bad}, not a public address` };
  return { ok: true, addresses };
}
