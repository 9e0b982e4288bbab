// The API documents as clients consume them (issue 30, "The API documents"): each service's
// /openapi.json, fetched from a real server, lints clean under Redocly's `recommended` rules,
// declares the security the server enforces, and generates (openapi-typescript) types that a
// small fetch client type-checks against under `strict` and then runs against the same server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import ts from 'typescript';
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import { startService, type RunningService } from '../../daemon/start.js';
import { createLogger } from '../../daemon/logger.js';
import { startMonitor, type MonitorNode } from '../helpers/monitor-node.js';
import { healthServer, type HealthServer } from '../helpers/monitor-fixtures.js';
import { startNode, TOKEN as TICKETS_TOKEN, type TicketNode } from '../helpers/tickets-node.js';
import { marketplaceEnvFor } from '../helpers/pg.js';
import { tempDir } from '../helpers/tmp.js';
import { VERSION } from '../../src/version.js';

type Service = 'marketplace' | 'monitor' | 'tickets';
const SERVICES: Service[] = ['marketplace', 'monitor', 'tickets'];
const MONITOR_TOKEN = 'mon-token';

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; minItems?: number; items?: Schema; enum?: unknown[]; minLength?: number };
interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses: Record<string, unknown>;
}

/** The smallest value of the plain schemas request bodies use: required properties only. */
function minimalValue(s: Schema): unknown {
  if (s.enum) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'string') return 'x'.repeat(Math.max(1, s.minLength ?? 1));
  if (type === 'integer' || type === 'number') return 1;
  if (type === 'boolean') return false;
  if (type === 'array') return Array.from({ length: s.minItems ?? 0 }, () => minimalValue(s.items ?? {}));
  if (type === 'null') return null;
  return Object.fromEntries((s.required ?? []).map((k) => [k, minimalValue(s.properties?.[k] ?? {})]));
}
interface Doc {
  openapi: string;
  info: { version: string; license?: { name: string } };
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes?: Record<string, { type: string; scheme?: string }> };
}

/**
 * Warnings of the `recommended` rules that stay, each for a reason: an operation that takes no
 * input and needs no credential has no 4XX answer to document.
 */
const ALLOWED_WARNINGS: Record<Service, { rule: string; pointer: string; why: string }[]> = {
  marketplace: [{ rule: 'operation-4xx-response', pointer: '#/paths/~1api~1v1~1license~1jwks.json/get/responses', why: 'public, static key set: no input, no credential' }],
  monitor: [
    { rule: 'operation-4xx-response', pointer: '#/paths/~1api~1health/get/responses', why: 'public liveness: no input, no credential, no rate limit' },
    { rule: 'operation-4xx-response', pointer: '#/paths/~1/get/responses', why: 'the public dashboard page: no input, no credential, no rate limit' },
  ],
  tickets: [],
};

const dirs = [tempDir('mkt-openapi-')];
const sink = new Writable({ write: (_c, _e, cb) => cb() });
let marketplace: RunningService;
let monitor: MonitorNode;
let tickets: TicketNode;
let health: HealthServer;
const urls = {} as Record<Service, string>;
const tokens: Record<Service, string | undefined> = { marketplace: undefined, monitor: MONITOR_TOKEN, tickets: TICKETS_TOKEN };
const docs = {} as Record<Service, Doc>;
const texts = {} as Record<Service, string>;
/** Where the generated types and the clients are written: a package of its own. */
const out = join(dirs[0]!.path, 'client');

beforeAll(async () => {
  const [mDir, monDir, tDir] = [tempDir('mkt-openapi-m-'), tempDir('mkt-openapi-mon-'), tempDir('mkt-openapi-t-')];
  dirs.push(mDir, monDir, tDir);
  health = await healthServer();
  marketplace = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: mDir.path, options: { databaseUrl: (await marketplaceEnvFor(mDir.path)).MKT_DATABASE_URL }, env: {}, logger: createLogger({ level: 'silent', stream: sink }), out: sink });
  // The dashboard on, so that its public page is in the document too.
  monitor = await startMonitor(monDir.path, `token: ${MONITOR_TOKEN}\ndashboard: true\nrate_limit: { requests: 1000000 }\ntargets:\n  web:\n    url: ${health.url}\n    interval: 1h\n`);
  tickets = await startNode(tDir.path);
  Object.assign(urls, { marketplace: marketplace.url, monitor: monitor.url, tickets: tickets.url });
  for (const s of SERVICES) {
    const token = tokens[s];
    const res = await fetch(`${urls[s]}/openapi.json`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    expect(res.status, s).toBe(200);
    texts[s] = await res.text();
    docs[s] = JSON.parse(texts[s]) as Doc;
  }
  mkdirSync(out);
  writeFileSync(join(out, 'package.json'), JSON.stringify({ type: 'module' }));
  for (const s of SERVICES) writeFileSync(join(out, `${s}-api.ts`), astToString(await openapiTS(docs[s] as never, { silent: true })));
  for (const [name, text] of Object.entries(CLIENTS)) writeFileSync(join(out, name), text);
}, 120_000);

