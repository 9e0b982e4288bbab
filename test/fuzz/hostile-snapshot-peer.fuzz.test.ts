// Fuzzes an empty ticket node taking a hostile peer's snapshot (issue 28): fast-check scripts
// what a fake peer (a raw TCP server on 127.0.0.1, so it can lie in its headers) answers to
// GET /sync/snapshot: junk, truncated or damaged files, valid SQLite with forged rows (negative
// rowids, bad statuses, huge fields, non-JSON tags, future stamps, blobs), forged schema and FTS5
// bookkeeping, wrong or oversized Content-Length, slow and stalled bodies. The real
// bootstrapFromSnapshot runs in-process for each; then, and through a few real nodes, the node
// must hold only tickets a pull would store, list and count them alike, and keep answering.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { copyFileSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import AjvCompiler from '@fastify/ajv-compiler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapFromSnapshot } from '../../daemon/services/tickets/bootstrap.js';
import { HybridClock } from '../../daemon/services/tickets/hybrid-clock.js';
import { screenPeerCopies } from '../../daemon/services/tickets/peer-ticket.js';
import { SNAPSHOT_CONTENT_TYPE } from '../../daemon/services/tickets/snapshot-route.js';
import { TicketSchema, type Ticket } from '../../src/schemas/tickets.js';
import { SqliteTicketStore, type TicketStore } from '../../src/store/tickets.js';
import { systemClock } from '../../src/util/clock.js';
import { listAll } from '../helpers/list-all.js';
import { startNode, TOKEN } from '../helpers/tickets-node.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { settingsFromEnv } from './run.js';

const settings = settingsFromEnv(60);
/** Real nodes started at the end: a node costs a second or two, so few, and more in long runs. */
const NODE_RUNS = Math.max(2, Math.min(20, Math.ceil(settings.runs / 500)));
const SKEW_MS = 60_000;
/** The size ceiling the in-process runs inject (an oversize announcement is drawn past it). */
const MAX_BYTES = 1024 * 1024;
/** The whole-download ceiling the in-process runs inject: what a stalled body costs a run. */
const MAX_DOWNLOAD_MS = 300;
const BASE = Date.now() - 3_600_000;
const HONEST = 30;

// ---- the hostile snapshot -------------------------------------------------------------------

const STAMPS = ['ok', 'year 9999', '1969', 'ahead', 'garbage', 'plus'] as const;
type StampKind = (typeof STAMPS)[number];
const stampOf = (k: StampKind, n: number): string =>
  ({
    ok: new Date(BASE + 500_000 + n).toISOString(),
    'year 9999': '9999-12-31T23:59:59.999Z',
    '1969': '1969-12-31T23:59:59.999Z',
    ahead: new Date(Date.now() + 3_600_000).toISOString(),
    garbage: 'yesterday',
    plus: '+010000-01-01T00:00:00.000Z',
  })[k];

/** Where a forged row goes: its own stamp's key, or anywhere in the 64-bit range. */
type RowidKind = { at: 'own'; seq: number } | { at: 'fixed'; rowid: bigint };
const rowidArb: fc.Arbitrary<RowidKind> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ at: fc.constant('own' as const), seq: fc.integer({ min: 0, max: 32767 }) }) },
  { weight: 2, arbitrary: fc.record({ at: fc.constant('fixed' as const), rowid: fc.constantFrom(-(2n ** 40n), -1n, 0n, -(2n ** 63n), 2n ** 63n - 1n, -32768n, -32769n) }) },
  { weight: 2, arbitrary: fc.record({ at: fc.constant('fixed' as const), rowid: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }) }) },
);

/** SQL values a forged column may hold: text of every kind, numbers, NULL and blobs. */
type SqlValue = string | number | bigint | null | Buffer;
const sqlValueArb: fc.Arbitrary<SqlValue> = fc.oneof(
  fc.constantFrom<SqlValue>('pwned', '', 'not json', '[', '{"a":1}', '[1]', '[""]', '["a","a"]', '{}', '{"base":"x"}', null, 42, -1, 2n ** 62n, 1.5, Buffer.from([0, 255, 1])),
  fc.integer({ min: 1, max: 3 }).map((k) => 'x'.repeat([501, 100_001, 200_000][k - 1]!)),
  fc.string({ maxLength: 20 }),
);

