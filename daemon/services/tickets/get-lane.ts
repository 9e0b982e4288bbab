// GET /tickets/{id} taken before fastify (daemon/direct-routes.ts) when the answer is already in
// memory: the store's lookup cache holds the ticket and it has no comments, so the answer needs no
// statement and no promise. fastify's routing, hooks and reply cost this request more than its own
// work (bench/README.md, "GET /tickets/{id} and the key rows taken before fastify"). The lane
// answers only what the fastify route would answer 200 with the same bytes: a `Bearer` header
// carrying the token, a full id in lower case as the cache keys it, no query string, no escape.
// Anything else (no token or a wrong one, a short id, a ticket with comments or not cached, HEAD)
// it declines untouched, and the route in routes.ts answers it as before.
import { TicketWithCommentsSchema, type Ticket } from '../../../src/schemas/tickets.js';
import { ticketWithComments } from './ticket-answer.js';
import type { DirectRoutes, Lane } from '../../direct-routes.js';

const PREFIX = '/tickets/';
/** A ticket id as the cache keys it: a UUID in lower case. Anything else the route resolves. */
const FULL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The answer's properties in the schema's order: JSON.stringify writes these and no others (not field_stamps). */
const ANSWER_KEYS = Object.keys(TicketWithCommentsSchema.properties);

/**
 * The route's 200 answer for a ticket without comments, as TicketWithCommentsSchema serializes it:
 * the store's field-by-field view with no comments, written through the schema's list of
 * properties. test/daemon/services/tickets/get-lane.test.ts holds it equal to the schema's
 * serializer.
 */
export function uncommentedTicketText(t: Ticket): string {
  return JSON.stringify(ticketWithComments(t, []), ANSWER_KEYS);
}

export interface TicketGetLaneDeps {
  /** The ticket the store holds in memory under this full id, if any (SqliteTicketStore.cached). */
  cached(id: string): Ticket | undefined;
  /** The shared token's constant-time check (the route's own, plugins/bearer.ts), of `presented` from `from` on. */
  tokenMatches(presented: string, from: number): boolean;
}

/** The lane of GET /tickets/{id}. */
export function ticketGetLane(direct: DirectRoutes, deps: TicketGetLaneDeps): Lane {
  const route = direct.route('GET', '/tickets/:id');
  // The store replaces a cached ticket with a new object whenever it changes (never edits one in
  // place), so an answer made from an object stays its answer: a ticket read again and again is
  // serialized once (2.3 µs a request otherwise, a fifth of what the lane adds to bare node:http).
  const texts = new WeakMap<Ticket, string>();
  return (req, res, url) => {
    if (req.method !== 'GET') return false;
    const id = url.slice(PREFIX.length);
    if (!FULL_ID.test(id)) return false;
    // The one form clients send; other spellings (`bearer`, extra spaces, Basic) the auth plugin reads.
    const auth = req.headers.authorization;
    if (auth === undefined || !auth.startsWith('Bearer ') || !deps.tokenMatches(auth, 7)) return false;
    const t = deps.cached(id);
    if (t === undefined || (t.comment_count ?? 0) !== 0) return false;
    let text = texts.get(t);
    if (text === undefined) texts.set(t, (text = uncommentedTicketText(t)));
    direct.begin(res, route).send(200, text);
    return true;
  };
}
