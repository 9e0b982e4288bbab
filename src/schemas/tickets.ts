// Ticket tracker wire types: TypeBox schemas shared by the server's validation, its OpenAPI
// document and the typed client, plus the enum parsers both sides use.
import { Type, type Static } from '@sinclair/typebox';
// The shared error body, re-exported so a service's routes import their wire types from one module.
export { ErrorSchema } from './common.js';

// The enumerations live in a leaf without TypeBox, which the CLI's flag choices read too.
import { CHANNELS, PRIORITIES, STATUSES } from './ticket-values.js';
export { CHANNELS, PRIORITIES, STATUSES, parseChannel, parsePriority, parseStatus, type Channel, type Priority, type Status } from './ticket-values.js';

/** The fewest leading characters of an id that name a ticket (a short id; `short_id` has this many). */
export const SHORT_ID_MIN = 8;

export const DEFAULTS = { status: 'open', priority: 'normal', channel: 'api', source: 'manual' } as const;

// A type list rather than anyOf: the response serializer then needs no validator to pick a branch.
const NullableString = Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: 500 });
/** The most tags a create or update may leave on a ticket (peer merges may pass it; see docs/tickets.md). */
export const MAX_TAGS = 50;
const Tag = Type.String({ minLength: 1, maxLength: 100 });
const Tags = Type.Array(Tag, { maxItems: MAX_TAGS });

export const TicketSchema = Type.Object(
  {
    id: Type.String({ description: 'UUID' }),
    short_id: Type.String({ description: 'first 8 characters of id; accepted wherever an id is' }),
    title: Type.String(),
    description: Type.String(),
    status: Type.String({ enum: [...STATUSES] }),
    priority: Type.String({ enum: [...PRIORITIES] }),
    channel: Type.String({ enum: [...CHANNELS] }),
    source: Type.String({ description: 'free-form origin: a mailbox, form or integration name' }),
    requester: NullableString,
    assignee: NullableString,
    tags: Type.Array(Type.String()),
    created_at: Type.String({ description: 'RFC 3339 UTC, millisecond precision' }),
    updated_at: Type.String({ description: 'RFC 3339 UTC, millisecond precision; last-writer-wins key' }),
    updated_by: Type.String({ description: 'node_id of the node that made the last edit' }),
    comment_count: Type.Optional(Type.Integer({ description: 'how many comments the ticket holds (lists show the count, GET /tickets/{id} the comments)' })),
  },
);
/** `[stamp, node id]`: when and where a field was last set (RFC 3339 UTC ms, canonical). */
export type FieldStamp = [string, string];
/** `[stamp, node id, present]`: the last add (true) or remove (false) of one tag. */
export type TagStamp = [string, string, boolean];
/**
 * Per-field hybrid-clock stamps (the `field_stamps` sync property). `base` stamps every field
 * not listed and every tag in `tags` without an entry: the creation of the ticket, or the
 * whole-ticket copy it was last replaced by. Peers without field stamps ignore the property.
 */
export interface FieldStamps {
  base: FieldStamp;
  title?: FieldStamp;
  description?: FieldStamp;
  status?: FieldStamp;
  priority?: FieldStamp;
  channel?: FieldStamp;
  source?: FieldStamp;
  requester?: FieldStamp;
  assignee?: FieldStamp;
  tags?: Record<string, TagStamp>;
}

/** The fields merged one by one, each under its own stamp; tags merge as a set. */
export const STAMPED_FIELDS = ['title', 'description', 'status', 'priority', 'channel', 'source', 'requester', 'assignee'] as const;
export type StampedField = (typeof STAMPED_FIELDS)[number];

const FieldStampSchema = Type.Unsafe<FieldStamp>({ type: 'array', items: [{ type: 'string' }, { type: 'string' }], minItems: 2, maxItems: 2 });
const TagStampSchema = Type.Unsafe<TagStamp>({ type: 'array', items: [{ type: 'string' }, { type: 'string' }, { type: 'boolean' }], minItems: 3, maxItems: 3 });
export const FieldStampsSchema = Type.Unsafe<FieldStamps>({
  type: 'object',
  description: 'per-field stamps for field-by-field merging; see docs/tickets.md',
  properties: {
    base: FieldStampSchema,
    ...Object.fromEntries(STAMPED_FIELDS.map((f) => [f, FieldStampSchema])),
    tags: { type: 'object', additionalProperties: TagStampSchema },
  },
  required: ['base'],
});

