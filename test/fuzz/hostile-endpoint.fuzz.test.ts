// Fuzzes the health check against a hostile monitored endpoint (issue 28): fast-check scripts each
// answer (redirect chains, loops, bad Location values, other schemes, the monitor's own loopback,
// a rebinding name, huge, slow, malformed, deep and mistyped bodies) and the real checkHealth runs
// in-process against real HTTP servers. It must always resolve to a valid Snapshot within its
// timeout plus a margin, keep `details` only from the configured origin, and, for a public target,
// never reach the internal (loopback) server.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkHealth } from '../../daemon/services/monitor/checks/health.js';
import { addressClass } from '../../daemon/services/monitor/checks/address.js';
import type { HopPolicy } from '../../daemon/services/monitor/checks/http.js';
import type { Snapshot } from '../../src/store/monitor.js';
import type { TargetConfig } from '../../src/config/monitor.js';
import { settingsFromEnv } from './run.js';

const settings = settingsFromEnv(200);
/** Checks in flight at once: slow bodies wait for their timeout, so runs overlap. */
const CONCURRENCY = 8;
/** Past the target's timeout, what a loaded machine may add before the check must have ended. */
const MARGIN_MS = 5_000;
/** Past the 256 KiB details cap, and small enough that 10,000 runs move little data. */
const HUGE_MAX = 512 * 1024;

type Where = 'same-rel' | 'same-abs' | 'dot-rel' | 'internal' | 'localhost' | 'numeric' | 'mapped' | 'unspecified' | 'other' | 'rebind' | 'https-other' | 'loop' | 'metadata';
type Answer =
  | { kind: 'redirect'; status: number; to: Where }
  | { kind: 'bad-location'; status: number; location: string }
  | { kind: 'body'; status: number; type: string | null; body: Body };
type Body =
  | { kind: 'json'; value: Record<string, unknown> }
  | { kind: 'word'; word: string }
  | { kind: 'deep'; depth: number }
  | { kind: 'text'; text: string }
  | { kind: 'array' }
  | { kind: 'huge'; bytes: number }
  | { kind: 'trickle'; everyMs: number }
  | { kind: 'mute' }
  | { kind: 'cut'; declared: number }
  | { kind: 'bytes'; bytes: number[] };

interface Scenario {
  /** How the configured target is written: public (::1 by address or by name) or local (127.0.0.1). */
  target: 'public-ip' | 'public-name' | 'local';
  timeoutMs: number;
  answers: Answer[];
}

const WHERE: Where[] = ['same-rel', 'same-abs', 'dot-rel', 'internal', 'localhost', 'numeric', 'mapped', 'unspecified', 'other', 'rebind', 'https-other', 'loop', 'metadata'];
const WORDS = ['ok', 'up', 'healthy', 'degraded', 'down', 'fail', 'weird', '', ' OK ', 'maintenance', 'ÖK'];

const bodyArb: fc.Arbitrary<Body> = fc.oneof(
  fc.record({ kind: fc.constant('json' as const), value: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }) }),
  fc.record({ kind: fc.constant('word' as const), word: fc.constantFrom(...WORDS) }),
  fc.record({ kind: fc.constant('deep' as const), depth: fc.integer({ min: 1, max: 20_000 }) }),
  fc.record({ kind: fc.constant('text' as const), text: fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom('{', '{"status":', '{"status":"ok"', 'null', '"ok"', '1e999', '{"__proto__":{"status":"down"}}', '{"status":"ok","status":"down"}')) }),
  fc.constant({ kind: 'array' as const }),
  fc.record({ kind: fc.constant('huge' as const), bytes: fc.integer({ min: 256 * 1024 - 16, max: HUGE_MAX }) }),
  fc.record({ kind: fc.constant('trickle' as const), everyMs: fc.integer({ min: 5, max: 60 }) }),
  fc.constant({ kind: 'mute' as const }),
  fc.record({ kind: fc.constant('cut' as const), declared: fc.integer({ min: 1, max: 100_000 }) }),
  fc.record({ kind: fc.constant('bytes' as const), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 64 }) }),
);

