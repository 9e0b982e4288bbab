// Ticket tracker wire types: TypeBox schemas shared by the server's validation, its OpenAPI
// document and the typed client, plus the enum parsers both sides use.
import { Type, type Static } from '@sinclair/typebox';

/** Support-desk lifecycle (Zendesk's, with `on_hold` spelled out). */
export const STATUSES = ['open', 'pending', 'on_hold', 'solved', 'closed'] as const;
export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export const CHANNELS = ['email', 'web', 'chat', 'phone', 'api'] as const;
export type Status = (typeof STATUSES)[number];
export type Priority = (typeof PRIORITIES)[number];
export type Channel = (typeof CHANNELS)[number];

export const DEFAULTS = { status: 'open', priority: 'normal', channel: 'api', source: 'manual' } as const;

/** Case-insensitive, with `-` or a space accepted for `_` ("On Hold" parses as on_hold). */
function parser<T extends string>(values: readonly T[]): (raw: unknown) => T | undefined {
  return (raw) => {
    if (typeof raw !== 'string') return undefined;
    const v = raw.trim().toLowerCase().replace(/[\s-]+/g, '_');
    return (values as readonly string[]).includes(v) ? (v as T) : undefined;
  };
}
export const parseStatus = parser(STATUSES);
export const parsePriority = parser(PRIORITIES);
export const parseChannel = parser(CHANNELS);

// A type list rather than anyOf: the response serializer then needs no validator to pick a branch.
const NullableString = Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: 500 });
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 });

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
  },
);
export type Ticket = Static<typeof TicketSchema>;

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

export const UpdateTicketSchema = Type.Object({ title: Type.Optional(Title), ...OptionalFields }, { additionalProperties: false });
export type UpdateTicket = Static<typeof UpdateTicketSchema>;

// Bounded like the fields they match: a longer value cannot match anything, and a search of
// thousands of words would cost thousands of FTS5 prefix scans.
export const ListQuerySchema = Type.Object({
  status: Type.Optional(Type.String({ maxLength: 100 })),
  priority: Type.Optional(Type.String({ maxLength: 100 })),
  channel: Type.Optional(Type.String({ maxLength: 100 })),
  source: Type.Optional(Type.String({ maxLength: 200 })),
  search: Type.Optional(Type.String({ maxLength: 1000, description: 'full-text search over title and description; words split on whitespace and control characters' })),
});
export type ListQuery = Static<typeof ListQuerySchema>;

export const ListResponseSchema = Type.Object({ data: Type.Array(TicketSchema), count: Type.Integer() });
export type ListResponse = Static<typeof ListResponseSchema>;

export const PullQuerySchema = Type.Object({ since: Type.String({ description: 'RFC 3339; tickets updated after it' }) });
export const PullResponseSchema = Type.Object({ tickets: Type.Array(TicketSchema), count: Type.Integer(), node_id: Type.String() });
export type PullResponse = Static<typeof PullResponseSchema>;

/** Each element is checked on its own: a bad one is rejected, the rest still count. */
export const PushBodySchema = Type.Array(Type.Unknown());
export const PushResponseSchema = Type.Object({ accepted: Type.Integer(), rejected: Type.Integer() });
export type PushResponse = Static<typeof PushResponseSchema>;

export const NodeResponseSchema = Type.Object({ node_id: Type.String() });
export type NodeResponse = Static<typeof NodeResponseSchema>;

export const ErrorSchema = Type.Object({ error: Type.String() });