const COLUMNS = ['id', 'title', 'description', 'status', 'priority', 'channel', 'source', 'requester', 'assignee', 'tags', 'created_at', 'updated_at', 'updated_by', 'field_stamps', 'got_from'] as const;

interface ForgedRow {
  rowid: RowidKind;
  id: 'fresh' | 'duplicate' | 'upper' | 'bad';
  title: string;
  description: number;
  status: string;
  tags: string;
  stamp: StampKind;
  stamps: 'match' | 'empty' | 'junk' | 'other';
  updatedBy: string;
  gotFrom: SqlValue;
}

const forgedRowArb: fc.Arbitrary<ForgedRow> = fc.record({
  rowid: rowidArb,
  id: fc.constantFrom('fresh', 'fresh', 'duplicate', 'upper', 'bad'),
  title: fc.constantFrom('pwned', 'pwned', '', ' ', 'x'.repeat(501)),
  description: fc.constantFrom(0, 10, 100_000, 100_001, 200_000),
  status: fc.constantFrom('open', 'pending', 'pwned', ''),
  tags: fc.constantFrom('[]', '["b","a"]', 'not json', '{"a":1}', '[1]', '[""]', JSON.stringify(Array.from({ length: 201 }, (_, i) => `t${i}`))),
  stamp: fc.constantFrom(...STAMPS),
  stamps: fc.constantFrom('match', 'match', 'empty', 'junk', 'other'),
  updatedBy: fc.constantFrom('evil', 'x'.repeat(101)),
  gotFrom: fc.constantFrom<SqlValue>(null, 'peer', 'x'.repeat(101), 42, Buffer.from([1])),
});

type Forge =
  | { kind: 'row'; row: ForgedRow }
  | { kind: 'set'; column: (typeof COLUMNS)[number]; value: SqlValue; which: 'min' | 'max' }
  | { kind: 'move'; to: RowidKind; which: 'min' | 'max' }
  | { kind: 'sql'; sql: string; unsafe: boolean };

const BOOKKEEPING = [
  ["CREATE TRIGGER evil AFTER INSERT ON tickets BEGIN UPDATE tickets SET title = 'pwned'; END", false],
  ['CREATE VIEW v AS SELECT 1', false],
  ['CREATE INDEX extra ON tickets(title)', false],
  ['DROP INDEX tickets_status', false],
  ['ALTER TABLE tickets ADD COLUMN evil TEXT', false],
  ['CREATE TABLE extra (x)', false],
  ['UPDATE schema_migrations SET version = 99', false],
  ["INSERT INTO peer_cursors VALUES ('http://elsewhere', '9999-12-31T23:59:59.999Z')", false],
  ["UPDATE node SET value = 'the sender'", false],
  ["UPDATE ticket_counts SET n = 1000000 WHERE dim = ''", false],
  ["INSERT INTO ticket_counts VALUES ('status', 'pwned', 7)", false],
  ["INSERT INTO tickets_fts (rowid, title, description) VALUES (-5, 'pwned', 'pwned')", false],
  ["INSERT INTO tickets_fts_config VALUES ('pgsz', 64), ('automerge', 0)", true],
  ["UPDATE tickets_fts_config SET v = 6 WHERE k = 'version'", true],
  ["UPDATE tickets_fts_config SET v = 5 WHERE k = 'version'", true],
  ["INSERT INTO tickets_fts_data VALUES (1234567, x'00ff00ff')", true],
  ['DELETE FROM tickets_fts_docsize', true],
  ['PRAGMA user_version = 99', false],
  ['PRAGMA application_id = 7', false],
] as const;

const forgeArb: fc.Arbitrary<Forge> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('row' as const), row: forgedRowArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('set' as const), column: fc.constantFrom(...COLUMNS), value: sqlValueArb, which: fc.constantFrom('min' as const, 'max' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('move' as const), to: rowidArb, which: fc.constantFrom('min' as const, 'max' as const) }) },
  { weight: 2, arbitrary: fc.constantFrom(...BOOKKEEPING).map(([sql, unsafe]) => ({ kind: 'sql' as const, sql, unsafe })) },
);

