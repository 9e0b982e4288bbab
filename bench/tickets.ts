// Ticket tracker at scale: a node holding 1,000,000 tickets (`MKT_BENCH_TICKETS` for fewer),
// served by the built binary (`mkt serve tickets`, logging at info to a pipe this process reads).
// Measures list pages and search at one connection (p99, goal < 20 ms; bare node:http answering
// the same page beside it), what `count` costs (the store in-process, before the node starts),
// POST /tickets against bare node:http and the framework floor, and a full sync of every ticket
// to an empty node started as a real process (goal < 60 s; its RSS sampled); issue 34's a ticket
// with 100 comments read and synced (`comments`, a node of its own) and the database with 10 % of
// the tickets deleted and purged (`purge`, bench/_tickets-comments-purge.ts). Sections:
// `MKT_BENCH_ONLY=list,search,count,create,sync,comments` (the default), and `purge` (minutes at a
// million: 100,000 deletes one at a time and a VACUUM, so only when asked for);
// `MKT_BENCH_PROFILE=source|target` runs that node under --cpu-prof and prints its hottest frames. The seeded database is cached in the temp
// dir, keyed by the seed code and the store's source (`MKT_BENCH_TICKETS_FRESH=1` re-seeds).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteTicketStore, ftsQuery, type ListPosition, type TicketFilter } from '../src/store/tickets.js';
import { CHANNELS, PRIORITIES, type Ticket } from '../src/schemas/tickets.js';
import { encodeCursor } from '../daemon/services/tickets/list-cursor.js';
import { commentsSection, purgeSection } from './_tickets-comments-purge.js';
import { bareServer, BENCH_TICKETS_TOKEN, frameName, mulberry32, printRow, references, serveBuilt, shortUrl, topShares, warmLoad, type Load, type ProfileFrame, type ServerProcess } from './_util.js';

const N = Number(process.env.MKT_BENCH_TICKETS ?? 1_000_000);
const ONLY = (process.env.MKT_BENCH_ONLY ?? 'list,search,count,create,sync,comments').split(',');
/** The sections that serve the seeded database from a node of its own. */
const ON_SOURCE = ['list', 'search', 'count', 'create', 'sync'];
const PROFILE = process.env.MKT_BENCH_PROFILE;
const TOKEN = BENCH_TICKETS_TOKEN;
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const GOAL_P99_MS = 20;
const GOAL_SYNC_MS = 60_000;
const BATCH = 5000;
const MiB = 1024 * 1024;
/** How long the empty node may take before the bench gives up on it (`MKT_BENCH_SYNC_LIMIT_S`). */
const SYNC_LIMIT_MS = Number(process.env.MKT_BENCH_SYNC_LIMIT_S ?? 1200) * 1000;

// ---- seed data: support-desk tickets whose words follow a Zipf law over 50,000 words ----------

/** Words a support desk uses, most frequent first; after them come made-up words, ever rarer. */
const COMMON = 'the to and is not when after with on for error printer login password email invoice account payment refund order laptop screen network vpn access update crash slow report install license phone delivery address'.split(' ');
const SYLLABLES = 'ba be bi bo bu da de di do du fa fe fi fo fu ga ge gi go gu ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo'.split(' ');
const VOCABULARY = 50_000;

/** The word of Zipf rank `r`: made-up words are three syllables, so none is a prefix of another made-up one. */
function word(r: number): string {
  if (r < COMMON.length) return COMMON[r]!;
  const i = r - COMMON.length;
  const s = SYLLABLES.length;
  return SYLLABLES[i % s]! + SYLLABLES[Math.floor(i / s) % s]! + SYLLABLES[Math.floor(i / s / s) % s]!;
}

/** Search words by rank: 0.01 %, 0.9 %, 19 % and 92 % of a million tickets hold them (the bench prints the counts). */
const SEARCHES = [
  { label: 'rare word', rank: 30_000 },
  { label: 'uncommon word', rank: 300 },
  { label: 'common word', rank: 12 },
  { label: 'most common word', rank: 0 },
];