afterAll(async () => {
  await marketplace?.close();
  await monitor?.stop();
  await tickets?.stop();
  await health?.close();
  for (const d of dirs.reverse()) d.remove();
});

function operations(doc: Doc): { path: string; method: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
}

/**
 * Asks the server what the document says of each operation: one anonymous request each. An
 * operation that needs a credential gets a body its schema accepts, so that a server that validates
 * before it authenticates still answers the question; an open one gets a body no schema accepts,
 * so that nothing is written. Path parameters take a placeholder any route accepts (an object id's length).
 */
async function securityMismatches(doc: Doc, base: string): Promise<{ wrong: string[]; secured: string[]; open: string[] }> {
  const found = { wrong: [] as string[], secured: [] as string[], open: [] as string[] };
  for (const { path, method, op } of operations(doc)) {
    const what = `${method.toUpperCase()} ${path}`;
    if (op.security === undefined) {
      found.wrong.push(`${what} declares no security`);
      continue;
    }
    const required = op.security.length > 0 && op.security.every((alt) => Object.keys(alt).length > 0);
    const schema = op.requestBody?.content['application/json']?.schema;
    const body = schema === undefined ? undefined : JSON.stringify(required ? minimalValue(schema) : { 'openapi-probe': true });
    const res = await fetch(base + path.replace(/\{[^}]+\}/g, '0'.repeat(40)), { method: method.toUpperCase(), body, headers: body ? { 'content-type': 'application/json' } : {} });
    await res.arrayBuffer();
    if (required) {
      found.secured.push(op.operationId ?? what);
      if (res.status !== 401) found.wrong.push(`${what} needs a credential by the document, answered ${res.status} without one`);
      if (!('401' in op.responses)) found.wrong.push(`${what} needs a credential but documents no 401`);
    } else {
      found.open.push(op.operationId ?? what);
      if (res.status === 401) found.wrong.push(`${what} is open by the document, answered 401 without a credential`);
    }
  }
  return found;
}

