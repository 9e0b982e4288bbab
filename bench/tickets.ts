// Ticket tracker throughput: GET /tickets/{id} and POST /tickets of the real daemon (`mkt serve
// tickets`, built, logging at info to a pipe this process reads, as journald would) against a
// bare node:http server answering a JSON body of the same size, in the same run (goals: GET >=
// 0.75 of bare, POST >= 0.5), beside the framework floor (bench/_floor-server.ts: the shared
// plugins answering the same body with no work); and the time to sync 10,000 tickets from one
// node to an empty one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from '../daemon/start.js';
import { createLogger } from '../daemon/logger.js';
import { SqliteTicketStore } from '../src/store/tickets.js';
import { HybridClock } from '../daemon/services/tickets/hybrid-clock.js';
import { PeerSync } from '../daemon/services/tickets/sync.js';
import { systemClock } from '../src/util/clock.js';
import type { Ticket } from '../src/schemas/tickets.js';
import { printRow, ratio, references, serveBuilt, warmLoad, type Load } from './_util.js';

const TOKEN = 'bench-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const quiet = createLogger({ level: 'silent' });

async function throughput(dir: string): Promise<void> {
  const svc = await serveBuilt('tickets', join(dir, 'http'), { MKT_TICKETS_TOKEN: TOKEN });
  try {
    const newTicket = JSON.stringify({ title: 'Printer on fire', description: 'the office printer smokes when printing duplex', priority: 'high', channel: 'email', tags: ['hardware'] });
    const created = await fetch(`${svc.url}/tickets`, { method: 'POST', headers: auth, body: newTicket });
    const body = await created.text();
    const id = (JSON.parse(body) as Ticket).id;
    const get: Load = { headers: auth };
    const getRefs = await references('GET', body, get, TOKEN);
    printRow('GET /tickets/{id}', await warmLoad(`${svc.url}/tickets/${id}`, get), getRefs, 0.75);
    const post: Load = { method: 'POST', headers: auth, body: newTicket };
    const postRefs = await references('POST', body, post, TOKEN);
    printRow('POST /tickets', await warmLoad(`${svc.url}/tickets`, post), postRefs, 0.5);
  } finally {
    await svc.stop();
  }
}

async function syncTime(dir: string): Promise<void> {
  const n = 10_000;
  const source = await startService('tickets', { host: '127.0.0.1', port: 0, dataDir: join(dir, 'source'), flags: { token: TOKEN }, env: {}, logger: quiet, out: { write: () => true } as unknown as NodeJS.WritableStream });
  try {
    const seed: Ticket[] = [];
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    for (let i = 0; i < n; i++) {
      const stamp = new Date(t0 + i * 1000).toISOString();
      const id = crypto.randomUUID();
      seed.push({ id, short_id: id.slice(0, 8), title: `ticket ${i}`, description: `seeded ticket number ${i} for the sync benchmark`, status: 'open', priority: 'normal', channel: 'email', source: 'bench', requester: 'ana@example.com', assignee: null, tags: ['bench'], created_at: stamp, updated_at: stamp, updated_by: 'seed' });
    }
    for (let i = 0; i < n; i += 1000) await fetch(`${source.url}/sync/push`, { method: 'POST', headers: auth, body: JSON.stringify(seed.slice(i, i + 1000)) });

    const store = new SqliteTicketStore(join(dir, 'empty', 'tickets.db'));
    const sync = new PeerSync({ store, hlc: new HybridClock(systemClock), token: TOKEN, logger: quiet, peers: [source.url], intervalMs: 60_000 });
    const started = performance.now();
    const [round] = await sync.round();
    const ms = performance.now() - started;
    const count = await store.count({});
    await store.close();
    if (!round?.ok || count !== n) throw new Error(`sync incomplete: ${count}/${n} (${round?.error ?? 'no error'})`);
    console.log(`sync ${n} tickets to an empty node: ${ms.toFixed(0)} ms (goal < 3000 ms; ratio to goal ${ratio(ms, 3000)})`);
  } finally {
    await source.close();
  }
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-tickets-'));
  try {
    await throughput(dir);
    await syncTime(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