/** A deterministic stream of seed tickets, oldest change first, each with a distinct `updated_at`. */
function seedTickets(n: number): () => Ticket {
  const rand = mulberry32(42);
  const cdf = new Float64Array(VOCABULARY);
  let sum = 0;
  for (let r = 0; r < VOCABULARY; r++) cdf[r] = sum += 1 / (r + 1);
  const words = Array.from({ length: VOCABULARY }, (_, r) => word(r));
  const pick = (): string => {
    const x = rand() * sum;
    let lo = 0;
    let hi = VOCABULARY - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return words[lo]!;
  };
  const text = (min: number, max: number): string => Array.from({ length: min + Math.floor(rand() * (max - min + 1)) }, pick).join(' ');
  const weighted = <T>(items: readonly T[], weights: number[]): T => {
    let x = rand() * weights.reduce((a, b) => a + b, 0);
    for (let i = 0; i < items.length; i++) if ((x -= weights[i]!) < 0) return items[i]!;
    return items[items.length - 1]!;
  };
  const hex = (): string => Math.floor(rand() * 2 ** 32).toString(16).padStart(8, '0');
  const start = Date.parse('2024-01-01T00:00:00.000Z');
  const step = Math.floor((Date.parse('2026-10-01T00:00:00.000Z') - start) / n);
  const node = 'f00dcafe-0000-4000-8000-5eed5eed5eed';
  let i = 0;
  return () => {
    const age = i / n;
    const updated = start + i * step + Math.floor(rand() * (step / 2));
    const h = hex() + hex() + hex() + hex();
    const id = `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
    i++;
    // Old tickets are mostly closed; the newest 3 % are the open queue.
    const status = age > 0.97 ? weighted(['open', 'pending', 'on_hold', 'solved'], [50, 25, 10, 15]) : weighted(['closed', 'solved', 'on_hold', 'open', 'pending'], [80, 17, 1.5, 1, 0.5]);
    const stamp = new Date(updated).toISOString();
    return {
      id,
      short_id: id.slice(0, 8),
      title: text(3, 7),
      description: text(12, 40),
      status,
      priority: weighted(PRIORITIES, [25, 55, 15, 5]),
      channel: weighted(CHANNELS, [45, 25, 15, 10, 5]),
      source: weighted(['support-desk', 'web-form', 'import'], [70, 20, 10]),
      requester: `user${Math.floor(rand() * 200_000)}@example.com`,
      assignee: rand() < 0.1 ? null : `agent${Math.floor(rand() * 40)}@example.com`,
      tags: Array.from(new Set(Array.from({ length: Math.floor(rand() * 4) }, () => `tag${Math.floor(rand() * 30)}`))),
      created_at: new Date(Math.max(0, updated - Math.floor(rand() * 30 * 86_400_000))).toISOString(),
      updated_at: stamp,
      updated_by: node,
      field_stamps: { base: [stamp, node] },
    } as Ticket;
  };
}

/** A database holding `n` seed tickets: from the cache when its key matches, else seeded and cached. */
async function seededDatabase(n: number): Promise<string> {
  const root = join(tmpdir(), 'mkt-bench-tickets-cache');
  const sources = ['../src/store/tickets.ts', '../src/store/sqlite.ts'].map((f) => readFileSync(join(import.meta.dirname, f), 'utf8'));
  const key = createHash('sha256').update([n, seedTickets.toString(), word.toString(), COMMON.join(), VOCABULARY, seededDatabase.toString(), ...sources].join('\0')).digest('hex').slice(0, 16);
  const file = join(root, `${key}-${n}.db`);
  if (existsSync(file) && process.env.MKT_BENCH_TICKETS_FRESH !== '1') {
    console.log(`seed: ${n} tickets from the cache (${file}, key of the seed code and the store's source)`);
    return file;
  }
  // A stale database of this size goes (with any -wal and -shm a reader left); other sizes stay.
  mkdirSync(root, { recursive: true });
  for (const f of readdirSync(root)) if (/^[0-9a-f]+-(\d+)\.db/.exec(f)?.[1] === String(n) || f === 'building') rmSync(join(root, f), { recursive: true, force: true });
  const building = join(root, 'building', 'tickets.db');
  const store = new SqliteTicketStore(building);
  const next = seedTickets(n);
  const started = performance.now();
  for (let done = 0; done < n; ) {
    const batch = Array.from({ length: Math.min(BATCH, n - done) }, next);
    const r = await store.merge(batch, (t) => ({ kind: 'store', ticket: t, asSent: false }));
    if (r.accepted !== batch.length) throw new Error(`seed: ${r.rejected} tickets refused`);
    done += batch.length;
  }
  await store.close(); // the last connection closed checkpoints the WAL into the file
  const ms = performance.now() - started;
  renameSync(building, file);
  rmSync(join(root, 'building'), { recursive: true, force: true });
  console.log(`seed: ${n} tickets in ${(ms / 1000).toFixed(1)} s (${((ms * 1000) / n).toFixed(0)} µs a ticket, store.merge in ${BATCH}-ticket transactions), ${(statSync(file).size / MiB).toFixed(0)} MiB`);
  return file;
}

// ---- measuring ---------------------------------------------------------------------------

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One GET on the bench's single keep-alive connection. */
function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: auth }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