/** The most UTF-8 bytes of a comment's body (over: 413); an empty or blank body is 400. */
export const COMMENT_MAX_BYTES = 16384;
/**
 * Characters a comment's body may not hold (400; a peer's copy with one is malformed): control
 * characters other than tab, newline and carriage return. Comments are text, and these are what
 * JSON escapes six characters a byte: without them a ticket's comments, each at most
 * COMMENT_MAX_BYTES, grow at most twice in JSON, and the largest ticket stays within a pull.
 */
// eslint-disable-next-line no-control-regex -- control characters are what this finds
export const COMMENT_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
/** Comments a ticket may hold for a local add (the next one: 413). */
export const MAX_COMMENTS = 1000;
/** Comments a peer's copy may carry (concurrent adds on several nodes may pass MAX_COMMENTS); beyond: malformed. */
export const MAX_PEER_COMMENTS = 2000;
/** Field-change entries kept per ticket: the newest by (at, by, field, tag), so every node keeps the same. */
export const MAX_HISTORY = 1000;
/** The longest `from`/`to` a history entry keeps (a description is cut to this many characters). */
export const HISTORY_VALUE_MAX = 1000;
/** The longest comment author. */
export const AUTHOR_MAX = 100;

/** A comment as the API shows it. */
export interface Comment {
  id: string;
  body: string;
  author: string;
  created_at: string;
}
/** A comment as stored and synced: with the node that added it. */
export interface PeerComment extends Comment {
  by: string;
}
/** One recorded change of a ticket (see docs/tickets.md, "History"). */
export interface HistoryEntry {
  field: string;
  from: string | null;
  to: string | null;
  at: string;
  by: string;
}

/**
 * A ticket as stored and synced: the spec's Ticket plus, between peers, its field stamps, its
 * comments and its history. `comment_count` is what lists show (their pages leave the bodies out).
 */
export type Ticket = Static<typeof TicketSchema> & { field_stamps?: FieldStamps; comments?: PeerComment[]; history?: HistoryEntry[]; comment_count?: number };

/** A deleted ticket as stored and synced until it is purged: no title, so an older node refuses it. */
export interface Tombstone {
  id: string;
  updated_at: string;
  updated_by: string;
  deleted: { at: string; by: string };
  history: HistoryEntry[];
}
/** What a pull page and a push carry: live tickets and tombstones. */
export type SyncItem = Ticket | Tombstone;
export function isTombstone(x: SyncItem): x is Tombstone {
  return (x as Tombstone).deleted !== undefined;
}

const CommentSchema = Type.Object({ id: Type.String(), body: Type.String(), author: Type.String(), created_at: Type.String() });
const PeerCommentSchema = Type.Object({ ...CommentSchema.properties, by: Type.String() });
const AnyNullableString = Type.Unsafe<string | null>({ type: ['string', 'null'] });
const HistoryEntrySchema = Type.Object({ field: Type.String(), from: AnyNullableString, to: AnyNullableString, at: Type.String(), by: Type.String() });

/** The sync form: the API's Ticket with `field_stamps`, `comments` and `history`, or a tombstone. */
export const SyncTicketSchema = Type.Object({
  ...TicketSchema.properties,
  title: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  status: Type.Optional(Type.String()),
  priority: Type.Optional(Type.String()),
  channel: Type.Optional(Type.String()),
  source: Type.Optional(Type.String()),
  requester: Type.Optional(NullableString),
  assignee: Type.Optional(NullableString),
  tags: Type.Optional(Type.Array(Type.String())),
  short_id: Type.Optional(Type.String()),
  created_at: Type.Optional(Type.String()),
  field_stamps: Type.Optional(FieldStampsSchema),
  comments: Type.Optional(Type.Array(PeerCommentSchema)),
  history: Type.Optional(Type.Array(HistoryEntrySchema)),
  deleted: Type.Optional(Type.Object({ at: Type.String(), by: Type.String() }, { description: 'present on a tombstone: the ticket was deleted then, there' })),
});

