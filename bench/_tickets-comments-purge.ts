// The issue 34 sections of `npm run bench -- tickets`: a ticket with 100 comments read and
// synced (`comments`), and the database size when 10 % of the tickets are deleted and their
// tombstones purged (`purge`). bench/tickets.ts runs them; they share its timing helpers.
import { copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteTicketStore } from '../src/store/tickets.js';
import { bareServer, mulberry32, printRow, references, serveBuilt, warmLoad } from './_util.js';

const MiB = 1024 * 1024;
const COMMENTS = 100;

/** Latency of sequential requests, as bench/tickets.ts measures it. */
export interface Latency {
  n: number;
  p50: number;
  p99: number;
  max: number;
}
/** What bench/tickets.ts lends: its one-connection GET timing and the row it prints. */
export interface Timing {
  sequential(base: string, paths: string[], samples: number): Promise<Latency & { body: string }>;
  latencyRow(name: string, l: Latency, extra: string, goal?: boolean): void;
}

/** A comment of 20 to 80 words from a small support-desk vocabulary (about 100 to 500 bytes). */
function commentBodies(n: number): string[] {
  const rand = mulberry32(34);
  const words = 'the printer vpn works again after restart called back user confirmed cable replaced driver update laptop screen flickers still open waiting for vendor escalated to network team ticket'.split(' ');
  return Array.from({ length: n }, () => Array.from({ length: 20 + Math.floor(rand() * 61) }, () => words[Math.floor(rand() * words.length)]!).join(' '));
}

async function call(url: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; text: string }> {
  const res = await fetch(url, init);
  return { status: res.status, text: await res.text() };
}

/**
 * `comments`: a node of its own holding one ticket with 100 comments (POSTed as a user would).
 * GET /tickets/{id} under load against bare node:http and the framework floor answering the same
 * bytes, and at one connection; then the pull page holding the ticket (what a peer fetches to
 * sync it): its bytes beside the same ticket's without comments, and its time.
 */
export async function commentsSection(dir: string, token: string, t: Timing): Promise<void> {
  console.log(`\n-- a ticket with ${COMMENTS} comments: read (GET /tickets/{id}) and synced (the pull page holding it) --`);
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const data = join(dir, 'comments');
  mkdirSync(data);
  const node = await serveBuilt('tickets', data, { MKT_TICKETS_TOKEN: token });
  try {
    const created = await call(`${node.url}/tickets`, { method: 'POST', headers: auth, body: JSON.stringify({ title: 'VPN drops every hour', description: 'since the update the VPN drops every hour', tags: ['vpn'] }) });
    if (created.status !== 201) throw new Error(`POST /tickets: HTTP ${created.status} ${created.text.slice(0, 200)}`);
    const id = (JSON.parse(created.text) as { id: string }).id;
    const plainPull = await t.sequential(node.url, ['/sync/pull?since=1970-01-01T00:00:00.000Z'], 200);
    const plainGet = await t.sequential(node.url, [`/tickets/${id}`], 300);
    const bodies = commentBodies(COMMENTS);
    const started = performance.now();
    for (const [i, body] of bodies.entries()) {
      const r = await call(`${node.url}/tickets/${id}/comments`, { method: 'POST', headers: auth, body: JSON.stringify({ body, author: `agent${i % 7}@example.com` }) });
      if (r.status !== 201) throw new Error(`POST /tickets/{id}/comments: HTTP ${r.status} ${r.text.slice(0, 200)}`);
    }
    const addMs = performance.now() - started;
    const path = `/tickets/${id}`;
    const one = await t.sequential(node.url, [path], 500);
    const shown = JSON.parse(one.body) as { comments?: unknown[] };
    if (shown.comments?.length !== COMMENTS) throw new Error(`GET ${path} shows ${shown.comments?.length} comments, not ${COMMENTS}`);
    const bodyBytes = bodies.reduce((n, b) => n + Buffer.byteLength(b), 0);
    console.log(`${COMMENTS} comments added one POST at a time in ${(addMs / 1000).toFixed(2)} s (${(addMs / COMMENTS).toFixed(1)} ms each); ${(bodyBytes / 1024).toFixed(0)} KiB of bodies; the answer ${(Buffer.byteLength(one.body) / 1024).toFixed(0)} KiB`);

    const load = { headers: auth };
    const refs = await references(`GET, the same ${(Buffer.byteLength(one.body) / 1024).toFixed(0)} KiB`, one.body, load, token);
    printRow(`GET /tickets/{id}, ${COMMENTS} comments`, await warmLoad(`${node.url}${path}`, load), refs);
    const bareOne = await bareServer(one.body);
    try {
      const lone = await t.sequential(bareOne.url, ['/'], 500);
      t.latencyRow('bare node:http, one connection', lone, 'the same body (baseline)', false);
      t.latencyRow('GET /tickets/{id}, one connection', one, `p50 ${(one.p50 / lone.p50).toFixed(1)}x bare`, false);
      t.latencyRow('  the same before any comment', plainGet, `${(Buffer.byteLength(plainGet.body) / 1024).toFixed(1)} KiB`, false);
    } finally {
      bareOne.server.close();
    }

    const pull = await t.sequential(node.url, ['/sync/pull?since=1970-01-01T00:00:00.000Z'], 300);
    const page = JSON.parse(pull.body) as { tickets?: { comments?: unknown[]; history?: unknown[] }[] };
    const item = page.tickets?.[0];
    if (item?.comments?.length !== COMMENTS) throw new Error(`the pull page carries ${item?.comments?.length} comments, not ${COMMENTS}`);
    t.latencyRow('GET /sync/pull, the page holding it', pull, `${(Buffer.byteLength(pull.body) / 1024).toFixed(0)} KiB (${item.history?.length ?? 0} history entries)`, false);
    t.latencyRow('  the same before any comment', plainPull, `${(Buffer.byteLength(plainPull.body) / 1024).toFixed(1)} KiB`, false);
  } finally {
    await node.stop();
  }
}