type Snapshot =
  | { kind: 'honest' }
  | { kind: 'forged'; forges: Forge[] }
  | { kind: 'truncated'; at: number }
  | { kind: 'flipped'; at: number[] }
  | { kind: 'junk'; header: boolean; bytes: Uint8Array }
  | { kind: 'empty' };

const snapshotArb: fc.Arbitrary<Snapshot> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ kind: 'honest' as const }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('forged' as const), forges: fc.array(forgeArb, { minLength: 1, maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncated' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('flipped' as const), at: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('junk' as const), header: fc.boolean(), bytes: fc.uint8Array({ maxLength: 8192 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty' as const }) },
);

// ---- the hostile answer ---------------------------------------------------------------------

/** What Content-Length says: the body's length, less, more, past the ceiling, nothing, or junk. */
type Length = { kind: 'exact' } | { kind: 'short' | 'long'; by: number } | { kind: 'oversize'; production: boolean } | { kind: 'none' } | { kind: 'raw'; value: string };

interface Answer {
  status: number;
  type: string | null;
  length: Length;
  snapshot: Snapshot;
  /** The body in this many writes, with a pause between two. */
  chunks: number;
  pauseMs: number;
  /** After the body: close the connection, or keep it open and send nothing more. */
  stall: boolean;
}