/** `GET /tickets/{id}`: the ticket with its comments, oldest first. */
export const TicketWithCommentsSchema = Type.Object({ ...TicketSchema.properties, comment_count: Type.Integer(), comments: Type.Array(CommentSchema) });
export const NewCommentSchema = Type.Object(
  { body: Type.String({ description: `at most ${COMMENT_MAX_BYTES} UTF-8 bytes (413 beyond), not blank` }), author: Type.Optional(Type.String({ maxLength: AUTHOR_MAX, description: 'default: the node id' })) },
  { additionalProperties: false },
);
export type NewComment = Static<typeof NewCommentSchema>;
export { CommentSchema };

/** `GET /tickets/{id}/history` page sizes. */
export const HISTORY_LIMIT = { default: 50, max: 500 } as const;
export const HistoryQuerySchema = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: HISTORY_LIMIT.max, description: `entries per page (default ${HISTORY_LIMIT.default})` })),
  cursor: Type.Optional(Type.String({ maxLength: 1000, description: 'the next_cursor of the previous page' })),
});
export const HistoryResponseSchema = Type.Object({
  data: Type.Array(Type.Object({ ...HistoryEntrySchema.properties, lost: Type.Optional(Type.Literal(true)) })),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

// Enum fields are plain strings on the wire and parsed in the handler, so that a bad value
// gets the spec's "invalid status" text naming it rather than a generic schema message.
const Title = Type.String({ minLength: 1, maxLength: 500 });
/** The fields besides the title that a create may set and an update may change. */
const OptionalFields = {
  description: Type.Optional(Type.String({ maxLength: 100_000 })),
  status: Type.Optional(Type.String()),
  priority: Type.Optional(Type.String()),
  channel: Type.Optional(Type.String()),
  source: Type.Optional(Type.String({ maxLength: 200 })),
  requester: Type.Optional(NullableString),
  assignee: Type.Optional(NullableString),
  tags: Type.Optional(Tags),
};

export const NewTicketSchema = Type.Object({ title: Title, ...OptionalFields }, { additionalProperties: false });
export type NewTicket = Static<typeof NewTicketSchema>;

/**
 * Our extension of the spec's update body: `add_tags` and `remove_tags` change single tags in the
 * same transaction that reads the ticket, so two edits on one node never undo each other's tags
 * (`tags` replaces the whole set and may not be combined with them). requester and assignee: null,
 * "" or blanks clear the field (stored as null).
 */
export const UpdateTicketSchema = Type.Object(
  {
    title: Type.Optional(Title),
    ...OptionalFields,
    add_tags: Type.Optional(Type.Array(Tag, { maxItems: MAX_TAGS, description: 'tags to add to those the ticket has (not with `tags`)' })),
    remove_tags: Type.Optional(Type.Array(Tag, { maxItems: MAX_TAGS, description: 'tags to remove; one the ticket lacks is no change (not with `tags`)' })),
  },
  { additionalProperties: false },
);
export type UpdateTicket = Static<typeof UpdateTicketSchema>;

// Bounded like the fields they match: a longer value cannot match anything, and a search of
// thousands of words would cost thousands of FTS5 prefix scans.
/** Page sizes of `GET /tickets` and `GET /sync/pull` (docs/tickets.md, "Pages"). */
export const LIST_LIMIT = { default: 100, max: 1000 } as const;
export const PULL_LIMIT = { default: 1000, max: 5000 } as const;

/**
 * The assignee and requester filters' two words besides a name, as GitHub's issues API spells
 * them (`assignee=none`, `assignee=*`); a person literally named `none` cannot be filtered for.
 */
export const PERSON_NONE = 'none';
export const PERSON_ANY = '*';

export const ListQuerySchema = Type.Object({
  status: Type.Optional(Type.String({ maxLength: 100 })),
  priority: Type.Optional(Type.String({ maxLength: 100 })),
  channel: Type.Optional(Type.String({ maxLength: 100 })),
  source: Type.Optional(Type.String({ maxLength: 200 })),
  assignee: Type.Optional(Type.String({ maxLength: 500, description: `our extension: tickets assigned to exactly this value; \`${PERSON_NONE}\` for unassigned ones, \`${PERSON_ANY}\` for assigned ones` })),
  requester: Type.Optional(Type.String({ maxLength: 500, description: `our extension: tickets requested by exactly this value; \`${PERSON_NONE}\` for those without a requester, \`${PERSON_ANY}\` for those with one` })),
  search: Type.Optional(Type.String({ maxLength: 1000, description: 'full-text search over title and description; words split on whitespace and control characters' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_LIMIT.max, description: `tickets per page (default ${LIST_LIMIT.default})` })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'the next_cursor of the previous page' })),
});
export type ListQuery = Static<typeof ListQuerySchema>;