const answerArb: fc.Arbitrary<Answer> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('redirect' as const), status: fc.constantFrom(300, 301, 302, 303, 307, 308, 200, 201), to: fc.constantFrom(...WHERE) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('bad-location' as const),
      status: fc.constantFrom(301, 302, 307),
      location: fc.oneof(
        fc.constantFrom('', ' ', 'http://[', 'http://', '//', 'http://a b/', 'javascript:alert(1)', 'ftp://x/y', 'data:text/plain,hi', 'file:///etc/passwd', 'mailto:a@b', 'http://x:99999/', 'http://user:pw@other.example/', '\u00ff\u00fe', 'x'.repeat(3000)),
        fc.string({ maxLength: 40 }).map((s) => s.replace(/[^\t\x20-\x7e]/g, '')),
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('body' as const),
      status: fc.constantFrom(200, 200, 200, 204, 299, 301, 302, 404, 500, 503),
      type: fc.constantFrom('application/json', 'application/json; charset=utf-16', 'text/html', 'application/x-garbage', null),
      body: bodyArb,
    }),
  },
);

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  target: fc.constantFrom('public-ip' as const, 'public-name' as const, 'local' as const),
  timeoutMs: fc.integer({ min: 150, max: 400 }),
  answers: fc.array(answerArb, { minLength: 1, maxLength: 8 }),
});

/** Scripts by run id; both servers answer /run/<id>/<step> from them. */
const scripts = new Map<number, Scenario>();
/** Requests that reached the internal (loopback) server, by run id. */
const internalHits = new Map<number, string[]>();
/** The Host of every request of a run, on either server. */
const hostsOf = new Map<number, string[]>();
let port = 0;
const servers: Server[] = [];

/** Where a redirect of step `step` of run `id` points. */
function locationOf(to: Where, id: number, step: number, configuredOrigin: string): string {
  const path = `/run/${id}/${step + 1}`;
  switch (to) {
    case 'same-rel':
      return path;
    case 'dot-rel':
      return `./${step + 1}`;
    case 'same-abs':
      return `${configuredOrigin}${path}`;
    case 'internal':
      return `http://127.0.0.1:${port}${path}`;
    case 'localhost':
      return `http://localhost:${port}${path}`;
    case 'numeric':
      return `http://2130706433:${port}${path}`;
    case 'mapped':
      return `http://[::ffff:127.0.0.1]:${port}${path}`;
    case 'unspecified':
      return `http://0.0.0.0:${port}${path}`;
    case 'other':
      return `http://other.example:${port}${path}`;
    case 'rebind':
      return `http://rebind.example:${port}${path}`;
    case 'https-other':
      return `https://other.example:${port}${path}`;
    case 'loop':
      return `/run/${id}/0`;
    case 'metadata':
      // A name, not the literal: were the rule broken, no packet could leave this machine.
      return 'http://metadata.example/latest/meta-data/';
  }
}

