// planQuoteRun / planBuyRun / planStatusRun / planCapRun: `mkt sync plan ...` — storage
// subscriptions. Quotes are computed locally from the app's pricing constants and checked
// against the server's quote (the server's number is the one charged).
import { execFile } from 'node:child_process';
import type { Factory } from '../../src/cli/factory.js';
import { NegativeError, UnreachableError, UsageError } from '../../src/cli/errors.js';
import { printFields, printJson, type Cell } from '../../src/cli/output.js';
import { capInRange, formatBytes, formatCents, parseSize, quoteCents, type Interval } from '../../src/sync/pricing.js';
import { clientFor } from '../../src/sync/session.js';
import { call, openSession, type ClientFlags } from './shared.js';

export interface PlanOptions extends ClientFlags {
  factory: Factory;
  cap?: string;
  annual?: boolean;
  open?: boolean;
}

function capBytes(opts: PlanOptions): number {
  if (!opts.cap) throw new UsageError('pass --cap SIZE (for example 50GiB)');
  const n = parseSize(opts.cap);
  if (n === undefined || n <= 0) throw new UsageError(`--cap is not a size: ${opts.cap} (use 50GiB, 500MB, 1TiB or bytes)`);
  return n;
}
const interval = (opts: PlanOptions): Interval => (opts.annual ? 'year' : 'month');

export async function planQuoteRun(opts: PlanOptions): Promise<void> {
  const f = opts.factory;
  const cap = capBytes(opts);
  const s = await openSession(f, opts);
  const pricing = await call(() => clientFor(s.server).pricing(s.profile.api_key));
  if (!capInRange(pricing, cap)) throw new UsageError(`--cap must be between ${formatBytes(pricing.min_cap_bytes)} and ${formatBytes(pricing.max_cap_bytes)}`);
  const local = quoteCents(pricing, cap, interval(opts));
  const server = await call(() => s.client.quote({ cap_bytes: cap, interval: interval(opts) }));
  const serverCents = Number(server.price_cents);
  const agrees = serverCents === local;
  if (opts.json) {
    printJson(f.io, { cap_bytes: cap, interval: interval(opts), price_cents: local, server_price_cents: serverCents, agrees, pricing });
  } else {
    printFields(f.io, [
      ['cap', formatBytes(cap)],
      ['interval', interval(opts)],
      ['price', `${formatCents(local)} per ${interval(opts)}`],
      ['server quote', agrees ? 'agrees' : `${formatCents(serverCents)} (differs; the server's price is the one charged)`],
    ]);
  }
  if (!agrees) f.io.stderr.write(`warning: local quote ${local} cents differs from the server quote ${serverCents} cents\n`);
}

export async function planBuyRun(opts: PlanOptions): Promise<void> {
  const f = opts.factory;
  const cap = capBytes(opts);
  const s = await openSession(f, opts);
  const r = await call(() => s.client.checkout({ cap_bytes: cap, interval: interval(opts) }));
  // Checked before anything is printed: the URL comes from the server, which we do not trust to
  // hand a browser (or xdg-open) a file:, javascript: or custom-scheme target.
  const target = opts.open ? browsableUrl(r.checkout_url) : undefined;
  if (opts.json) printJson(f.io, r);
  else f.io.stdout.write(r.checkout_url + '\n');
  if (target) openInBrowser(f, target);
}

/** The checkout URL when it is an absolute http(s) URL; anything else is refused. */
export function browsableUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UnreachableError(`the server sent a checkout URL that is not a URL; nothing was opened`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new UnreachableError(`the server sent a checkout URL with the scheme ${JSON.stringify(u.protocol.slice(0, 32))}; only http and https are opened, nothing was opened`);
  }
  return u.href;
}

function openInBrowser(f: Factory, url: string): void {
  // $BROWSER first, as xdg-open and Python's webbrowser honour it; one program, no shell.
  const browser = f.io.env.BROWSER?.trim();
  const cmd = browser ? browser : process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  execFile(cmd, [url], (err) => {
    if (err) f.io.stderr.write(`could not open a browser (${cmd}); open the URL above\n`);
  }).unref();
}

function statusFields(st: Record<string, unknown>): [string, Cell][] {
  return Object.entries(st).map(([k, v]) => [k, k.endsWith('_bytes') && typeof v === 'number' ? formatBytes(v) : typeof v === 'object' && v !== null ? JSON.stringify(v) : (v as Cell)]);
}

export async function planStatusRun(opts: PlanOptions): Promise<void> {
  const s = await openSession(opts.factory, opts);
  const st = await call(() => s.client.subscription());
  if (opts.json) return printJson(opts.factory.io, st);
  if (!st.active) opts.factory.io.stderr.write('No active subscription (see `mkt sync plan quote` and `plan buy`)\n');
  printFields(opts.factory.io, statusFields(st));
}

export async function planCapRun(opts: PlanOptions): Promise<void> {
  const cap = capBytes(opts);
  const s = await openSession(opts.factory, opts);
  const st = await call(() => s.client.changeCap({ cap_bytes: cap }));
  if (opts.json) return printJson(opts.factory.io, st);
  if (!st.active) throw new NegativeError('no active subscription to change');
  printFields(opts.factory.io, statusFields(st));
  opts.factory.io.stderr.write('The new cap takes effect at the next billing cycle\n');
}
