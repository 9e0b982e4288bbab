// Fuzzes the ticket tracker from its own /openapi.json (issue 11): no 5xx, a JSON error body on
// every 4xx, the node alive afterwards, and the tickets written before the run unchanged. The
// comment, delete and history routes come from the same document; the tickets the fuzzer may
// change carry comments and history, and its cursors include real ones of both kinds (a list's
// cursor given to history, and the other way round, must be a 400).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startNode, type TicketNode } from '../helpers/tickets-node.js';
import { tempDir } from '../helpers/tmp.js';
import { operationsOf, type OpenApiDoc } from './openapi-requests.js';
import { fuzz, printReport, settingsFromEnv, type FuzzReport } from './run.js';
import { itKeepsTheContract } from './contract.js';
import type { FuzzTarget } from './mutate.js';

const TOKEN = 'fuzz-tickets-token-0123456789';
const settings = settingsFromEnv(2_000);

let node: TicketNode;
let dir: { path: string; remove(): void };
let doc: OpenApiDoc;
let report: FuzzReport;
/** Tickets written before the run, as the server answered them. */
const seeds: Record<string, unknown>[] = [];
/** Tickets the fuzzer may edit, so valid PATCHes reach the handler. */
const sacrificial: string[] = [];

const STATUS = ['open', 'pending', 'on_hold', 'solved', 'closed'];
const PRIORITY = ['low', 'normal', 'high', 'urgent'];
const CHANNEL = ['email', 'web', 'chat', 'phone', 'api'];

beforeAll(async () => {
  dir = tempDir('mkt-fuzz-tickets-');
  node = await startNode(dir.path, {}, { token: TOKEN });
  for (const body of [
    { title: 'Seed: printer on fire', description: 'Smoke\nfrom tray 2 — ünïcödé 😀', status: 'open', priority: 'urgent', channel: 'email', tags: ['hardware', 'fire'] },
    { title: 'Seed: refund', requester: 'ana@example.com', assignee: 'bo', status: 'pending' },
    { title: 'Seed: quiet one', source: 'web form', channel: 'web', priority: 'low' },
  ]) {
    const r = await node.req('POST', '/tickets', body);
    expect(r.status).toBe(201);
    seeds.push(r.body as Record<string, unknown>);
  }
  // Deletes take some of them for good: enough stay for the other routes to reach their handlers.
  for (let i = 0; i < 12; i++) {
    const r = await node.req('POST', '/tickets', { title: `fuzz target ${i}` });
    const id = (r.body as { id: string }).id;
    sacrificial.push(id);
    expect((await node.req('PATCH', `/tickets/${id}`, { status: 'pending', tags: ['x'] })).status).toBe(200);
    expect((await node.req('POST', `/tickets/${id}/comments`, { body: `comment on ${i}` })).status).toBe(201);
  }
  const cursors: string[] = [];
  const historyPage = await node.req('GET', `/tickets/${sacrificial[0]!}/history?limit=1`);
  const listPage = await node.req('GET', '/tickets?limit=1');
  for (const c of [historyPage.body?.next_cursor, listPage.body?.next_cursor]) if (typeof c === 'string') cursors.push(c);
  expect(cursors).toHaveLength(2);
  const res = await node.req('GET', '/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body as OpenApiDoc;
  // The document says only "an array" for a push; a ticket-shaped schema lets valid pushes
  // reach last-writer-wins (fresh UUIDs: the seed tickets are never overwritten).
  const push = doc.paths['/sync/push']?.post?.requestBody?.content?.['application/json'];
  if (push) push.schema = { type: 'array', maxItems: 5, items: { type: 'object', required: ['id', 'title', 'status', 'priority', 'channel', 'updated_at'], properties: { id: { type: 'string', format: 'uuid' }, title: { type: 'string', minLength: 1, maxLength: 500 }, status: { enum: STATUS }, priority: { enum: PRIORITY }, channel: { enum: CHANNEL }, created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' }, updated_by: { type: 'string', maxLength: 100 }, description: { type: 'string' }, tags: { type: 'array', items: { type: 'string', minLength: 1 } }, requester: { type: ['string', 'null'] } } } };
  const seedIds = seeds.map((s) => String(s.id));
  const target: FuzzTarget = {
    doc,
    ops: operationsOf(doc),
    hints: {
      id: fc.oneof(fc.constantFrom(...sacrificial), fc.constantFrom(...sacrificial).map((id) => id.slice(0, 8)), fc.uuid(), fc.constantFrom('0', 'ffffffff')),
      cursor: fc.oneof(fc.constantFrom(...cursors), fc.string({ maxLength: 60 })),
      status: fc.constantFrom(...STATUS),
      priority: fc.constantFrom(...PRIORITY),
      channel: fc.constantFrom(...CHANNEL),
      since: fc.oneof(fc.date({ noInvalidDate: true, min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z') }).map((d) => d.toISOString()), fc.constant('1970-01-01T00:00:00Z')),
    },
    // never a seed's id or short id, nor a prefix that could name one
    pathOk: (name, v) => name !== 'id' || !seedIds.some((id) => id.startsWith(v.toLowerCase()) || v.toLowerCase().startsWith(id.slice(0, 8))),
    credentials: [{ label: 'valid', headers: { authorization: `Bearer ${TOKEN}` } }],
  };
  report = await fuzz('tickets', node.url, target, settings, [TOKEN]);
  printReport(report, node.logs);
  // The whole run happens here; the limit only catches a hang, as the other fuzz files' limits do.
}, 3_600_000);

afterAll(async () => {
  await node?.stop();
  dir?.remove();
});

describe('tickets fuzz (seed printed above; replay with MKT_FUZZ_SEED and MKT_FUZZ_ONLY)', () => {
  itKeepsTheContract(settings, () => report);

  it('is still alive', async () => {
    expect((await node.req('GET', '/openapi.json')).status).toBe(200);
  });

  it('leaves the tickets written before the run unchanged', async () => {
    for (const seed of seeds) {
      const now = await node.req('GET', `/tickets/${String(seed.id)}`);
      expect(now.status).toBe(200);
      expect({ ...now.body, comments: undefined }).toEqual(seed);
    }
  });
});
