// Soak (issue 35): each service as deployed (the built `mkt serve`, SQLite in a temp data dir,
// info logs on a pipe this process drains and counts) under a mixed load at a modest, fixed rate
// for `MKT_BENCH_SOAK_MINUTES` (default 10) minutes; `MKT_BENCH_SOAK_SERVICES` picks some of
// marketplace, monitor, tickets (default all, in that order). Each load is a paced loop of a few
// clients (a request per tick, never catching up in bursts), so the rate is a property of the
// server keeping up, not of how fast this machine can send. Every minute: the server's RSS
// (/proc/PID/status VmRSS, the median of the minute's samples, one every 5 s) and open descriptors
// (/proc/PID/fd, the fewest of the minute's samples), requests of each kind and the errors
// (non-2xx, connection errors, error-level log lines). At the end, per service: growth of
// RSS and descriptors from minute 2 (after warm-up) to the last (goal < 10 %), the spread of the
// per-minute request count over the same minutes (goal < 10 %) and the total errors (goal 0),
// each marked met or NOT met. A bench prints; it does not fail on a goal.
// Run only by name (`npm run bench -- soak`): bench/run.ts leaves it out of a run of all.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { signedIn } from './sync.js';
import { median } from './_util.js';

const MINUTE = 60_000;
const MINUTES = Math.max(1, Number(process.env.MKT_BENCH_SOAK_MINUTES ?? 10));
/**
 * `MKT_BENCH_SOAK_HEAP_DIR`: the measured server writes a heap snapshot there at the end of minute
 * 2 and of the last minute (SIGUSR2), to compare in Chrome's DevTools (Memory, Comparison) when
 * RSS grows. Writing one stops the server for a second or more: that minute's rate dips.
 */
