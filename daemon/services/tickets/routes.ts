// The ticket tracker's HTTP routes (spec service B): tickets CRUD, list filters and search,
// and the peer replication endpoints (/sync/...). Every route, unknown ones included, needs the shared token.
import type { FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import {
  COMMENT_CONTROL,
  COMMENT_MAX_BYTES,
  DEFAULTS,
  ErrorSchema,
  HISTORY_LIMIT,
  HistoryQuerySchema,
  HistoryResponseSchema,
  MAX_COMMENTS,
  NewCommentSchema,
  CommentSchema,
  TicketWithCommentsSchema,
  type NewComment,
  ListQuerySchema,
  LIST_LIMIT,
  ListResponseSchema,
  MAX_TAGS,
  PERSON_ANY,
  PERSON_NONE,
  PULL_LIMIT,
  NewTicketSchema,
  NodeResponseSchema,
  PullQuerySchema,
  PullResponseSchema,
  PushBodySchema,
  PushResponseSchema,
  SENDER_HEADER,
  SHORT_ID_MIN,
  TicketSchema,
  UpdateTicketSchema,
  parseChannel,
  parsePriority,
  parseStatus,
  type ListQuery,
  type NewTicket,
  type Ticket,
  type UpdateTicket,
} from '../../../src/schemas/tickets.js';
import { searchProblem, type PersonMatch, type TicketStore } from '../../../src/store/tickets.js';
import type { Clock } from '../../../src/util/clock.js';
import { HttpError } from '../../plugins/errors.js';
import { asDiskFull, isDiskFull } from '../../../src/util/disk-full.js';
import { Authenticator, installAuth } from '../../plugins/auth.js';
import { secretMatcher } from '../../plugins/bearer.js';
import type { HybridClock } from './hybrid-clock.js';
import { applyEdit, normalize, withHistory } from './field-merge.js';
import { offerCopies } from './offer.js';
import { decodeCursor, decodeHistoryCursor, encodeCursor, encodeHistoryCursor } from './list-cursor.js';
import { logRefusals, screenPeerCopies } from './peer-ticket.js';
import { narrowedSince, normalizeStamp } from './stamp.js';
import { quoteForError } from '../../../src/util/quote.js';
import { ticketAnswer, ticketWithComments } from './ticket-answer.js';

export interface TicketRoutesDeps {
  store: TicketStore;
  hlc: HybridClock;
  nodeId: string;
  token: string;
  clock: Clock;
  /** Copies stamped further ahead of `clock` than this are refused (see stamp.ts). */
  maxSkewMs: number;
}

/**
 * Storage failures answer 500 with the failure text, as the spec asks; a full disk's text says so
 * first ("the disk is full: ...; free space ..."), the 507 the other services answer kept to the
 * spec's 500.
 */
function storageError(err: unknown, what = 'a ticket store write'): HttpError {
  const full = asDiskFull(err, what);
  if (full) return new HttpError(500, full.message);
  return new HttpError(500, `storage failure: ${(err as Error).message}`);
}

async function storage<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw storageError(err);
  }
}

function enumField<T>(name: string, raw: string | undefined, parse: (v: unknown) => T | undefined): T | undefined {
  if (raw === undefined) return undefined;
  const v = parse(raw);
  if (v === undefined) throw new HttpError(400, `invalid ${name}: ${quoteForError(raw)}`);
  return v;
}

function cleanTags(tags: string[] | undefined): string[] | undefined {
  if (tags === undefined) return undefined;
  return [...new Set(tags.map((t) => t.trim()).filter((t) => t !== ''))];
}

/**
 * requester and assignee: "" or blanks mean "nobody", stored as null, so that a clear made with
 * `""` replicates as the same null a clear made with null does (and filters as unassigned).
 */
function blankToNull(v: string | null | undefined): string | null | undefined {
  return typeof v === 'string' && v.trim() === '' ? null : v;
}

/** `assignee=` / `requester=` of a list: a value, `none`, `*`; empty is no filter (as `source=`). */
function personMatch(raw: string | undefined): PersonMatch | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw === PERSON_NONE) return { kind: 'none' };
  if (raw === PERSON_ANY) return { kind: 'any' };
  return { kind: 'is', value: raw };
}

