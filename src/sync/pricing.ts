// Subscription prices from an app's pricing constants: the one formula both the client's local
// quote (`mkt sync plan quote`) and the server's checkout use, and the size syntax of `--cap`
// (50GiB, 500MB, 1TiB, bytes). Integer arithmetic only, in BigInt.
import type { AppPricingResponse } from './wire.js';

/** The constants a price depends on (the pricing endpoint's fields, less the app name). */
export type PricingConstants = Omit<AppPricingResponse, 'app_name'>;

export type Interval = 'month' | 'year';
const GIB = 1024n ** 3n;

/**
 * monthly = max(min_charge_cents, ceil(cap_bytes × per_gb_tenths_of_cent_per_month / (10 × 2^30)));
 * annual  = max(min_charge_cents, monthly × annual_multiplier). Cents.
 */
export function quoteCents(p: PricingConstants, capBytes: number, interval: Interval): number {
  const num = BigInt(capBytes) * BigInt(p.per_gb_tenths_of_cent_per_month);
  const den = 10n * GIB;
  const raw = (num + den - 1n) / den;
  const floor = BigInt(p.min_charge_cents);
  const monthly = raw > floor ? raw : floor;
  if (interval === 'month') return Number(monthly);
  const annual = monthly * BigInt(p.annual_multiplier);
  return Number(annual > floor ? annual : floor);
}

export function capInRange(p: PricingConstants, capBytes: number): boolean {
  return capBytes >= p.min_cap_bytes && capBytes <= p.max_cap_bytes;
}

const UNITS: Record<string, bigint> = {
  '': 1n,
  b: 1n,
  kb: 1000n,
  mb: 1000n ** 2n,
  gb: 1000n ** 3n,
  tb: 1000n ** 4n,
  kib: 1024n,
  mib: 1024n ** 2n,
  gib: 1024n ** 3n,
  tib: 1024n ** 4n,
};

/** `50GiB`, `1.5TiB`, `500MB`, `1073741824`: binary units are 1024-based, decimal ones 1000-based. */
export function parseSize(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (!m) return undefined;
  const unit = UNITS[m[2]!.toLowerCase()];
  if (unit === undefined) return undefined;
  const [int, frac = ''] = m[1]!.split('.');
  const scale = 10n ** BigInt(frac.length);
  const bytes = (BigInt(int! + frac) * unit) / scale;
  if ((BigInt(int! + frac) * unit) % scale !== 0n) return undefined;
  return bytes > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : Number(bytes);
}

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${Number.isInteger(v) ? v : v.toFixed(2)} ${units[i]}`;
}

export function formatCents(c: number): string {
  return `${(c / 100).toFixed(2)}`;
}