interface Latency {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

function latency(ms: number[]): Latency {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  return { n: s.length, p50: at(0.5), p99: at(0.99), max: s[s.length - 1]! };
}

/**
 * Sequential requests at one connection, `paths` taken in turn: 20 not counted (a node just
 * started is still compiling), then `samples`, or as many as fit in `budgetMs` (at least 10).
 */
async function sequential(base: string, paths: string[], samples: number, budgetMs = 20_000): Promise<Latency & { body: string }> {
  let body = '';
  for (let i = 0; i < 20; i++) await get(base + paths[i % paths.length]);
  const times: number[] = [];
  const until = performance.now() + budgetMs;
  for (let i = 0; i < samples && (i < 10 || performance.now() < until); i++) {
    const t = performance.now();
    const r = await get(base + paths[i % paths.length]);
    times.push(performance.now() - t);
    if (r.status !== 200) throw new Error(`${paths[i % paths.length]}: HTTP ${r.status} ${r.body.slice(0, 200)}`);
    if (i === 0) body = r.body;
  }
  return { ...latency(times), body };
}

const f1 = (x: number): string => x.toFixed(1);

function latencyRow(name: string, l: Latency, extra: string, goal = true): void {
  const verdict = goal ? `  goal p99 < ${GOAL_P99_MS} ms: ${l.p99 < GOAL_P99_MS ? 'met' : 'NOT MET'}` : '';
  console.log(`${name.padEnd(40)} n=${String(l.n).padStart(4)}  p50 ${f1(l.p50).padStart(6)}  p99 ${f1(l.p99).padStart(6)}  max ${f1(l.max).padStart(6)} ms  ${extra}${verdict}`);
}

/** What the bench needs to know of the data, read from the file before the node starts. */
interface Known {
  /** Positions at 10 %, 50 % and 90 % of the newest-first order, as next_cursor values. */
  deep: string[];
  /** Every match of each search, counted in FTS5 (the API may cap its count). */
  matches: Map<string, number>;
}

function known(file: string): Known {
  const db = new Database(file, { readonly: true });
  const at = db.prepare('SELECT updated_at, rowid & 32767 AS seq FROM tickets ORDER BY rowid DESC LIMIT 1 OFFSET ?');
  const deep = [0.1, 0.5, 0.9].map((q) => encodeCursor(at.get(Math.floor(q * N)) as ListPosition));
  const count = db.prepare('SELECT count(*) AS n FROM tickets_fts WHERE tickets_fts MATCH ?');
  const matches = new Map(searchTerms().map((t) => [t, (count.get(ftsQuery(t)) as { n: number }).n]));
  db.close();
  return { deep, matches };
}

/** The searches measured: one word of each frequency, two words together, then prefixes (`word*`). */
function searchTerms(): string[] {
  return [...SEARCHES.map((s) => word(s.rank)), `${word(12)} ${word(300)}`, ...PREFIXES.map((p) => p.term)];
}

/** Prefix searches: a short and a longer prefix of the common word, a prefix of the uncommon one. */
const PREFIXES = [
  { label: 'prefix of the common word', term: `${word(12).slice(0, 3)}*` },
  { label: 'longer prefix', term: `${word(12).slice(0, 4)}*` },
  { label: 'prefix of the uncommon word', term: `${word(300).slice(0, 4)}*` },
];

/** `count` of a list answer as the API gives it, marked when capped. */
function apiCount(body: string): string {
  const r = JSON.parse(body) as { count: number; count_capped?: boolean };
  return `${r.count}${r.count_capped ? ' (count_capped)' : ''}`;
}

/** Paths of pages after the first: 30 pages following next_cursor, then the three deep positions. */
async function walk(base: string, query: string, deep: string[]): Promise<string[]> {
  const paths = [`/tickets?${query}`];
  for (let i = 0; i < 30; i++) {
    const page = JSON.parse((await get(base + paths[paths.length - 1]!)).body) as { next_cursor: string | null };
    if (!page.next_cursor) break;
    paths.push(`/tickets?${query}&cursor=${page.next_cursor}`);
  }
  return [...paths.slice(1), ...deep.map((c) => `/tickets?${query}&cursor=${c}`)];
}

async function listPages(base: string, deep: string[]): Promise<void> {
  console.log(`\n-- list pages, one connection, sequential (${N} tickets; default page of 100) --`);
  const first = await sequential(base, ['/tickets'], 500);
  const bare = await bareServer(first.body);
  try {
    latencyRow('bare node:http, same first-page body', await sequential(bare.url, ['/'], 500), `${(first.body.length / 1024).toFixed(0)} KiB (baseline)`, false);
  } finally {
    bare.server.close();
  }
  const count = apiCount;
  latencyRow('GET /tickets (first page)', first, `count ${count(first.body)}`);
  for (const status of ['', 'open', 'closed']) {
    const q = status ? `status=${status}` : 'limit=100';
    const label = status ? `status=${status}` : 'no filter';
    if (status) {
      const r = await sequential(base, [`/tickets?${q}`], 500);
      latencyRow(`GET /tickets?${q} (first page)`, r, `count ${count(r.body)}`);
    }
    const paths = await walk(base, q, deep);
    latencyRow(`deeper pages, ${label}`, await sequential(base, paths, 500), `pages 2-31 via next_cursor and 3 positions at 10/50/90 %`);
  }
  const urgent = await sequential(base, ['/tickets?priority=urgent'], 300);
  latencyRow('GET /tickets?priority=urgent (first page)', urgent, `count ${count(urgent.body)} (no index on priority)`);
  const big = await sequential(base, ['/tickets?limit=1000'], 200);
  latencyRow('GET /tickets?limit=1000 (first page)', big, `${(big.body.length / 1024).toFixed(0)} KiB, for scale`, false);
}

async function searches(base: string, matches: Map<string, number>): Promise<void> {
  console.log(`\n-- search, one connection, sequential (whole words over title and description, word* a prefix; first page) --`);
  const labels = [...SEARCHES.map((s) => s.label), 'two words', ...PREFIXES.map((p) => p.label)];
  for (const [i, term] of searchTerms().entries()) {
    const r = await sequential(base, [`/tickets?search=${encodeURIComponent(term)}`], 300);
    const m = matches.get(term)!;
    latencyRow(`search=${term} (${labels[i]})`, r, `matches ${m} (${((100 * m) / N).toFixed(2)} %), count ${apiCount(r.body)}`);
  }
  for (const term of [word(0), word(12)]) {
    const q = `search=${encodeURIComponent(term)}`;
    const paths = await walk(base, q, []);
    latencyRow(`deeper pages, search=${term}`, await sequential(base, paths, 300), `pages 2-31 via next_cursor`);
  }
}

/** The store's list (first page) and count per filter, in-process on the node's file before it starts. */
async function countCost(file: string): Promise<void> {
  console.log(`\n-- what count costs: SqliteTicketStore in-process on the same file, warm, median of up to 50 runs --`);
  const store = new SqliteTicketStore(file);
  const filters: [string, TicketFilter][] = [
    ['no filter', {}],
    ['status=open', { status: 'open' }],
    ['status=closed', { status: 'closed' }],
    ['priority=urgent', { priority: 'urgent' }],
    ...searchTerms().map((t): [string, TicketFilter] => [`search=${t}`, { search: t }]),
  ];
  const median = async (fn: () => Promise<unknown>): Promise<number> => {
    await fn();
    const times: number[] = [];
    const until = performance.now() + 5000;
    while (times.length < 50 && (times.length < 5 || performance.now() < until)) {
      const t = performance.now();
      await fn();
      times.push(performance.now() - t);
    }
    return latency(times).p50;
  };
  console.log(`${'filter'.padEnd(28)} ${'answer'.padStart(8)}  ${'list(), 100'.padStart(11)}  ${'count()'.padStart(9)}  count's share`);
  for (const [label, filter] of filters) {
    const c = await store.count(filter);
    const matches = `${c.n}${c.capped ? '+' : ''}`;
    const page = await median(() => store.list(filter, { limit: 100 }));
    const count = await median(() => store.count(filter));
    console.log(`${label.padEnd(28)} ${matches.padStart(8)}  ${f1(page).padStart(8)} ms  ${f1(count).padStart(6)} ms  ${((100 * count) / (page + count)).toFixed(0).padStart(3)} %`);
  }
  await store.close();
}

async function createThroughput(node: ServerProcess): Promise<void> {
  console.log(`\n-- POST /tickets at ${N} tickets (20 connections, 5 s after 1 s of warm-up) --`);
  const newTicket = JSON.stringify({ title: 'printer error after update', description: 'the office printer shows an error when printing duplex after the last update', priority: 'high', channel: 'email', tags: ['hardware'] });
  const created = await fetch(`${node.url}/tickets`, { method: 'POST', headers: auth, body: newTicket });
  const body = await created.text();
  const post: Load = { method: 'POST', headers: auth, body: newTicket };
  const refs = await references('POST', body, post, TOKEN);
  printRow('POST /tickets', await warmLoad(`${node.url}/tickets`, post), refs, 0.5);
}

/** VmRSS or VmHWM of a process, in MiB (0 once it is gone). */
function memory(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** `mkt serve tickets` with `--peer` and a 1 s interval; resolves its URL and reports each sync log line. */
function servePeer(dir: string, peer: string, nodeFlags: string[], onSynced: (line: Record<string, unknown>) => void): Promise<ServerProcess> {
  const args = [...nodeFlags, join(import.meta.dirname, '../bin/mkt'), 'serve', 'tickets', '--port', '0', '--data-dir', dir, '--peer', peer, '--sync-interval', '1'];
  const child = spawn(process.execPath, args, { env: { ...process.env, MKT_TICKETS_TOKEN: TOKEN, MKT_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let rest = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      const lines = (rest + c.toString()).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const m = /^listening on (http:\/\/\S+)$/.exec(line);
        if (m) {
          const stop = async (): Promise<void> => {
            child.kill('SIGTERM');
            await exited;
          };
          resolve({ url: m[1]!, pid: child.pid!, stop });
        } else if (line.startsWith('{')) onSynced(JSON.parse(line) as Record<string, unknown>);
      }
    });
    void exited.then(() => reject(new Error('the empty node exited before listening')));
  });
}