const answerArb: fc.Arbitrary<Answer> = fc.record({
  // Most answers get past the headers, so that most runs reach the file's checks.
  status: fc.oneof({ weight: 12, arbitrary: fc.constant(200) }, { weight: 1, arbitrary: fc.constantFrom(404, 500, 302, 206) }),
  type: fc.oneof({ weight: 12, arbitrary: fc.constant<string | null>(SNAPSHOT_CONTENT_TYPE) }, { weight: 1, arbitrary: fc.constantFrom<string | null>('application/json', 'application/octet-stream', null) }),
  length: fc.oneof(
    { weight: 16, arbitrary: fc.constant({ kind: 'exact' as const }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('short' as const, 'long' as const), by: fc.integer({ min: 1, max: 65536 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('oversize' as const), production: fc.boolean() }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('raw' as const), value: fc.constantFrom('-1', 'abc', '1.5', '0x10', '1e3', '99999999999999999999', '12, 12', '') }) },
  ),
  snapshot: snapshotArb,
  chunks: fc.constantFrom(1, 1, 1, 2, 7),
  pauseMs: fc.constantFrom(0, 0, 0, 5, 20),
  stall: fc.oneof({ weight: 15, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
});

/** The honest file every snapshot is made from, and a scratch directory to forge in. */
let honest: Buffer;
let honestIds: string[];
let scratch: { path: string; remove(): void };

function keyOf(r: RowidKind, stamp: string): bigint {
  if (r.at === 'fixed') return r.rowid;
  const ms = Date.parse(stamp);
  return (Number.isFinite(ms) ? BigInt(ms) : 0n) * 32768n + BigInt(r.seq);
}

function forgeOne(db: Database.Database, f: Forge, n: number): void {
  const which = (w: 'min' | 'max'): string => `(SELECT ${w}(rowid) FROM tickets)`;
  switch (f.kind) {
    case 'row': {
      const r = f.row;
      const stamp = stampOf(r.stamp, n);
      const uuid = `d0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
      const id = { fresh: uuid, duplicate: honestIds[n % honestIds.length]!, upper: uuid.toUpperCase(), bad: 'not-a-uuid' }[r.id];
      const stamps = { match: JSON.stringify({ base: [stamp, 'evil'] }), empty: '{}', junk: 'x', other: JSON.stringify({ base: [new Date(BASE).toISOString(), 'evil'] }) }[r.stamps];
      db.prepare(
        `INSERT INTO tickets (rowid, id, title, description, status, priority, channel, source, requester, assignee, tags, created_at, updated_at, updated_by, field_stamps, got_from)
         VALUES (?, ?, ?, ?, ?, 'normal', 'api', 'web', NULL, NULL, ?, ?, ?, ?, ?, ?)`,
      ).run(keyOf(r.rowid, stamp), id, r.title, 'd'.repeat(r.description), r.status, r.tags, stamp, stamp, r.updatedBy, stamps, r.gotFrom);
      return;
    }
    case 'set':
      db.prepare(`UPDATE tickets SET ${f.column} = ? WHERE rowid = ${which(f.which)}`).run(f.value);
      return;
    case 'move':
      db.prepare(`UPDATE tickets SET rowid = ? WHERE rowid = ${which(f.which)}`).run(keyOf(f.to, stampOf('ok', n)));
      return;
    case 'sql':
      if (f.unsafe) db.unsafeMode(true);
      db.exec(f.sql);
      if (f.unsafe) db.unsafeMode(false);
  }
}

let forgedCount = 0;
function bytesOf(s: Snapshot): Buffer {
  switch (s.kind) {
    case 'honest':
      return honest;
    case 'empty':
      return Buffer.alloc(0);
    case 'truncated':
      return honest.subarray(0, Math.floor(s.at * honest.length));
    case 'flipped': {
      const b = Buffer.from(honest);
      for (const at of s.at) {
        const i = Math.min(b.length - 1, Math.floor(at * b.length));
        b[i] = b[i]! ^ 0x5a;
      }
      return b;
    }
    case 'junk':
      return Buffer.concat([s.header ? Buffer.from('SQLite format 3\0', 'latin1') : Buffer.alloc(0), Buffer.from(s.bytes)]);
    case 'forged': {
      const file = join(scratch.path, `forged-${forgedCount++}.db`);
      copyFileSync(join(scratch.path, 'honest.db'), file);
      const db = new Database(file);
      s.forges.forEach((f, i) => {
        try {
          forgeOne(db, f, forgedCount * 10 + i);
        } catch {
          // A constraint of the file's own (NOT NULL, a unique id or rowid): the forgery is left out.
        }
      });
      db.close();
      const bytes = readFileSync(file);
      rmSync(file, { force: true });
      return bytes;
    }
  }
}

// ---- the fake peer ----------------------------------------------------------------------------

/** The peer's answers: `next` scripts the snapshot route; /tickets, /sync/pull and /sync/push are honest. */
interface Peer {
  url: string;
  next: { answer: Answer; body: Buffer } | undefined;
  served: { snapshots: number; pulls: number };
  close(): Promise<void>;
}

function lengthHeader(a: Answer, body: Buffer): string | undefined {
  switch (a.length.kind) {
    case 'exact':
      return String(body.length);
    case 'short':
      return String(Math.max(0, body.length - a.length.by));
    case 'long':
      return String(body.length + a.length.by);
    case 'oversize':
      return String(a.length.production ? 16 * 1024 ** 3 : MAX_BYTES + 1);
    case 'none':
      return undefined;
    case 'raw':
      return a.length.value;
  }
}

async function startPeer(): Promise<Peer> {
  const sockets = new Set<Socket>();
  const peer = { next: undefined, served: { snapshots: 0, pulls: 0 } } as Omit<Peer, 'url' | 'close'> & Partial<Peer>;
  const json = (socket: Socket, value: unknown): void => {
    const body = Buffer.from(JSON.stringify(value));
    socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`), body]));
  };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let head = '';
    const onData = (chunk: Buffer): void => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      const path = head.split(' ')[1] ?? '/';
      if (path.startsWith('/tickets')) return json(socket, { data: [], count: 1_000_000, next_cursor: null });
      if (path.startsWith('/sync/pull')) {
        peer.served.pulls++;
        return json(socket, { tickets: [], count: 0, node_id: 'hostile-peer', has_more: false, next_since: null });
      }
      if (path.startsWith('/sync/push')) return json(socket, { accepted: 0, rejected: 0 });
      if (!path.startsWith('/sync/snapshot') || !peer.next) return void socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      peer.served.snapshots++;
      void answer(socket, peer.next.answer, peer.next.body);
    };
    socket.on('data', onData);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  peer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  peer.close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return peer as Peer;
}