describe.each(SERVICES)('the %s document', (service) => {
  it('is OpenAPI 3.1 naming the server it was fetched from, with the version and license kept', () => {
    const doc = docs[service];
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(VERSION);
    // The spec describes the marketplace API "under a noncommercial license"; the others carry the code's.
    expect(doc.info.license?.name).toBe(service === 'marketplace' ? 'PolyForm Noncommercial License 1.0.0' : 'MIT');
    expect(doc.servers).toEqual([{ url: urls[service] }]);
  });

  it("lints clean under Redocly's recommended rules (errors none; warnings only the commented allow-list)", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems: NormalizedProblem[] = await lintFromString({ source: texts[service], absoluteRef: join(out, `${service}.json`), config });
    const allowed = ALLOWED_WARNINGS[service];
    const left = problems
      .filter((p) => !(p.severity === 'warn' && allowed.some((a) => a.rule === p.ruleId && p.location[0]?.pointer === a.pointer)))
      .map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`);
    expect(left).toEqual([]);
  });

  it('documents a success answer for every operation, so a generated client has a type for it', () => {
    const without = operations(docs[service]).filter(({ op }) => !Object.keys(op.responses).some((c) => /^2\d\d$/.test(c)));
    expect(without.map(({ method, path }) => `${method.toUpperCase()} ${path}`)).toEqual([]);
  });

  it('declares the security the server enforces: bearer-only operations answer 401 without a credential, the others do not', async () => {
    const doc = docs[service];
    expect(doc.components.securitySchemes?.bearer).toEqual({ type: 'http', scheme: 'bearer' });
    const { wrong, secured, open } = await securityMismatches(doc, urls[service]);
    expect(wrong).toEqual([]);
    // Each service has both kinds but the tickets tracker, where every route needs the token.
    expect(secured.length).toBeGreaterThan(0);
    if (service !== 'tickets') expect(open.length).toBeGreaterThan(0);
  });
});

describe('documents that follow the configuration', () => {
  it('the marketplace names its --public-url as the server', async () => {
    const dir = tempDir('mkt-openapi-pub-');
    dirs.push(dir);
    const svc = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: dir.path, options: { publicUrl: 'https://market.example.com/', databaseUrl: (await marketplaceEnvFor(dir.path)).MKT_DATABASE_URL }, env: {}, logger: createLogger({ level: 'silent', stream: sink }), out: sink });
    try {
      const doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as Doc;
      expect(doc.servers).toEqual([{ url: 'https://market.example.com' }]);
    } finally {
      await svc.close();
    }
  });

  it('the monitor under `badges: public` documents its badges open, and the server agrees', async () => {
    const dir = tempDir('mkt-openapi-badges-');
    dirs.push(dir);
    const mon = await startMonitor(dir.path, `token: ${MONITOR_TOKEN}\nbadges: public\ntargets:\n  web:\n    url: ${health.url}\n    interval: 1h\n`);
    try {
      const doc = (await mon.get('/openapi.json')).body as Doc;
      const { wrong, open } = await securityMismatches(doc, mon.url);
      expect(wrong).toEqual([]);
      // Heartbeat ping URLs are always open: their key is the secret (issue 31).
      expect(open.sort()).toEqual(['health', 'ping', 'pingSignal', 'pingSignalWithLog', 'pingWithLog', 'statusBadge', 'uptimeBadge']);
    } finally {
      await mon.stop();
    }
  });
});

/** Type-checks `files` (in `out`) as `tsc --noEmit --strict` would (the standard library taken as read); the diagnostics as text. */
function typeCheck(files: string[]): string[] {
  const program = ts.createProgram(
    files.map((f) => join(out, f)),
    { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], types: [], skipLibCheck: true },
  );
  return ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? `${d.file.fileName.slice(out.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ` : ''}TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
}

describe('a client generated from the documents (openapi-typescript)', () => {
  it('type-checks under strict against the generated types of all three services', () => {
    expect(typeCheck(['tickets-client.ts', 'monitor-client.ts', 'marketplace-client.ts'])).toEqual([]);
  });

  it('fails the type-check for a field the document does not have and for a third element of a [stamp, node] tuple (the check can fail)', () => {
    const diagnostics = typeCheck(['wrong-client.ts']);
    expect(diagnostics.some((d) => d.startsWith('wrong-client.ts:') && /TS2339|TS2551/.test(d) && d.includes("'titel'")), diagnostics.join('\n')).toBe(true);
    // The stamp is generated as the pair it is (prefixItems with items: false), not an open array.
    expect(diagnostics.some((d) => d.includes('TS2493')), diagnostics.join('\n')).toBe(true);
    expect(diagnostics.some((d) => d.includes("'/api/nope'")), diagnostics.join('\n')).toBe(true);
  });

  it('runs against the servers it was generated from', async () => {
    const load = async (name: string): Promise<Record<string, (...args: unknown[]) => Promise<unknown>>> => {
      const js = ts.transpileModule(CLIENTS[`${name}.ts`]!, { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 } }).outputText;
      const file = join(out, `${name}.mjs`);
      writeFileSync(file, js);
      return (await import(pathToFileURL(file).href)) as Record<string, (...args: unknown[]) => Promise<unknown>>;
    };
    const t = await load('tickets-client');
    const created = (await t.createTicket!(urls.tickets, TICKETS_TOKEN, 'generated client')) as { id: string; title: string };
    expect(created.title).toBe('generated client');
    expect(await t.openTitles!(urls.tickets, TICKETS_TOKEN)).toContain('generated client');
    expect(await t.baseStamp!(urls.tickets, TICKETS_TOKEN)).toMatch(/^\d{4}-\d\d-\d\dT.+@.+/);
    const m = await load('monitor-client');
    expect(await m.targetLabels!(urls.monitor, MONITOR_TOKEN)).toEqual(['web']);
    expect(await m.version!(urls.monitor)).toBe(docs.monitor.info.version);
    expect(await m.statusBadge!(urls.monitor, MONITOR_TOKEN, 'web')).toMatch(/^<svg/);
    const k = await load('marketplace-client');
    expect(await k.validate!(urls.marketplace, 'NOT-A-KEY-0000')).toMatch(/^(NOT_FOUND|MALFORMED_KEY)$/);
    expect(await k.signingKeyIds!(urls.marketplace)).toEqual(expect.any(Array));
  });
});

/** A small fetch helper every client starts with; the types come from the generated `paths`. */
const FETCH = `
async function call<T>(url: string, init: { method?: string; token?: string; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = {};
  if (init.token !== undefined) headers.authorization = \`Bearer \${init.token}\`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  if (!res.ok) throw new Error(\`\${init.method ?? 'GET'} \${url}: HTTP \${res.status}\`);
  return (await res.json()) as T;
}
`;

/** The clients as a user writes them against the generated types (`<service>-api.ts`). */
const CLIENTS: Record<string, string> = {
  'tickets-client.ts': `import type { paths } from './tickets-api.js';
type NewTicket = paths['/tickets']['post']['requestBody']['content']['application/json'];
type Ticket = paths['/tickets']['post']['responses'][201]['content']['application/json'];
type ListQuery = NonNullable<paths['/tickets']['get']['parameters']['query']>;
type Page = paths['/tickets']['get']['responses'][200]['content']['application/json'];
type Pull = paths['/sync/pull']['get']['responses'][200]['content']['application/json'];
${FETCH}
export async function createTicket(base: string, token: string, title: string): Promise<Ticket> {
  const body: NewTicket = { title, priority: 'high', tags: ['api'] };
  return call<Ticket>(base + '/tickets', { method: 'POST', token, body });
}
export async function openTitles(base: string, token: string): Promise<string[]> {
  const query: ListQuery = { status: 'open', limit: 50 };
  const page = await call<Page>(base + '/tickets?' + new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString(), { token });
  return page.data.map((t) => t.title);
}
/** The first pulled ticket's base stamp, read through its [stamp, node] tuple type. */
export async function baseStamp(base: string, token: string): Promise<string | undefined> {
  const pull = await call<Pull>(base + '/sync/pull?since=1970-01-01T00:00:00.000Z', { token });
  const stamps = pull.tickets[0]?.field_stamps;
  if (stamps === undefined) return undefined;
  const [stamp, node]: [string, string] = stamps.base;
  return stamp + '@' + node;
}
`,
  'monitor-client.ts': `import type { paths } from './monitor-api.js';
type Statuses = paths['/api/status']['get']['responses'][200]['content']['application/json'];
type Health = paths['/api/health']['get']['responses'][200]['content']['application/json'];
${FETCH}
export async function targetLabels(base: string, token: string): Promise<string[]> {
  const all = await call<Statuses>(base + '/api/status', { token });
  return Object.values(all.targets).map((t) => t.label);
}
export async function statusBadge(base: string, token: string, target: string): Promise<string> {
  type Svg = paths['/api/badge/{target}/status.svg']['get']['responses'][200]['content']['image/svg+xml'];
  const res = await fetch(base + '/api/badge/' + encodeURIComponent(target) + '/status.svg', { headers: { authorization: 'Bearer ' + token } });
  const svg: Svg = await res.text();
  return svg;
}
export async function version(base: string): Promise<string> {
  const h: Health = await call<Health>(base + '/api/health');
  return h.version;
}
`,
  'marketplace-client.ts': `import type { paths } from './marketplace-api.js';
type Validate = paths['/api/v1/keys/validate']['post'];
type Jwks = paths['/api/v1/license/jwks.json']['get']['responses'][200]['content']['application/json'];
${FETCH}
export async function validate(base: string, key: string): Promise<Validate['responses'][200]['content']['application/json']['code']> {
  const body: Validate['requestBody']['content']['application/json'] = { key };
  const answer = await call<Validate['responses'][200]['content']['application/json']>(base + '/api/v1/keys/validate', { method: 'POST', body });
  return answer.code;
}
export async function signingKeyIds(base: string): Promise<string[]> {
  return (await call<Jwks>(base + '/api/v1/license/jwks.json')).keys.map((k) => k.kid);
}
`,
  // The negative control: each line below is wrong against the documents.
  'wrong-client.ts': `import type { paths } from './tickets-api.js';
import type { paths as monitor } from './monitor-api.js';
type Ticket = paths['/tickets']['post']['responses'][201]['content']['application/json'];
type Pull = paths['/sync/pull']['get']['responses'][200]['content']['application/json'];
export function misspelt(t: Ticket): string {
  return t.titel;
}
export function thirdOfPair(p: Pull): string | undefined {
  const stamps = p.tickets[0]?.field_stamps;
  return stamps ? stamps.base[2] : undefined;
}
export type NoSuchPath = monitor['/api/nope'];
`,
};