async function fullSync(source: ServerProcess, dir: string, dbBytes: number): Promise<void> {
  console.log(`\n-- full sync of ${N} tickets to an empty node (real process, --peer, pull pages of 5000) --`);
  const target = join(dir, 'target');
  const profDir = join(dir, 'prof-target');
  const sourceBefore = memory(source.pid, 'VmRSS');
  let peak = 0;
  let sourcePeak = sourceBefore;
  let roundDone: number | undefined;
  let warnings = 0;
  const started = performance.now();
  const node = await servePeer(target, source.url, PROFILE === 'target' ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [], (line) => {
    if (line.msg === 'synced with peer' && Number(line.pulled) > 0) roundDone ??= performance.now() - started;
    if (String(line.msg).startsWith("sync: started from the peer's snapshot")) console.log(`  after ${((performance.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify({ ...line, level: undefined, time: undefined, pid: undefined, hostname: undefined })}`);
    if (Number(line.level) >= 40 && warnings++ === 0) console.log(`  the empty node warned: ${JSON.stringify(line).slice(0, 300)}`);
  });
  const listening = performance.now() - started;
  const sampler = setInterval(() => {
    peak = Math.max(peak, memory(node.pid, 'VmRSS'));
    sourcePeak = Math.max(sourcePeak, memory(source.pid, 'VmRSS'));
  }, 100);
  let held = 0;
  let allAt: number | undefined;
  const progress: string[] = [];
  try {
    for (let tick = 0; performance.now() - started < SYNC_LIMIT_MS; tick++) {
      await new Promise((r) => setTimeout(r, 1000));
      held = (JSON.parse((await get(`${node.url}/tickets?limit=1`)).body) as { count: number }).count;
      if (tick % 20 === 19) progress.push(`${((performance.now() - started) / 1000).toFixed(0)} s: ${held} (${memory(node.pid, 'VmRSS').toFixed(0)} MiB)`);
      if (held >= N) {
        allAt = performance.now() - started;
        break;
      }
    }
    // The round ends after the push phase, which reads every ticket to find none to send back.
    for (let i = 0; i < 600 && roundDone === undefined; i++) await new Promise((r) => setTimeout(r, 100));
  } finally {
    clearInterval(sampler);
    peak = Math.max(peak, memory(node.pid, 'VmRSS'));
    const hwm = memory(node.pid, 'VmHWM');
    await node.stop();
    const ms = allAt ?? performance.now() - started;
    const size = statSync(join(target, 'tickets.db')).size + (existsSync(join(target, 'tickets.db-wal')) ? statSync(join(target, 'tickets.db-wal')).size : 0);
    console.log(`listening after ${f1(listening)} ms; tickets held (and RSS) over time: ${progress.join(', ') || '-'}`);
    console.log(`all ${N} tickets held after ${(ms / 1000).toFixed(1)} s${allAt === undefined ? ` (NOT reached: ${held})` : ''} from the spawn (polled each second; ${((N / ms) * 1000).toFixed(0)} tickets/s)  goal < ${GOAL_SYNC_MS / 1000} s: ${allAt !== undefined && ms < GOAL_SYNC_MS ? 'met' : 'NOT MET'}`);
    console.log(`round done (pull and push phase, from its log line): ${roundDone === undefined ? 'not seen' : `${(roundDone / 1000).toFixed(1)} s`}`);
    console.log(`empty node peak RSS ${peak.toFixed(0)} MiB sampled every 100 ms, VmHWM ${hwm.toFixed(0)} MiB; its database ${(size / MiB).toFixed(0)} MiB, the source's ${(dbBytes / MiB).toFixed(0)} MiB`);
    console.log(`source node RSS ${sourceBefore.toFixed(0)} MiB before, peak ${sourcePeak.toFixed(0)} MiB during the sync`);
    if (PROFILE === 'target') printProfile(profDir, 'empty node during the sync');
  }
}