const HEAP_DIR = process.env.MKT_BENCH_SOAK_HEAP_DIR;
/** `MKT_BENCH_SOAK_SKIP=note_put,git_push_notes`: loads left out by name, to find which one grows the server. */
const SKIP = new Set((process.env.MKT_BENCH_SOAK_SKIP ?? '').split(',').map((s) => s.trim()).filter(Boolean));
/** Node flags for the daemons: the heap snapshots' when asked for, and any given (e.g. a young generation's size) to try. */
const HEAP_FLAGS = [...(HEAP_DIR ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${HEAP_DIR}`] : []), ...(process.env.MKT_BENCH_SOAK_NODE_FLAGS ?? '').split(' ').filter(Boolean)];
const SERVICES = ['marketplace', 'monitor', 'tickets'] as const;
type Service = (typeof SERVICES)[number];
const GROWTH_GOAL = 0.1;
const SPREAD_GOAL = 0.1;
const mkt = join(import.meta.dirname, '..', 'bin', 'mkt');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const pct = (x: number): string => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)} %`;
const verdict = (met: boolean): string => (met ? 'met' : 'NOT met');

// ---- the server process and its log ------------------------------------------------------------

/** A built `mkt serve` child whose stdout (JSON log lines) is drained and counted, and stderr echoed. */
interface Daemon {
  url: string;
  pid: number;
  /** Log lines at error level or above (pino level >= 50) since the last take. */
  takeErrorLines(): number;
  /** How many log lines whose msg is `msg` since the last take of it. */
  takeMessages(msg: string): number;
  /** The first error lines, for the report. */
  firstErrors: string[];
  stop(): Promise<void>;
}

function serve(label: string, args: string[], env: NodeJS.ProcessEnv, nodeFlags: string[] = []): Promise<Daemon> {
  const child = spawn(process.execPath, [...nodeFlags, mkt, 'serve', ...args, '--port', '0'], { env: { ...process.env, MKT_LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let errors = 0;
  const messages = new Map<string, number>();
  const firstErrors: string[] = [];
  let rest = '';
  let stopping = false;
  const note = (line: string): void => {
    if (firstErrors.length < 5) firstErrors.push(line.slice(0, 500));
  };
  child.stderr.on('data', (c: Buffer) => {
    for (const line of c.toString().split('\n')) if (line.trim()) console.log(`  [${label} stderr] ${line.slice(0, 300)}`);
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      const lines = (rest + c.toString()).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const m = /^listening on (http:\/\/\S+)$/.exec(line);
        if (m) {
          resolve({
            url: m[1]!,
            pid: child.pid!,
            firstErrors,
            takeErrorLines: () => {
              const n = errors;
              errors = 0;
              return n;
            },
            takeMessages: (msg) => {
              const n = messages.get(msg) ?? 0;
              messages.set(msg, 0);
              return n;
            },
            async stop() {
              stopping = true;
              child.kill('SIGTERM');
              const code = await exited;
              if (code !== 0) console.log(`  ${label} exited ${code} on SIGTERM`);
            },
          });
          continue;
        }
        if (!line.startsWith('{')) continue;
        let rec: { level?: number; msg?: string };
        try {
          rec = JSON.parse(line) as typeof rec;
        } catch {
          continue;
        }
        if (typeof rec.msg === 'string') messages.set(rec.msg, (messages.get(rec.msg) ?? 0) + 1);
        if ((rec.level ?? 0) >= 50) {
          errors++;
          note(line);
        }
      }
    });
    void exited.then((code) => {
      if (!stopping) console.log(`  ${label} exited ${code} during the soak`);
      reject(new Error(`${label} exited (${code}) before listening`));
    });
  });
}

/** RSS (MiB) and open descriptors of a process, from /proc. */
function footprint(pid: number): { rssMiB: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { rssMiB: kb / 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
}

// ---- the load -------------------------------------------------------------------------------

/** Counts of one minute, by kind. */
class Tally {
  ok = new Map<string, number>();
  non2xx = new Map<string, number>();
  conn = new Map<string, number>();
  /** The first failures of the whole soak, for the report (kind, status, body). */
  samples: string[] = [];
  add(map: Map<string, number>, kind: string, n = 1): void {
    map.set(kind, (map.get(kind) ?? 0) + n);
  }
  take(): { ok: Map<string, number>; non2xx: Map<string, number>; conn: Map<string, number> } {
    const out = { ok: this.ok, non2xx: this.non2xx, conn: this.conn };
    this.ok = new Map();
    this.non2xx = new Map();
    this.conn = new Map();
    return out;
  }
  sample(s: string): void {
    if (this.samples.length < 8) this.samples.push(s.slice(0, 400));
  }
}

/** One request of a load: its status and (for the report of a failure) its body. */
type Op = (i: number) => Promise<{ status: number; body?: string }>;

interface Kind {
  name: string;
  /** Requests a second, over all its clients. */
  perSecond: number;
  clients: number;
  op: Op;
}

/**
 * `clients` loops, each sending one request per tick of clients/perSecond seconds and waiting for
 * its answer; a tick missed while the answer was late is skipped, not made up, so a server that
 * falls behind shows as a lower rate.
 */
async function paced(kind: Kind, tally: Tally, until: number): Promise<void> {
  const period = (1000 * kind.clients) / kind.perSecond;
  let n = 0;
  await Promise.all(
    Array.from({ length: kind.clients }, async (_, c) => {
      let next = performance.now() + (c * period) / kind.clients;
      while (next < until) {
        await sleep(Math.max(0, next - performance.now()));
        const i = n++;
        try {
          const r = await kind.op(i);
          if (r.status >= 200 && r.status < 300) tally.add(tally.ok, kind.name);
          else {
            tally.add(tally.non2xx, kind.name);
            tally.sample(`${kind.name}: HTTP ${r.status} ${r.body ?? ''}`);
          }
        } catch (err) {
          tally.add(tally.conn, kind.name);
          tally.sample(`${kind.name}: ${(err as Error).message}`);
        }
        next = Math.max(next + period, performance.now());
      }
    }),
  );
}

/** One HTTP request with a JSON body (when given); the body is always read to its end. */
async function call(base: string, method: string, path: string, opts: { token?: string; body?: unknown } = {}): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(`${base}${path}`, { method: method as 'GET', headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  return { status: res.statusCode, body: await res.body.text() };
}

/** `mkt ...` through the built binary, before the server starts (so a synchronous run blocks nothing). */
function cli(args: string[], env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(process.execPath, [mkt, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`mkt ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** git with no user or system config; asynchronous, so the load's clients keep their ticks. */
function git(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const base = { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', GIT_AUTHOR_NAME: 'Soak', GIT_AUTHOR_EMAIL: 'soak@example.com', GIT_COMMITTER_NAME: 'Soak', GIT_COMMITTER_EMAIL: 'soak@example.com' };
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: { ...base, ...env }, encoding: 'utf8' }, (err, stdout, stderr) => (err ? reject(new Error(`git ${args[0]}: ${stderr.trim()}`)) : resolve(stdout.trim())));
  });
}

/** What a service's soak runs: its daemon, the loads, and anything to stop after it. */
interface Setup {
  daemon: Daemon;
  kinds: Kind[];
  /** Counts per minute that are not requests the bench sends (checks the monitor makes, peer syncs). */
  extra?: () => Map<string, number>;
  /** Error-level log lines of other processes of the setup (a peer node). */
  extraErrors?: () => number;
  /** A last check after the load, before the stop (the peer caught up). */
  finish?: () => Promise<void>;
  stop(): Promise<void>;
}

// ---- marketplace: notes (API and git push), license keys, sync ----------------------------------

async function marketplace(dir: string): Promise<Setup> {
  const OWNER = 'soak';
  cli(['admin', '--data-dir', dir, 'migrate']);
  cli(['admin', '--data-dir', dir, 'user', 'add', OWNER, '--email', 'soak@example.com']);
  const token = /\bmkt_[A-Za-z0-9_-]+/.exec(cli(['admin', '--data-dir', dir, 'token', 'create', OWNER, '--scope', 'push']))?.[0];
  if (!token) throw new Error('mkt admin token create printed no token');
  cli(['admin', '--data-dir', dir, 'repo', 'create', `${OWNER}/notes-api`]);
  cli(['admin', '--data-dir', dir, 'repo', 'create', `${OWNER}/notes-git`]);
  cli(['admin', '--data-dir', dir, 'item', 'create', 'soak', '--name', 'Soak', '--max-activations', '1000', '--verification', 'on']);
  const key = (JSON.parse(cli(['admin', '--data-dir', dir, 'key', 'issue', 'soak', '--json'])) as { key: string }[])[0]!.key;

  const daemon = await serve('marketplace', ['marketplace', '--data-dir', dir], {}, HEAP_FLAGS);
  try {
    // Two local repositories of 40 commits pushed to the hosted ones: notes-api's notes are written
    // through the API, notes-git's by git push (one writer each, so every push is a fast-forward).
    const basic = Buffer.from(`${OWNER}:${token}`).toString('base64');
    const gitAuth = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` };
    const commits: Record<string, string[]> = {};
    const work = join(dir, '..', 'work');
    for (const repo of ['notes-api', 'notes-git']) {
      const local = join(work, repo);
      mkdirSync(local, { recursive: true });
      await git(local, ['init', '-q', '-b', 'main']);
      commits[repo] = [];
      for (let i = 0; i < 40; i++) {
        writeFileSync(join(local, 'file.txt'), `version ${i}\n`);
        await git(local, ['add', 'file.txt']);
        await git(local, ['commit', '-q', '-m', `commit ${i}`]);
        commits[repo].push(await git(local, ['rev-parse', 'HEAD']));
      }
      await git(local, ['push', '-q', `${daemon.url}/${OWNER}/${repo}.git`, 'main'], gitAuth);
    }
    const gitLocal = join(work, 'notes-git');
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
    const notes = `/api/git/${OWNER}/notes-api/notes`;
    const api = commits['notes-api']!;
    for (let i = 0; i < api.length; i++) {
      const r = await call(daemon.url, 'PUT', `${notes}/${api[i]}`, { token, body: { content: `note ${i}: ${words[i % words.length]}\n` } });
      if (r.status !== 200) throw new Error(`seed note: HTTP ${r.status} ${r.body}`);
    }
    // Sync: an app, a user signed in, a device and a key (bench/sync.ts's signedIn).
    const sync = await signedIn(daemon, dir);
    const device = await sync.call<{ id: string }>('/api/v1/sync/devices', { name: 'soak laptop' });
    await sync.call('/api/v1/sync/keys', { encrypted_key: 'sealed-envelope', expected_key_version: 0 }, 'PUT');
    const { key_id } = await sync.call<{ key_id: number }>('/api/v1/sync/keys', undefined, 'GET');
    const data = Buffer.alloc(96, 7).toString('base64');
    // Note writes go to commits 0-19 (each client its own, so no two write one note at once); reads to 20-39.
    const writers = 4;
    let cursor = 0;
    const kinds: Kind[] = [
      { name: 'note_put', perSecond: 4, clients: writers, op: (i) => call(daemon.url, 'PUT', `${notes}/${api[(i % writers) + writers * (Math.floor(i / writers) % 5)]}`, { token, body: { content: `soak write ${i}: ${words[i % words.length]}\n` } }) },
      { name: 'note_get', perSecond: 8, clients: 2, op: (i) => call(daemon.url, 'GET', `${notes}/${api[20 + (i % 20)]}`, { token }) },
      { name: 'note_search', perSecond: 4, clients: 2, op: (i) => call(daemon.url, 'GET', `${notes}/search?q=${words[i % words.length]}`, { token }) },
      {
        name: 'git_push_notes',
        perSecond: 0.2,
        clients: 1,
        op: async (i) => {
          const commit = commits['notes-git']![i % 40]!;
          await git(gitLocal, ['notes', 'add', '-f', '-m', `pushed note ${i}: ${words[i % words.length]}`, commit]);
          await git(gitLocal, ['push', '-q', `${daemon.url}/${OWNER}/notes-git.git`, 'refs/notes/commits'], gitAuth);
          return { status: 200 };
        },
      },
      { name: 'license_validate', perSecond: 4, clients: 2, op: (i) => call(daemon.url, 'POST', '/api/v1/keys/validate', { body: { key, machine_id: `soak-${i % 8}`, activate: true } }) },
      { name: 'license_verify', perSecond: 4, clients: 2, op: (i) => call(daemon.url, 'POST', '/api/v1/license/verify', { body: { key, machine_fingerprint: `soak-${i % 8}` } }) },
      { name: 'sync_push', perSecond: 2, clients: 1, op: (i) => call(daemon.url, 'POST', '/api/v1/sync/push', { token: sync.token, body: { device_id: device.id, batch_id: `soak-${i}`, key_id, entries: Array.from({ length: 10 }, (_, k) => ({ table: 'notes', op: 'update', row_id: `row-${(i * 10 + k) % 500}`, timestamp: new Date(1_767_225_600_000 + i * 10 + k).toISOString(), data })) } }) },
      {
        name: 'sync_pull',
        perSecond: 4,
        clients: 1,
        op: async () => {
          const r = await call(daemon.url, 'POST', '/api/v1/sync/pull', { token: sync.token, body: { cursor, limit: 100 } });
          if (r.status === 200) cursor = (JSON.parse(r.body) as { cursor: number }).cursor;
          return r;
        },
      },
    ];
    return { daemon, kinds, stop: () => daemon.stop() };
  } catch (err) {
    await daemon.stop();
    throw err;
  }
}

// ---- monitor: HTTP targets checked every second, heartbeats, reads --------------------------------

async function monitor(dir: string): Promise<Setup> {
  const TOKEN = 'soak-monitor-token';
  const TARGETS = 5;
  let checks = 0;
  const target = createServer((req, res) => {
    checks++;
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/health`;
  const lines = ['name: soak', `token: ${TOKEN}`, 'rate_limit: { requests: 1000000 }', 'targets:'];
  for (let i = 0; i < TARGETS; i++) lines.push(`  web-${i}:`, `    url: ${targetUrl}`, '    interval: 1s');
  lines.push('  cron-job:', '    interval: 10m', '    heartbeat: { period: 1m, grace: 1m, ping_key: soak-ping-key-0001 }');
  writeFileSync(join(dir, 'monitor.yaml'), lines.join('\n') + '\n');
  const daemon = await serve('monitor', ['monitor', '--data-dir', dir], {}, HEAP_FLAGS);
  const get = (path: string) => call(daemon.url, 'GET', path, { token: TOKEN });
  const web = (i: number): string => `web-${i % TARGETS}`;
  const kinds: Kind[] = [
    { name: 'ping_get', perSecond: 4, clients: 2, op: () => call(daemon.url, 'GET', '/ping/soak-ping-key-0001') },
    { name: 'ping_post', perSecond: 2, clients: 1, op: (i) => call(daemon.url, 'POST', '/ping/soak-ping-key-0001/0', { body: { run: i, log: 'backup finished' } }) },
    { name: 'status_all', perSecond: 4, clients: 2, op: () => get('/api/status') },
    { name: 'status_one', perSecond: 4, clients: 2, op: (i) => get(`/api/status/${web(i)}`) },
    { name: 'report', perSecond: 2, clients: 1, op: (i) => get(`/api/report/${web(i)}`) },
    { name: 'trends', perSecond: 2, clients: 1, op: (i) => get(`/api/trends/${web(i)}?hours=1&bucket_minutes=5`) },
    { name: 'badge_uptime', perSecond: 2, clients: 1, op: (i) => get(`/api/badge/${web(i)}/uptime.svg`) },
  ];
  return {
    daemon,
    kinds,
    extra: () => {
      const n = checks;
      checks = 0;
      return new Map([['checks_served', n]]);
    },
    async stop() {
      await daemon.stop();
      await new Promise<void>((r) => target.close(() => r()));
    },
  };
}

// ---- tickets: creates, patches, reads, lists, searches, and a peer syncing every second -----------

async function tickets(dir: string): Promise<Setup> {
  const TOKEN = 'soak-tickets-token-0123456789';
  const env = { MKT_TICKETS_TOKEN: TOKEN };
  const main = join(dir, 'main');
  const second = join(dir, 'peer');
  mkdirSync(main);
  mkdirSync(second);
  const daemon = await serve('tickets', ['tickets', '--data-dir', main], env, HEAP_FLAGS);
  let peer: Daemon | undefined;
  try {
    peer = await serve('tickets peer', ['tickets', '--data-dir', second, '--peer', daemon.url, '--sync-interval', '1'], env);
    const words = ['printer', 'login', 'invoice', 'refund', 'vpn', 'laptop', 'password', 'delivery'];
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await call(daemon.url, 'POST', '/tickets', { token: TOKEN, body: { title: `seed ${i} ${words[i % words.length]}`, description: 'seeded before the soak' } });
      if (r.status !== 201 && r.status !== 200) throw new Error(`seed ticket: HTTP ${r.status} ${r.body}`);
      ids.push((JSON.parse(r.body) as { id: string }).id);
    }
    const recent = (i: number): string => ids[ids.length - 1 - (i % Math.min(ids.length, 50))]!;
    const statuses = ['open', 'pending', 'on_hold', 'solved'];
    const kinds: Kind[] = [
      {
        name: 'create',
        perSecond: 3,
        clients: 2,
        op: async (i) => {
          const r = await call(daemon.url, 'POST', '/tickets', { token: TOKEN, body: { title: `soak ${i} ${words[i % words.length]} issue`, description: `ticket ${i} of the soak: ${words[(i * 3) % words.length]}`, priority: 'normal', tags: [`t${i % 10}`] } });
          if (r.status < 300) {
            ids.push((JSON.parse(r.body) as { id: string }).id);
            if (ids.length > 1000) ids.splice(0, 500);
          }
          return r;
        },
      },
      { name: 'patch', perSecond: 3, clients: 2, op: (i) => call(daemon.url, 'PATCH', `/tickets/${recent(i + 7)}`, { token: TOKEN, body: { status: statuses[i % statuses.length], add_tags: [`p${i % 5}`] } }) },
      { name: 'get', perSecond: 6, clients: 2, op: (i) => call(daemon.url, 'GET', `/tickets/${recent(i)}`, { token: TOKEN }) },
      { name: 'list', perSecond: 3, clients: 1, op: (i) => call(daemon.url, 'GET', `/tickets?limit=20${i % 2 ? '&status=open' : ''}`, { token: TOKEN }) },
      { name: 'search', perSecond: 3, clients: 1, op: (i) => call(daemon.url, 'GET', `/tickets?limit=20&search=${words[i % words.length]}`, { token: TOKEN }) },
    ];
    const p = peer;
    const count = async (url: string): Promise<number> => (JSON.parse((await call(url, 'GET', '/tickets?limit=1', { token: TOKEN })).body) as { count: number }).count;
    return {
      daemon,
      kinds,
      async finish() {
        // Every ticket reaches the peer: within a minute of the load's end (it syncs every second).
        const want = await count(daemon.url);
        let got = await count(p.url);
        for (let i = 0; i < 60 && got !== want; i++) {
          await sleep(1000);
          got = await count(p.url);
        }
        console.log(`  tickets peer: ${got} of the node's ${want} tickets after the load (${got === want ? 'caught up' : 'NOT caught up'})`);
      },
      extra: () => new Map([['peer_syncs', p.takeMessages('synced with peer')]]),
      extraErrors: () => p.takeErrorLines(),
      async stop() {
        await p.stop();
        await daemon.stop();
      },
    };
  } catch (err) {
    await peer?.stop();
    await daemon.stop();
    throw err;
  }
}

// ---- the soak of one service ------------------------------------------------------------------

interface Minute {
  rssMiB: number;
  fds: number;
  requests: number;
  errors: number;
}

const SETUPS: Record<Service, (dir: string) => Promise<Setup>> = { marketplace, monitor, tickets };

async function soak(service: Service): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), `mkt-bench-soak-${service}-`));
  const dir = join(root, 'data');
  mkdirSync(dir);
  const setup = await SETUPS[service](dir);
  setup.kinds = setup.kinds.filter((k) => !SKIP.has(k.name));
  const tally = new Tally();
  const minutes: Minute[] = [];
  try {
    const scheduled = setup.kinds.reduce((s, k) => s + k.perSecond * 60, 0);
    console.log(`\n-- ${service}: ${MINUTES} min, pid ${setup.daemon.pid}, data dir ${dir}; ${setup.kinds.length} kinds, ${scheduled.toFixed(0)} requests a minute scheduled: ${setup.kinds.map((k) => `${k.name} ${k.perSecond}/s`).join(', ')} --`);
    setup.daemon.takeErrorLines();
    setup.extraErrors?.();
    setup.extra?.();
    const start = performance.now();
    const until = start + MINUTES * MINUTE;
    const loads = Promise.all(setup.kinds.map((k) => paced(k, tally, until)));
    // RSS and descriptors every 5 s; a minute reports the median of its samples, so one sample
    // taken just before a collection does not decide a minute's figure.
    let samples: { rssMiB: number; fds: number }[] = [];
    const sampler = setInterval(() => samples.push(footprint(setup.daemon.pid)), 5000);
    for (let m = 1; m <= MINUTES; m++) {
      if (m < MINUTES) await sleep(start + m * MINUTE - performance.now());
      else await loads; // the last minute ends when its last request has been answered
      samples.push(footprint(setup.daemon.pid));
      // Descriptors: the fewest the minute held. A leak raises that floor; the median swings with
      // the git processes (three pipes each, ended after 10 s idle) and sockets open at the moment.
      const fp = { rssMiB: median(samples.map((x) => x.rssMiB)), fds: Math.min(...samples.map((x) => x.fds)), fdsMost: Math.max(...samples.map((x) => x.fds)) };
      samples = [];
      if (m === MINUTES) clearInterval(sampler);
      const t = tally.take();
      const logErrors = setup.daemon.takeErrorLines() + (setup.extraErrors?.() ?? 0);
      const sum = (map: Map<string, number>): number => [...map.values()].reduce((a, b) => a + b, 0);
      const requests = sum(t.ok) + sum(t.non2xx) + sum(t.conn);
      const errors = sum(t.non2xx) + sum(t.conn) + logErrors;
      minutes.push({ rssMiB: fp.rssMiB, fds: fp.fds, requests, errors });
      const byKind = setup.kinds.map((k) => `${k.name} ${(t.ok.get(k.name) ?? 0) + (t.non2xx.get(k.name) ?? 0) + (t.conn.get(k.name) ?? 0)}`);
      const extra = [...(setup.extra?.() ?? new Map<string, number>())].map(([k, v]) => `${k} ${v}`);
      console.log(
        `${service} min ${String(m).padStart(2)}: RSS ${fp.rssMiB.toFixed(1)} MiB (median of the minute), fds ${fp.fds} (fewest of the minute; ${fp.fdsMost} at most), ${requests} requests (${[...byKind, ...extra].join(', ')}), ` +
          `errors ${errors} (non-2xx ${sum(t.non2xx)}, connection ${sum(t.conn)}, error log lines ${logErrors})`,
      );
      if (HEAP_DIR && (m === 2 || m === MINUTES)) {
        // After the minute's figures: writing a snapshot doubles the server's RSS for a while.
        process.kill(setup.daemon.pid, 'SIGUSR2');
        console.log(`  ${service}: heap snapshot of minute ${m} asked for (in ${HEAP_DIR}); RSS figures after it are the snapshot's, not the load's`);
      }
    }
    await setup.finish?.();
  } finally {
    await setup.stop();
    rmSync(root, { recursive: true, force: true });
  }
  for (const s of tally.samples) console.log(`  failure: ${s}`);
  for (const s of setup.daemon.firstErrors) console.log(`  error log line: ${s}`);
  return summary(service, minutes);
}

