// Ticket tracker throughput: GET /tickets/{id} and POST /tickets against a bare node:http
// server answering a JSON body of the same size, in the same run (targets: GET >= 0.70 of
// bare, POST >= 0.45); and the time to sync 10,000 tickets from one node to an empty one.
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
import { autocannon, bareServer, ratio, type LoadResult } from './_util.js';

const TOKEN = 'bench-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const quiet = createLogger({ level: 'silent' });

function line(name: string, r: LoadResult, base?: LoadResult, target?: number): void {
  const rel = base ? `  ratio ${ratio(r.rps, base.rps)}${target ? ` (target >= ${target.toFixed(2)})` : ''}` : ' (baseline)';
  console.log(`${name.padEnd(28)} ${r.rps.toFixed(0).padStart(7)} req/s  p99 ${String(r.p99).padStart(4)} ms${rel}${r.errors || r.non2xx ? `  errors ${r.errors} non2xx ${r.non2xx}` : ''}`);
}

async function throughput(dir: string): Promise<void> {
  const svc = await startService('tickets', { host: '127.0.0.1', port: 0, dataDir: join(dir, 'http'), flags: { token: TOKEN }, env: {}, logger: quiet, out: { write: () => true } as unknown as NodeJS.WritableStream });
  try {
    const newTicket = JSON.stringify({ title: 'Printer on fire', description: 'the office printer smokes when printing duplex', priority: 'high', channel: 'email', tags: ['hardware'] });
    const created = await fetch(`${svc.url}/tickets`, { method: 'POST', headers: auth, body: newTicket });
    const body = await created.text();
    const id = (JSON.parse(body) as Ticket).id;
    const bare = await bareServer(body);
    try {
      const bareGet = await autocannon(`${bare.url}/tickets/${id}`, { headers: auth });
      line('bare node:http GET', bareGet);
      line('GET /tickets/{id}', await autocannon(`${svc.url}/tickets/${id}`, { headers: auth }), bareGet, 0.7);
      const barePost = await autocannon(`${bare.url}/tickets`, { method: 'POST', headers: auth, body: newTicket });
      line('bare node:http POST', barePost);
      line('POST /tickets', await autocannon(`${svc.url}/tickets`, { method: 'POST', headers: auth, body: newTicket }), barePost, 0.45);
    } finally {
      bare.server.close();
    }
  } finally {
    await svc.close();
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
    const count = (await store.list({})).length;
    await store.close();
    if (!round?.ok || count !== n) throw new Error(`sync incomplete: ${count}/${n} (${round?.error ?? 'no error'})`);
    console.log(`sync ${n} tickets to an empty node: ${ms.toFixed(0)} ms (target < 3000 ms; ratio to target ${ratio(ms, 3000)})`);
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