async function answer(socket: Socket, a: Answer, body: Buffer): Promise<void> {
  const length = lengthHeader(a, body);
  const head = [`HTTP/1.1 ${a.status} Whatever`, 'connection: close'];
  if (a.type !== null) head.push(`content-type: ${a.type}`);
  if (length !== undefined) head.push(`content-length: ${length}`);
  socket.write(`${head.join('\r\n')}\r\n\r\n`);
  const size = Math.ceil(body.length / a.chunks);
  for (let i = 0; i < a.chunks && !socket.destroyed; i++) {
    socket.write(body.subarray(i * size, (i + 1) * size));
    if (a.pauseMs > 0) await new Promise((r) => setTimeout(r, a.pauseMs));
  }
  // A stalled body waits for the receiver to hang up (its deadline); the cleanup closes the rest.
  if (!a.stall) socket.end();
}

// ---- the property ---------------------------------------------------------------------------

/** The API's own ticket schema, checked by the validator fastify uses. */
const validTicket = AjvCompiler()({}, { customOptions: {} })({ schema: TicketSchema }) as (t: unknown) => boolean;
const screen = (t: Ticket): Ticket | undefined => screenPeerCopies([t], Date.now(), SKEW_MS).copies[0];
// A list's comment_count is not part of a ticket's sync form (JSON leaves an undefined property out).
const canonical = (t: Ticket): string => JSON.stringify({ ...t, comment_count: undefined, tags: [...t.tags].sort() });

/** Every ticket the store holds is one a pull would store, as stored; lists, counts and searches agree. */
async function expectSound(store: TicketStore, label: string): Promise<Ticket[]> {
  const listed = await listAll(store, {}, 100);
  expect((await store.count({})).n, `${label}: count against listing`).toBe(listed.length);
  for (const t of listed) {
    expect(validTicket(t), `${label}: ${t.id} is not a valid ticket`).toBe(true);
    const again = screen(t);
    expect(again, `${label}: ${t.id} would be refused from a pull`).toBeDefined();
    expect(canonical(again!), `${label}: ${t.id} is not as a pull would store it`).toBe(canonical(t));
  }
  const ids = new Set(listed.map((t) => t.id));
  for (const word of ['pwned', 'ticket']) for (const t of await listAll(store, { search: word }, 100)) expect(ids.has(t.id), `${label}: search "${word}" found ${t.id}, which the listing has not`).toBe(true);
  return listed;
}