/**
 * The tag set an `add_tags`/`remove_tags` edit leaves, computed from the ticket as stored inside
 * the update's transaction (so a concurrent edit's tags are kept), or why it is refused.
 */
function editedTags(current: string[], add: string[], remove: string[]): { tags: string[] } | { refused: string } {
  const removed = new Set(remove);
  const tags = [...current.filter((t) => !removed.has(t)), ...add.filter((t) => !current.includes(t))];
  // Merges may leave more than MAX_TAGS on a ticket; an edit may still remove from such a ticket.
  if (tags.length > MAX_TAGS && tags.length > current.length) return { refused: `a ticket holds at most ${MAX_TAGS} tags; this edit would leave ${tags.length}` };
  return { tags };
}

/**
 * About this much ticket text per pull page (besides the count limit): 5000 tickets with
 * 100 kB descriptions would otherwise be a 500 MB answer.
 */
export const PULL_PAGE_BYTES = 8 * 1024 * 1024;

/**
 * The page size asked for, checked again here: the schema's coercion turns `1e400` into
 * Infinity, which passes its integer and range checks.
 */
function pageLimit(raw: number | undefined, bounds: { default: number; max: number }): number {
  if (raw === undefined) return bounds.default;
  if (!Number.isSafeInteger(raw) || raw < 1 || raw > bounds.max) throw new HttpError(400, `limit must be a whole number from 1 to ${bounds.max}`);
  return raw;
}

const errors = { 400: ErrorSchema, 401: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema, 413: ErrorSchema, 500: ErrorSchema };
const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;

/** The shared token, compared in constant time; every answer without it is 401 `unauthorized` (spec). */
export function installTokenCheck(app: FastifyInstance, token: string): void {
  const matches = secretMatcher(token);
  const auth = new Authenticator<true>({
    schemes: ['Bearer'],
    verify: (c) => (c.kind === 'token' && matches(c.token) ? true : undefined),
    unauthorized: () => new HttpError(401, 'unauthorized'),
  });
  // On the root instance, so that unknown routes and /openapi.json need the token as well.
  installAuth(app, auth, { required: true });
}