/** A file's size with its -wal (0 when absent): what the database holds on disk. */
function onDisk(file: string): number {
  return [file, `${file}-wal`].reduce((n, f) => n + (existsSync(f) ? statSync(f).size : 0), 0);
}

/**
 * Pages in all and free, and where the used ones go (SQLite's dbstat, by table with its indexes;
 * the FTS5 index's shadow tables together), in MiB.
 */
function pages(file: string): { pages: number; free: number; parts: string } {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare('SELECT s.tbl_name AS name, sum(d.pgsize) AS bytes FROM dbstat d JOIN sqlite_schema s ON s.name = d.name GROUP BY s.tbl_name').all() as { name: string; bytes: number }[];
    const parts = new Map<string, number>();
    for (const r of rows) {
      const name = r.name.startsWith('tickets_fts') ? 'fts' : r.name;
      parts.set(name, (parts.get(name) ?? 0) + r.bytes);
    }
    const shown = [...parts].filter(([, b]) => b >= MiB / 10).sort((a, b) => b[1] - a[1]);
    return {
      pages: db.pragma('page_count', { simple: true }) as number,
      free: db.pragma('freelist_count', { simple: true }) as number,
      parts: shown.map(([n, b]) => `${n} ${(b / MiB).toFixed(1)}`).join(', '),
    };
  } finally {
    db.close();
  }
}

/**
 * `purge`: a copy of the seeded database of `n` tickets, in-process (SqliteTicketStore, as the
 * node runs it): 10 % deleted (store.delete, one call each, as DELETE /tickets/{id} makes them),
 * then their tombstones purged (store.purgeTombstones). The size after each step, with the store
 * closed (the WAL checkpointed into the file), then after VACUUM, which the node does not run:
 * SQLite keeps freed pages for the next rows (no auto_vacuum), so the file does not shrink but
 * stops growing; VACUUM rewrites the whole file under an exclusive lock (an operator's job,
 * with the node stopped), and its time is printed beside it.
 */
export async function purgeSection(seeded: string, dir: string, n: number): Promise<void> {
  console.log(`\n-- ${n} tickets, 10 % deleted, their tombstones purged: the database on disk (SqliteTicketStore in-process) --`);
  const file = join(dir, 'purge', 'tickets.db');
  mkdirSync(join(dir, 'purge'));
  copyFileSync(seeded, file);
  const size = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;
  const row = (label: string, ms?: number): void => {
    const p = pages(file);
    console.log(`${label.padEnd(36)} ${size(onDisk(file)).padStart(11)}  (${p.pages} pages, ${p.free} free; MiB used: ${p.parts})${ms === undefined ? '' : `  in ${(ms / 1000).toFixed(1)} s`}`);
  };
  row(`${n} tickets`);

  // Every tenth ticket in rowid order: spread over the whole file, as deletes of old and new tickets are.
  const ro = new Database(file, { readonly: true });
  const ids = (ro.prepare('SELECT id FROM tickets ORDER BY rowid').pluck().all() as string[]).filter((_, i) => i % 10 === 0);
  ro.close();
  const node = 'de1e7ed0-0000-4000-8000-000000000034';
  // Stamps after every seeded change (the seed ends in 2026-10), one millisecond apart.
  const base = Date.parse('2026-11-01T00:00:00.000Z');
  const stamp = (i: number): string => new Date(base + i).toISOString();
  let store = new SqliteTicketStore(file);
  let t = performance.now();
  for (const [i, id] of ids.entries()) {
    if (!(await store.delete(id, [stamp(i), node]))) throw new Error(`store.delete(${id}) found no live ticket`);
  }
  const deleteMs = performance.now() - t;
  await store.close();
  row(`${ids.length} deleted (tombstones kept)`, deleteMs);
  console.log(`  ${((deleteMs * 1000) / ids.length).toFixed(0)} µs a delete`);

  store = new SqliteTicketStore(file);
  t = performance.now();
  const purged = await store.purgeTombstones(stamp(ids.length - 1));
  const purgeMs = performance.now() - t;
  await store.close();
  if (purged !== ids.length) throw new Error(`purgeTombstones purged ${purged}, not ${ids.length}`);
  row(`${purged} tombstones purged`, purgeMs);

  const db = new Database(file);
  t = performance.now();
  db.exec('VACUUM');
  const vacuumMs = performance.now() - t;
  db.close();
  row('after VACUUM (offline)', vacuumMs);
}