/** The hottest frames of the one .cpuprofile in `dir`, by function and by file (self time). */
function printProfile(dir: string, what: string): void {
  interface Node { callFrame: ProfileFrame; hitCount?: number }
  const file = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith('.cpuprofile')) : undefined;
  if (!file) return void console.log(`no profile written in ${dir}`);
  const prof = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: Node[]; samples: number[] };
  const self = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const n of prof.nodes) {
    self.set(frameName(n.callFrame), (self.get(frameName(n.callFrame)) ?? 0) + (n.hitCount ?? 0));
    const f = shortUrl(n.callFrame.url).split(':')[0] || '(native)';
    byFile.set(f, (byFile.get(f) ?? 0) + (n.hitCount ?? 0));
  }
  const total = prof.samples.length;
  console.log(`\nprofile of the ${what}: ${join(dir, file)} (${total} samples)\nby function (self):\n${topShares(self, total, 25)}\nby file (self):\n${topShares(byFile, total, 12)}`);
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-tickets-'));
  const keep = PROFILE !== undefined;
  try {
    if (ONLY.includes('comments')) await commentsSection(dir, TOKEN, { sequential, latencyRow });
    if (!ONLY.some((s) => ON_SOURCE.includes(s) || s === 'purge')) return;
    const cached = await seededDatabase(N);
    if (ONLY.includes('purge')) await purgeSection(cached, dir, N);
    if (!ONLY.some((s) => ON_SOURCE.includes(s))) return;
    const data = join(dir, 'source');
    mkdirSync(data);
    const t = performance.now();
    copyFileSync(cached, join(data, 'tickets.db'));
    const dbBytes = statSync(join(data, 'tickets.db')).size;
    console.log(`copied for the node in ${f1(performance.now() - t)} ms`);
    const facts = known(join(data, 'tickets.db'));
    if (ONLY.includes('count')) await countCost(join(data, 'tickets.db'));
    const profDir = join(dir, 'prof-source');
    const source = await serveBuilt('tickets', data, { MKT_TICKETS_TOKEN: TOKEN }, PROFILE === 'source' ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
    try {
      if (ONLY.includes('list')) await listPages(source.url, facts.deep);
      if (ONLY.includes('search')) await searches(source.url, facts.matches);
      // Before the creates, so that the empty node's goal is exactly N tickets.
      if (ONLY.includes('sync')) await fullSync(source, dir, dbBytes);
      if (ONLY.includes('create')) await createThroughput(source);
    } finally {
      await source.stop();
    }
    if (PROFILE === 'source') printProfile(profDir, 'source node');
  } finally {
    agent.destroy();
    if (keep) console.log(`\nkept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}