function answer(req: IncomingMessage, res: ServerResponse, internal: boolean): void {
  res.on('error', () => undefined);
  const m = /^\/run\/(\d+)\/(\d+)/.exec(req.url ?? '');
  const id = m ? Number(m[1]) : -1;
  if (internal) internalHits.set(id, [...(internalHits.get(id) ?? []), `${req.headers.host}${req.url}`]);
  hostsOf.set(id, [...(hostsOf.get(id) ?? []), `${internal ? 'internal' : 'site'} ${req.headers.host}`]);
  const scenario = scripts.get(id);
  // Every JSON object this endpoint sends says which Host it was sent to: details must come from the configured one.
  const servedBy = req.headers.host ?? '';
  const step = m ? Number(m[2]) : 0;
  const a = scenario?.answers[step];
  if (!scenario || !a) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', served_by: servedBy }));
  const configuredOrigin = scenario.target === 'local' ? `http://127.0.0.1:${port}` : scenario.target === 'public-ip' ? `http://[::1]:${port}` : `http://site.example:${port}`;
  if (a.kind === 'redirect') return void res.writeHead(a.status, { location: locationOf(a.to, id, step, configuredOrigin) }).end();
  if (a.kind === 'bad-location') {
    try {
      res.writeHead(a.status, { location: a.location }).end();
    } catch {
      res.writeHead(a.status).end();
    }
    return;
  }
  const headers: Record<string, string> = a.type ? { 'content-type': a.type } : {};
  const b = a.body;
  switch (b.kind) {
    case 'json':
      return void res.writeHead(a.status, headers).end(JSON.stringify({ ...b.value, served_by: servedBy }));
    case 'word':
      return void res.writeHead(a.status, headers).end(JSON.stringify({ status: b.word, served_by: servedBy }));
    case 'deep':
      return void res.writeHead(a.status, headers).end(`{"served_by":${JSON.stringify(servedBy)},"deep":${'['.repeat(b.depth)}${']'.repeat(b.depth)}}`);
    case 'text':
      return void res.writeHead(a.status, headers).end(b.text);
    case 'array':
      return void res.writeHead(a.status, headers).end(JSON.stringify([{ status: 'ok', served_by: servedBy }]));
    case 'huge': {
      res.writeHead(a.status, headers);
      const head = `{"served_by":${JSON.stringify(servedBy)},"pad":"`;
      res.write(head);
      const chunk = 'x'.repeat(16 * 1024);
      let left = b.bytes - head.length;
      const more = (): void => {
        while (left > 0 && !res.destroyed) {
          const ok = res.write(chunk.slice(0, Math.min(left, chunk.length)));
          left -= chunk.length;
          if (!ok) return void res.once('drain', more);
        }
        if (!res.destroyed) res.end('"}');
      };
      return more();
    }
    case 'trickle': {
      res.writeHead(a.status, headers);
      res.write(`{"served_by":${JSON.stringify(servedBy)},"pad":"`);
      const t = setInterval(() => res.write('x'), b.everyMs);
      res.on('close', () => clearInterval(t));
      return;
    }
    case 'mute':
      return; // headers never come
    case 'cut':
      res.writeHead(a.status, { ...headers, 'content-length': String(b.declared + 10) });
      res.write('{"status":"ok"');
      return void setTimeout(() => res.socket?.destroy(), 5);
    case 'bytes':
      return void res.writeHead(a.status, headers).end(Buffer.from(b.bytes));
  }
}

/** ::1 plays a public address; the names resolve to it (rebind.example to loopback on every second lookup), none reach real DNS. */
function policy(): HopPolicy {
  let rebinds = 0;
  return {
    lookup: async (host) => {
      if (host === 'site.example' || host === 'other.example') return ['::1'];
      if (host === 'rebind.example') return rebinds++ % 2 === 0 ? ['::1'] : ['127.0.0.1'];
      if (host === 'localhost') return ['127.0.0.1'];
      if (host === 'metadata.example') return ['169.254.169.254'];
      throw Object.assign(new Error('no such host'), { code: 'ENOTFOUND' });
    },
    // Only ::1 is "public" and only loopback "local": a random Location naming a real public or
    // private address is refused, so the fuzz never sends a byte off this machine.
    classify: (ip) => (ip === '::1' ? 'public' : addressClass(ip) === 'local' && /^(127\.|::ffff:7f|::ffff:127\.)/i.test(ip) ? 'local' : 'other'),
  };
}

async function listen(host: string, p: number, internal: boolean): Promise<Server> {
  const s = createServer((req, res) => answer(req, res, internal));
  await new Promise<void>((resolve, reject) => s.once('error', reject).listen(p, host, resolve));
  servers.push(s);
  return s;
}

beforeAll(async () => {
  // The target's "public" side on ::1, the monitor's internal service on 127.0.0.1, same port:
  // only the address a hop connects to decides which one answers.
  for (let attempt = 0; ; attempt++) {
    const site = await listen('::1', 0, false);
    port = (site.address() as AddressInfo).port;
    try {
      await listen('127.0.0.1', port, true);
      break;
    } catch (err) {
      await new Promise<void>((r) => site.close(() => r()));
      servers.pop();
      if (attempt >= 5) throw err;
    }
  }
});

afterAll(async () => {
  for (const s of servers) await new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r())));
});

const STATUSES = new Set(['operational', 'degraded', 'down']);