export async function ticketRoutes(app: FastifyInstance, deps: TicketRoutesDeps): Promise<void> {
  const { store, hlc, nodeId, clock, maxSkewMs } = deps;
  // A full disk met outside storage() (a hook, a peer copy's write) is still the spec's 500, not
  // the 507 the shared handler gives the other services; every other error goes on to it.
  app.setErrorHandler((err: unknown, req) => {
    if (isDiskFull(err)) throw storageError(err, `${req.method} ${req.routeOptions.url ?? ''}`);
    throw err;
  });

  async function find(id: string): Promise<Ticket> {
    const found = await storage(() => store.lookup(id));
    if (found.kind === 'found') return found.ticket;
    if (found.kind === 'ambiguous') throw new HttpError(409, `ticket id ${quoteForError(id)} is ambiguous: it is the prefix of ${found.matches} tickets; give more characters`);
    // The spec's 404 for any id that names no ticket; the text says why a short one cannot.
    const short = id.trim().length < SHORT_ID_MIN ? ` (a short id needs at least ${SHORT_ID_MIN} characters)` : '';
    throw new HttpError(404, `ticket not found: ${quoteForError(id)}${short}`);
  }

  app.post<{ Body: NewTicket }>(
    '/tickets',
    { schema: { operationId: 'createTicket', summary: 'Create a ticket', body: NewTicketSchema, response: { 201: TicketSchema, ...errors } } },
    async (req, reply) => {
      const b = req.body;
      const stamp = hlc.next();
      const ticket: Ticket = normalize({
        id: randomUUID(),
        short_id: '',
        title: b.title.trim(),
        description: b.description ?? '',
        status: enumField('status', b.status, parseStatus) ?? DEFAULTS.status,
        priority: enumField('priority', b.priority, parsePriority) ?? DEFAULTS.priority,
        channel: enumField('channel', b.channel, parseChannel) ?? DEFAULTS.channel,
        source: b.source?.trim() || DEFAULTS.source,
        requester: blankToNull(b.requester) ?? null,
        assignee: blankToNull(b.assignee) ?? null,
        tags: cleanTags(b.tags) ?? [],
        created_at: stamp,
        updated_at: stamp,
        updated_by: nodeId,
        field_stamps: { base: [stamp, nodeId] },
      });
      if (ticket.title === '') throw new HttpError(400, 'title must not be blank');
      ticket.short_id = ticket.id.slice(0, SHORT_ID_MIN);
      await storage(() => store.insert(ticket));
      req.log.info({ ticket: ticket.short_id }, 'ticket created');
      return reply.code(201).send(ticketAnswer(ticket, 0));
    },
  );

  app.get<{ Querystring: ListQuery }>(
    '/tickets',
    { schema: { operationId: 'listTickets', summary: 'List tickets, filtered and searched', querystring: ListQuerySchema, response: { 200: ListResponseSchema, ...errors } } },
    async (req) => {
      const q = req.query;
      const after = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined;
      if (q.cursor !== undefined && after === undefined) throw new HttpError(400, `invalid cursor: ${quoteForError(q.cursor)}; pass the next_cursor of a previous page`);
      const refused = q.search !== undefined ? searchProblem(q.search) : undefined;
      if (refused !== undefined) throw new HttpError(400, refused);
      // Spec: an unparseable status, priority or channel is ignored (no filter), not an error.
      const filter = {
        status: parseStatus(q.status),
        priority: parsePriority(q.priority),
        channel: parseChannel(q.channel),
        source: q.source !== undefined && q.source !== '' ? q.source : undefined,
        assignee: personMatch(q.assignee),
        requester: personMatch(q.requester),
        search: q.search,
      };
      const page = await storage(() => store.list(filter, { limit: pageLimit(q.limit, LIST_LIMIT), after }));
      const count = await storage(() => store.count(filter));
      return { data: page.tickets, count: count.n, ...(count.capped ? { count_capped: true } : {}), next_cursor: page.next ? encodeCursor(page.next) : null };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/tickets/:id',
    { schema: { operationId: 'getTicket', summary: 'Get a ticket by id or unambiguous short id, with its comments', params: idParams, response: { 200: TicketWithCommentsSchema, ...errors } } },
    async (req) => {
      const t = await find(req.params.id);
      const comments = (t.comment_count ?? 0) > 0 ? await storage(() => store.comments(t.id)) : [];
      return ticketWithComments(t, comments);
    },
  );

  app.post<{ Params: { id: string }; Body: NewComment }>(
    '/tickets/:id/comments',
    { schema: { operationId: 'addComment', summary: 'Add a comment to a ticket', params: idParams, body: NewCommentSchema, response: { 201: CommentSchema, ...errors } } },
    async (req, reply) => {
      const body = req.body.body;
      if (Buffer.byteLength(body) > COMMENT_MAX_BYTES) throw new HttpError(413, `a comment holds at most ${COMMENT_MAX_BYTES} bytes of UTF-8; this one has ${Buffer.byteLength(body)}`);
      if (body.trim() === '') throw new HttpError(400, 'a comment must not be empty');
      if (COMMENT_CONTROL.test(body)) throw new HttpError(400, 'a comment is text: control characters other than tab, newline and carriage return are refused');
      const author = req.body.author?.trim() || nodeId;
      const t = await find(req.params.id);
      const comment = { id: randomUUID(), body, author, created_at: hlc.next(), by: nodeId };
      const outcome = await storage(() => store.addComment(t.id, comment));
      if (outcome === 'missing') throw new HttpError(404, `ticket not found: ${quoteForError(req.params.id)}`);
      if (outcome === 'full') throw new HttpError(413, `a ticket holds at most ${MAX_COMMENTS} comments`);
      req.log.info({ ticket: t.short_id }, 'comment added');
      return reply.code(201).send({ id: comment.id, body, author, created_at: comment.created_at });
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/tickets/:id',
    { schema: { operationId: 'deleteTicket', summary: 'Delete a ticket (on every peer, for good)', params: idParams, response: { 204: { type: 'null', description: 'deleted' }, ...errors } } },
    async (req, reply) => {
      const t = await find(req.params.id);
      const done = await storage(() => store.delete(t.id, [hlc.next(), nodeId]));
      if (!done) throw new HttpError(404, `ticket not found: ${quoteForError(req.params.id)}`);
      req.log.info({ ticket: t.short_id }, 'ticket deleted');
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { id: string }; Querystring: { limit?: number; cursor?: string } }>(
    '/tickets/:id/history',
    { schema: { operationId: 'ticketHistory', summary: 'The changes of a ticket, newest first, paged', params: idParams, querystring: HistoryQuerySchema, response: { 200: HistoryResponseSchema, ...errors } } },
    async (req) => {
      const limit = pageLimit(req.query.limit, HISTORY_LIMIT);
      const before = req.query.cursor !== undefined ? decodeHistoryCursor(req.query.cursor) : undefined;
      if (req.query.cursor !== undefined && before === undefined) throw new HttpError(400, `invalid cursor: ${quoteForError(req.query.cursor)}; pass the next_cursor of a previous page`);
      // A deleted ticket is found by its full id only (its tombstone is not in the id index of live tickets).
      const key = req.params.id.trim().toLowerCase();
      const found = await storage(() => store.lookup(key));
      const id = found.kind === 'found' ? found.ticket.id : key.length === 36 ? key : (await find(req.params.id)).id;
      const page = await storage(() => store.history(id, { limit, before }));
      if (page === undefined) throw new HttpError(404, `ticket not found: ${quoteForError(req.params.id)}`);
      return { data: page.entries, next_cursor: page.next ? encodeHistoryCursor(page.next) : null };
    },
  );

  app.patch<{ Params: { id: string }; Body: UpdateTicket }>(
    '/tickets/:id',
    {
      schema: {
        operationId: 'updateTicket',
        summary: 'Change a ticket (status and the other editable fields)',
        params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        body: UpdateTicketSchema,
        response: { 200: TicketSchema, ...errors },
      },
    },
    async (req) => {
      const current = await find(req.params.id);
      const b = req.body ?? {};
      const changes = {
        status: enumField('status', b.status, parseStatus),
        priority: enumField('priority', b.priority, parsePriority),
        channel: enumField('channel', b.channel, parseChannel),
        title: b.title?.trim(),
        description: b.description,
        source: b.source?.trim(),
        requester: blankToNull(b.requester),
        assignee: blankToNull(b.assignee),
        tags: cleanTags(b.tags),
      };
      if (changes.title === '') throw new HttpError(400, 'title must not be blank');
      if (changes.source === '') throw new HttpError(400, 'source must not be blank');
      const add = cleanTags(b.add_tags);
      const remove = cleanTags(b.remove_tags);
      if (changes.tags !== undefined && (add !== undefined || remove !== undefined)) throw new HttpError(400, 'give tags (which replaces every tag) or add_tags and remove_tags, not both');
      const both = add?.find((t) => remove?.includes(t));
      if (both !== undefined) throw new HttpError(400, `tag ${quoteForError(both)} is both added and removed`);
      let refused: string | undefined;
      const updated = await storage(() =>
        store.update(current.id, (stored) => {
          const recorded = (next: Ticket | undefined): Ticket | undefined => (next === undefined ? undefined : withHistory(stored, next));
          if (add === undefined && remove === undefined) return recorded(applyEdit(stored, changes, () => [hlc.next(), nodeId]));
          // Read-modify-write inside the store's transaction: the tags are those stored now.
          const edited = editedTags(stored.tags, add ?? [], remove ?? []);
          if ('refused' in edited) {
            refused = edited.refused;
            return undefined;
          }
          return recorded(applyEdit(stored, { ...changes, tags: edited.tags }, () => [hlc.next(), nodeId]));
        }),
      );
      if (refused !== undefined) throw new HttpError(400, refused);
      if (!updated) throw new HttpError(404, `ticket not found: ${quoteForError(req.params.id)}`);
      if (updated.updated_at !== current.updated_at) req.log.info({ ticket: updated.short_id }, 'ticket updated');
      return updated;
    },
  );

  /**
   * A first page's `since` (the puller's cursor less its overlap) narrowed to the copies that
   * arrived here since the puller's previous round (late-arrivals.ts); as asked when the puller
   * did not say, the page continues a group (`cursor`), or what arrived is not known.
   */
  const narrowPull = (since: string, q: { cursor?: string; since_cursor?: string; late_after?: number }, asker: unknown): string => {
    if (q.cursor !== undefined || q.since_cursor === undefined || q.late_after === undefined) return since;
    const cursor = normalizeStamp(q.since_cursor);
    if (cursor === undefined) throw new HttpError(400, `since_cursor is not an RFC 3339 timestamp: ${JSON.stringify(q.since_cursor)}`);
    // Copies the asking node sent us itself are not late for it (a claim of another's id only narrows its own answer).
    return narrowedSince(since, cursor, store.arrivals.oldestSince(q.late_after, typeof asker === 'string' && asker.length <= 100 ? asker : undefined));
  };

  app.get<{ Querystring: { since: string; limit?: number; split?: boolean; cursor?: string; since_cursor?: string; late_after?: number } }>(
    '/sync/pull',
    { schema: { operationId: 'syncPull', summary: 'Tickets updated after `since`, oldest first, one page', querystring: PullQuerySchema, response: { 200: PullResponseSchema, ...errors } } },
    async (req) => {
      const asked = normalizeStamp(req.query.since);
      if (asked === undefined) throw new HttpError(400, `since is not an RFC 3339 timestamp: ${JSON.stringify(req.query.since)}`);
      const split = req.query.split === true;
      const after = split && req.query.cursor !== undefined ? decodeCursor(req.query.cursor) : undefined;
      if (split && req.query.cursor !== undefined && after === undefined) throw new HttpError(400, 'invalid cursor');
      // Read before the page, so that whatever arrives while it is read counts in the next round.
      const arrivalsAt = store.arrivals.now();
      const since = narrowPull(asked, req.query, req.headers[SENDER_HEADER]);
      const page = await storage(() => store.changedSince(since, { limit: pageLimit(req.query.limit, PULL_LIMIT), maxBytes: PULL_PAGE_BYTES, split, after }));
      const tickets = page.tickets;
      return { tickets, count: tickets.length, node_id: nodeId, has_more: page.more, next_since: tickets[tickets.length - 1]?.updated_at ?? null, ...(page.next ? { next_cursor: encodeCursor(page.next) } : {}), arrivals_at: arrivalsAt };
    },
  );

  app.post<{ Body: unknown[] }>(
    '/sync/push',
    { schema: { operationId: 'syncPush', summary: 'Offer ticket copies; last writer wins', body: PushBodySchema, response: { 200: PushResponseSchema, ...errors } } },
    async (req) => {
      const now = clock.now();
      const screened = screenPeerCopies(req.body, now, maxSkewMs);
      const { copies } = screened;
      let result = { accepted: 0, rejected: copies.length + screened.tombstones.length };
      try {
        const from = req.headers[SENDER_HEADER];
        result = await offerCopies(store, hlc, [...copies, ...screened.tombstones], now, maxSkewMs, typeof from === 'string' && from.length <= 100 ? from : undefined);
      } catch (err) {
        // Spec: a failed upsert counts as rejected; the push itself still answers 200.
        req.log.error({ err: (err as Error).message }, 'sync push: storing failed');
      }
      // A pushing peer is known only by its address: its node id is not part of the push.
      logRefusals(req.log, req.ip, screened, maxSkewMs);
      return { accepted: result.accepted, rejected: result.rejected + screened.malformed + screened.tooFarAhead.length };
    },
  );

  app.get(
    '/sync/node',
    { schema: { operationId: 'syncNode', summary: 'This node id', response: { 200: NodeResponseSchema, ...errors } } },
    async () => ({ node_id: nodeId }),
  );
}
