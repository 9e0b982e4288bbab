// DNS checks: resolve each configured record at the configured resolver (node:dns Resolver,
// `host` or `host:port`) and compare the answer set with the expected values.
import { Resolver } from 'node:dns/promises';
import type { DnsCheckConfig } from '../../../../src/config/monitor.js';
import type { DnsResult } from '../../../../src/store/monitor.js';

function flatten(type: string, answer: unknown[]): string[] {
  return answer.map((a) => {
    if (typeof a === 'string') return a;
    if (Array.isArray(a)) return a.join(''); // TXT chunks
    const r = a as Record<string, unknown>;
    if (type === 'MX') return `${String(r.priority)} ${String(r.exchange)}`;
    if (type === 'SRV') return `${String(r.priority)} ${String(r.weight)} ${String(r.port)} ${String(r.name)}`;
    if (type === 'CAA') return `${String(r.critical ?? 0)} ${Object.keys(r).find((k) => k !== 'critical') ?? ''} ${String(Object.entries(r).find(([k]) => k !== 'critical')?.[1] ?? '')}`;
    if (type === 'SOA') return `${String(r.nsname)} ${String(r.hostmaster)}`;
    return JSON.stringify(a);
  });
}

/** Case-insensitive, trailing-dot-insensitive set comparison. */
function norm(v: string): string {
  return v.trim().toLowerCase().replace(/\.$/, '');
}

export async function checkDns(records: DnsCheckConfig[], timeoutMs: number, now: () => number): Promise<DnsResult[]> {
  return Promise.all(
    records.map(async (rec): Promise<DnsResult> => {
      const checked_at = new Date(now()).toISOString();
      const base = { name: rec.name, record_type: rec.type, expected: rec.expected, checked_at };
      try {
        // Inside the try: a resolver address node:dns refuses must fail this record, not the whole check.
        const resolver = new Resolver({ timeout: Math.max(100, Math.min(timeoutMs, 5000)), tries: 2 });
        if (rec.server) resolver.setServers([rec.server]);
        const answer = (await resolver.resolve(rec.name, rec.type)) as unknown[];
        const actual = flatten(rec.type, answer).sort();
        const want = new Set(rec.expected.map(norm));
        const got = new Set(actual.map(norm));
        const matches = want.size === got.size && [...want].every((v) => got.has(v));
        return { ...base, actual, matches };
      } catch (err) {
        const e = err as { code?: string; message?: string };
        return { ...base, actual: [], matches: false, error: e.code ?? e.message ?? String(err) };
      }
    }),
  );
}