/** What is wrong with the check of `scenario` (run `id`), or undefined. */
function problem(id: number, scenario: Scenario, snap: Snapshot, elapsedMs: number): string | undefined {
  if (!snap || typeof snap !== 'object') return `not a snapshot: ${String(snap)}`;
  if (!STATUSES.has(snap.status)) return `status ${String(snap.status)}`;
  if (typeof snap.checked_at !== 'string' || Number.isNaN(Date.parse(snap.checked_at))) return `checked_at ${String(snap.checked_at)}`;
  if (!Number.isInteger(snap.response_time_ms) || snap.response_time_ms < 0) return `response_time_ms ${snap.response_time_ms}`;
  if (snap.status === 'down' && typeof snap.error !== 'string') return 'down without an error';
  if (snap.error !== undefined && (typeof snap.error !== 'string' || snap.error.length > 400)) return `error ${JSON.stringify(snap.error).slice(0, 500)}`;
  if (elapsedMs > scenario.timeoutMs + MARGIN_MS) return `took ${elapsedMs} ms with a ${scenario.timeoutMs} ms timeout`;
  if (snap.details !== undefined) {
    if (typeof snap.details !== 'object' || snap.details === null || Array.isArray(snap.details)) return 'details not an object';
    const configuredHost = scenario.target === 'local' ? `127.0.0.1:${port}` : scenario.target === 'public-ip' ? `[::1]:${port}` : `site.example:${port}`;
    // The chain never left the configured origin: every request went to it (on the server it names).
    const server = scenario.target === 'local' ? 'internal' : 'site';
    const foreign = (hostsOf.get(id) ?? []).find((h) => h !== `${server} ${configuredHost}`);
    if (foreign !== undefined) return `details kept although the chain reached ${foreign}`;
    const by = (snap.details as { served_by?: unknown }).served_by;
    if (by !== undefined && by !== configuredHost) return `details from ${JSON.stringify(by)}, not the configured ${configuredHost}`;
  }
  if (scenario.target !== 'local' && internalHits.has(id)) return `a public target's redirect reached the internal server: ${internalHits.get(id)!.join(', ')}`;
  return undefined;
}

describe('hostile monitored endpoint (seed printed below; replay with MKT_FUZZ_SEED and MKT_FUZZ_ONLY)', () => {
  it(
    `checkHealth stays bounded and keeps no foreign details (${settings.only ?? settings.runs} runs)`,
    async () => {
      const scenarios = fc.sample(scenarioArb, { seed: settings.seed, numRuns: settings.only !== undefined ? settings.only + 1 : settings.runs });
      const indices = settings.only !== undefined ? [settings.only] : scenarios.map((_, i) => i);
      const failures: string[] = [];
      const kinds = new Map<string, number>();
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < indices.length) {
          const id = indices[next++]!;
          const scenario = scenarios[id]!;
          scripts.set(id, scenario);
          const origin = scenario.target === 'local' ? `http://127.0.0.1:${port}` : scenario.target === 'public-ip' ? `http://[::1]:${port}` : `http://site.example:${port}`;
          const t: TargetConfig = { name: 'h', label: 'h', url: `${origin}/run/${id}/0`, intervalMs: 60_000, timeoutMs: scenario.timeoutMs, headers: { authorization: 'Bearer fuzz-secret' }, routes: [], dns: [] };
          const started = Date.now();
          let snap: Snapshot;
          try {
            snap = await checkHealth(t, Date.now, undefined, policy());
          } catch (err) {
            failures.push(`run ${id}: checkHealth threw ${String(err)}\n  ${JSON.stringify(scenario).slice(0, 2000)}`);
            continue;
          }
          const p = problem(id, scenario, snap, Date.now() - started);
          const key = snap.status === 'down' ? `down: ${(snap.error ?? '').replace(/\d+/g, 'N').replace(/ to \S+/, ' to URL').slice(0, 60)}` : snap.status;
          kinds.set(key, (kinds.get(key) ?? 0) + 1);
          if (p) failures.push(`run ${id}: ${p}\n  snapshot ${JSON.stringify(snap).slice(0, 500)}\n  scenario ${JSON.stringify(scenario).slice(0, 2000)}`);
          scripts.delete(id);
          hostsOf.delete(id);
          internalHits.delete(id);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      process.stdout.write(
        `fuzz hostile endpoint: seed ${settings.seed}, ${indices.length} checks, ${failures.length} failures\n${[...kinds]
          .sort((a, b) => b[1] - a[1])
          .map(([k, n]) => `  ${String(n).padStart(6)}  ${k}`)
          .join('\n')}\n`,
      );
      expect(failures.slice(0, 5), `seed ${settings.seed}`).toEqual([]);
    },
    60_000 + settings.runs * 100,
  );
});