/** The verdicts of one service: growth and spread from minute 2 (minute 1 when the soak is 1 minute). */
function summary(service: Service, minutes: Minute[]): string {
  const from = minutes[Math.min(1, minutes.length - 1)]!;
  const last = minutes[minutes.length - 1]!;
  const steady = minutes.slice(Math.min(1, minutes.length - 1));
  const rss = (last.rssMiB - from.rssMiB) / from.rssMiB;
  const fds = (last.fds - from.fds) / from.fds;
  const rates = steady.map((m) => m.requests);
  const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
  const spread = (Math.max(...rates) - Math.min(...rates)) / mean;
  const errors = minutes.reduce((a, m) => a + m.errors, 0);
  const span = `min ${minutes.indexOf(from) + 1} to ${minutes.length}`;
  return [
    `${service} (${minutes.length} min)${minutes.length < 3 ? ': too short to show growth (growth and spread need minutes after minute 2)' : ':'}`,
    `  RSS ${from.rssMiB.toFixed(1)} -> ${last.rssMiB.toFixed(1)} MiB (${span}): ${pct(rss)} (goal < 10 %: ${verdict(rss < GROWTH_GOAL)})`,
    `  fds ${from.fds} -> ${last.fds} (${span}): ${pct(fds)} (goal < 10 %: ${verdict(fds < GROWTH_GOAL)})`,
    `  requests a minute ${Math.min(...rates)}..${Math.max(...rates)} (${span}), spread ${(100 * spread).toFixed(1)} % of the mean (goal < 10 %: ${verdict(spread < SPREAD_GOAL)})`,
    `  errors ${errors} (goal 0: ${verdict(errors === 0)})`,
  ].join('\n');
}

export async function run(): Promise<void> {
  const picked = (process.env.MKT_BENCH_SOAK_SERVICES ?? SERVICES.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = picked.filter((s) => !(SERVICES as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`MKT_BENCH_SOAK_SERVICES: unknown ${unknown.join(', ')}; services: ${SERVICES.join(', ')}`);
  const results: string[] = [];
  for (const s of SERVICES.filter((x) => picked.includes(x))) results.push(await soak(s));
  console.log(`\n== soak summary (${MINUTES} min each; growth and spread from minute 2, after warm-up) ==\n${results.join('\n')}`);
}