export const ListResponseSchema = Type.Object({
  data: Type.Array(TicketSchema),
  count: Type.Integer({ description: 'tickets matching the filters, on every page together; a search counts at most 10,000' }),
  count_capped: Type.Optional(Type.Boolean({ description: 'present and true when a search matched more tickets than it counts' })),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as `cursor` for the next page; null on the last page' }),
});
export type ListResponse = Static<typeof ListResponseSchema>;

export const PullQuerySchema = Type.Object({
  since: Type.String({ description: 'RFC 3339; tickets updated after it' }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PULL_LIMIT.max, description: `tickets per page (default ${PULL_LIMIT.default}); a page never splits tickets sharing one updated_at, unless split` })),
  split: Type.Optional(Type.Boolean({ description: 'our extension: the page may end inside a group sharing one updated_at (next_cursor continues it), so no page passes about 8 MiB of ticket text' })),
  cursor: Type.Optional(Type.String({ maxLength: 100, description: 'with split: start after this next_cursor of an earlier page instead of after since' })),
  since_cursor: Type.Optional(Type.String({ maxLength: 40, description: 'our extension, with late_after: the puller\'s cursor, later than since by its overlap; the node starts after it, or before it only as far as the oldest copy that arrived here since late_after' })),
  late_after: Type.Optional(Type.Integer({ minimum: 0, description: 'our extension, with since_cursor: arrivals_at of the puller\'s previous round with this node' })),
});
export const PullResponseSchema = Type.Object({
  tickets: Type.Array(SyncTicketSchema),
  count: Type.Integer({ description: 'tickets on this page' }),
  node_id: Type.String(),
  has_more: Type.Boolean({ description: 'true when tickets updated after next_since remain' }),
  next_since: Type.Union([Type.String(), Type.Null()], { description: 'the greatest updated_at on this page (the spec cursor); null when the page is empty' }),
  next_cursor: Type.Optional(Type.String({ description: 'with split and has_more: where the next page starts (pass it as cursor)' })),
  arrivals_at: Type.Optional(Type.Integer({ description: 'our extension: this node\'s clock (epoch ms) as it read the page; pass it as late_after in the next round' })),
});
export type PullResponse = Static<typeof PullResponseSchema>;

/** Each element is checked on its own: a bad one is rejected, the rest still count. */
/** The node id of a pushing peer (our peers send it), so that what it sent is not sent back. */
export const SENDER_HEADER = 'x-mkt-node-id';

/** The bounds of one `POST /sync/push`: more tickets is 400, a larger body 413 (docs/tickets.md). */
export const PUSH_LIMIT = { tickets: 2000, bytes: 16 * 1024 * 1024 } as const;
export const PushBodySchema = Type.Array(Type.Unknown(), { maxItems: PUSH_LIMIT.tickets });
export const PushResponseSchema = Type.Object({ accepted: Type.Integer(), rejected: Type.Integer() });
export type PushResponse = Static<typeof PushResponseSchema>;

export const NodeResponseSchema = Type.Object({ node_id: Type.String() });
export type NodeResponse = Static<typeof NodeResponseSchema>;