let peer: Peer;
beforeAll(async () => {
  scratch = tempDir('mkt-fuzz-snapshot-');
  const src = new SqliteTicketStore(join(scratch.path, 'source.db'));
  const tickets: Ticket[] = Array.from({ length: HONEST }, (_, i) => {
    const stamp = new Date(BASE + Math.floor(i / 2) * 1000).toISOString();
    const id = `c0000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    return { id, short_id: id.slice(0, 8), title: `ticket ${i}`, description: `printer ${i}`, status: 'open', priority: 'normal', channel: 'api', source: 'web', requester: null, assignee: null, tags: i % 3 ? ['hw'] : [], created_at: stamp, updated_at: stamp, updated_by: 'honest', field_stamps: { base: [stamp, 'honest'] } };
  });
  await src.merge(tickets, (t) => ({ kind: 'store', ticket: t, asSent: false }));
  honestIds = tickets.map((t) => t.id);
  await src.backupTo(join(scratch.path, 'honest.db'));
  await src.close();
  const db = new Database(join(scratch.path, 'honest.db'));
  db.pragma('journal_mode = DELETE');
  db.close();
  honest = readFileSync(join(scratch.path, 'honest.db'));
  peer = await startPeer();
});

afterAll(async () => {
  await peer?.close();
  scratch?.remove();
});

describe(`hostile snapshot peer (seed ${settings.seed}, ${settings.runs} runs; replay with MKT_FUZZ_SEED)`, () => {
  it('an empty node adopts no unscreened or invalid row, and its bootstrap always ends', async () => {
    const dir = tempDir('mkt-fuzz-snapshot-node-');
    let made = 0;
    let store = new SqliteTicketStore(join(dir.path, `tickets-${made}.db`));
    let adopted = false;
    const outcomes = new Map<string, number>();
    try {
      await fc.assert(
        fc.asyncProperty(answerArb, async (a) => {
          // A node that adopted (in this run or in one that failed before shrinking) is no
          // longer empty: each run starts from a fresh one.
          if (adopted) {
            await store.close();
            made++;
            store = new SqliteTicketStore(join(dir.path, `tickets-${made}.db`));
            adopted = false;
          }
          peer.next = { answer: a, body: bytesOf(a.snapshot) };
          const halt = new AbortController();
          let settled: { ok: boolean; value: unknown } | undefined;
          const running = bootstrapFromSnapshot({
            store,
            hlc: new HybridClock(systemClock, undefined, SKEW_MS),
            peer: peer.url,
            token: TOKEN,
            dir: dir.path,
            nodeId: await store.nodeId(),
            now: Date.now(),
            maxSkewMs: SKEW_MS,
            timeoutMs: 2_000,
            maxBytes: a.length.kind === 'oversize' && a.length.production ? undefined : MAX_BYTES,
            maxDownloadMs: MAX_DOWNLOAD_MS,
            signal: halt.signal,
          }).then(
            (value) => (settled = { ok: true, value }),
            (value: unknown) => (settled = { ok: false, value }),
          );
          try {
            // The deadlines above end every attempt in a few seconds; the cap allows for load.
            await waitFor(async () => settled, 'the bootstrap to end', 30_000);
          } finally {
            halt.abort();
            await running;
          }
          adopted = settled!.ok && settled!.value !== undefined;
          const key = settled!.ok ? (settled!.value ? 'adopted' : 'none') : `refused: ${String((settled!.value as Error).message).replace(/[0-9]+/g, 'N').slice(0, 50)}`;
          outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
          const held = await expectSound(store, key);
          if (adopted) expect(held.length).toBeGreaterThan(0);
          else expect(held).toEqual([]);
          expect(readdirSync(dir.path).filter((f) => f.startsWith('snapshot-in-'))).toEqual([]);
        }),
        { seed: settings.seed, numRuns: settings.runs },
      );
    } finally {
      peer.next = undefined;
      await store.close();
      dir.remove();
      process.stdout.write(`hostile snapshot peer: seed ${settings.seed}, ${settings.runs} runs\n${[...outcomes].sort((x, y) => y[1] - x[1]).map(([k, n]) => `  ${String(n).padStart(6)} ${k}`).join('\n')}\n`);
    }
  }, 3_600_000);

  it(`a real node fed ${NODE_RUNS} hostile snapshots holds only sound tickets and keeps answering`, async () => {
    // Bodies that end (a real node waits a minute's grace for a stalled one), at the production ceilings.
    const quick = answerArb.filter((a) => !a.stall && a.length.kind !== 'long' && !(a.length.kind === 'oversize' && !a.length.production));
    const drawn = fc.sample(quick, { seed: settings.seed, numRuns: NODE_RUNS });
    for (const [i, a] of drawn.entries()) {
      peer.next = { answer: a, body: bytesOf(a.snapshot) };
      peer.served = { snapshots: 0, pulls: 0 };
      const dir = tempDir('mkt-fuzz-snapshot-real-');
      const node = await startNode(dir.path, { peers: [peer.url], syncIntervalMs: 60_000 });
      try {
        await waitFor(async () => node.logs.some((l) => l.includes('synced with peer') || l.includes('sync with peer failed')), `node ${i}'s first round with the hostile peer`, 60_000);
        expect(peer.served.snapshots, `node ${i} asked for the snapshot`).toBe(1);
        const list = await node.req('GET', '/tickets?limit=100');
        expect(list.status, `node ${i}: GET /tickets`).toBe(200);
        expect(list.body.count).toBe(list.body.data.length);
        const search = await node.req('GET', '/tickets?search=pwned');
        expect(search.status).toBe(200);
        for (const t of list.body.data as Ticket[]) {
          expect(validTicket(t), `node ${i}: ${t.id}`).toBe(true);
          expect(screen(t), `node ${i}: ${t.id} would be refused from a pull`).toBeDefined();
        }
        expect(readdirSync(dir.path).filter((f) => f.startsWith('snapshot-'))).toEqual([]);
      } finally {
        await node.stop();
        dir.remove();
      }
    }
    peer.next = undefined;
  }, 1_800_000);
});
