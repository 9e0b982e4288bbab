// Git-notes wire types (spec: marketplace-notes-license "Git notes"): TypeBox schemas shared by
// the server's validation, its OpenAPI document and the typed client. The records the spec
// leaves "not shown" are shaped as a user of Gitea's notes API would expect (docs/notes.md).
import { Type, type Static } from '@sinclair/typebox';

export const DEFAULT_NAMESPACE = 'commits';
/** Largest note accepted by put_note, in UTF-8 bytes (larger content answers 422). */
export const MAX_NOTE_BYTES = 1024 * 1024;
export const SEARCH_DEFAULT_LIMIT = 50;
export const SEARCH_MAX_LIMIT = 200;
/** Notes-ref commits walked at most when looking for a note's attribution. */
export const ATTRIBUTION_WALK_LIMIT = 1000;
/** Versions a history answer holds by default, and at most (a larger `limit` is capped). */
export const HISTORY_DEFAULT_LIMIT = 20;
export const HISTORY_MAX_LIMIT = 100;
/** Note text one history answer carries at most; the versions past it are left for a smaller `limit`. */
export const HISTORY_MAX_BYTES = 16 * 1024 * 1024;
export const OBJECT_ID_PATTERN = '^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$';

const ObjectType = Type.String({ enum: ['commit', 'tree', 'blob', 'tag', 'unknown'], description: 'type of the annotated object (`unknown`: the repository does not hold it)' });

export const MergeStrategySchema = Type.String({
  enum: ['manual', 'ours', 'theirs', 'union', 'cat_sort_uniq'],
  description:
    "how the server joins a notes ref's diverged histories, as `git notes merge -s <strategy>` (set with `mkt admin repo notes-merge`): `manual` (the default) joins nothing, so git refuses a push that does not fast-forward the ref unless forced (a forced one replaces it); with any other, such a push, and a note write racing one, is merged into the ref (its notes are ours, the arriving ones theirs)",
});
export const NamespaceEntrySchema = Type.Object({
  name: Type.String({ description: 'namespace name as a person says it, e.g. `commits` or `reviews/security`' }),
  git_ref: Type.String({ description: 'the ref the namespace lives on, e.g. `refs/notes/commits`' }),
  tip: Type.String({ description: 'object id the ref points at' }),
  notes: Type.Integer({ description: 'number of notes in the namespace' }),
  merge_strategy: MergeStrategySchema,
});
export type NamespaceEntry = Static<typeof NamespaceEntrySchema>;
export const NamespacesResponseSchema = Type.Object({ data: Type.Array(NamespaceEntrySchema) });
export type NamespacesResponse = Static<typeof NamespacesResponseSchema>;

export const NoteAttributionSchema = Type.Object({
  commit: Type.String({ description: 'the notes commit that set the note to its current content' }),
  name: Type.String({ description: 'author name' }),
  email: Type.String({ description: 'author email' }),
  at: Type.String({ format: 'date-time', description: 'time of writing' }),
  exact: Type.Boolean({
    description: `false when the walk of the notes ref stopped at its bound (${ATTRIBUTION_WALK_LIMIT} commits) before finding the commit that set the content; commit, name, email and at then describe the oldest commit seen that touched the note, or the oldest commit walked`,
  }),
});
export type NoteAttribution = Static<typeof NoteAttributionSchema>;

export const NoteResponseSchema = Type.Object({
  target: Type.String({ description: 'full object id of the annotated object' }),
  object_type: ObjectType,
  namespace: Type.String(),
  git_ref: Type.String(),
  content: Type.String({ description: 'the note text' }),
  blob: Type.String({ description: 'object id of the note blob' }),
  attribution: Type.Optional(NoteAttributionSchema),
});
export type NoteResponse = Static<typeof NoteResponseSchema>;

export const NoteVersionSchema = Type.Object({
  content: Type.Union([Type.String(), Type.Null()], { description: 'the note text this commit left; null: the commit removed the note' }),
  commit: Type.String({ description: 'the notes commit that made this version' }),
  name: Type.String({ description: 'author name' }),
  email: Type.String({ description: 'author email' }),
  at: Type.String({ format: 'date-time', description: 'author time of the commit' }),
});
export type NoteVersion = Static<typeof NoteVersionSchema>;
export const NoteHistoryResponseSchema = Type.Object({
  target: Type.String({ description: 'full object id of the annotated object' }),
  namespace: Type.String(),
  git_ref: Type.String(),
  data: Type.Array(NoteVersionSchema, { description: 'the versions of the note, newest first' }),
  complete: Type.Boolean({
    description: `false when older versions may exist: the walk of the notes ref stopped at its bound (${ATTRIBUTION_WALK_LIMIT} commits), or \`limit\` versions (or ${HISTORY_MAX_BYTES} bytes of text) were reached`,
  }),
});
export type NoteHistoryResponse = Static<typeof NoteHistoryResponseSchema>;

export const PutNoteRequestSchema = Type.Object(
  {
    content: Type.String({ description: `the note text, 1 byte to ${MAX_NOTE_BYTES} bytes of UTF-8; replaces any existing note` }),
    namespace: Type.Optional(Type.String({ description: `namespace to write in; default \`${DEFAULT_NAMESPACE}\` (the query parameter of the same name is also accepted)` })),
    message: Type.Optional(Type.String({ maxLength: 2000, description: 'extra text for the notes commit message (a summary line is always written)' })),
  },
  { additionalProperties: false },
);
export type PutNoteRequest = Static<typeof PutNoteRequestSchema>;

export const WriteResponseSchema = Type.Object({
  target: Type.String(),
  namespace: Type.String(),
  git_ref: Type.String(),
  action: Type.String({ enum: ['added', 'updated', 'unchanged'], description: '`unchanged` when the content was already the note (no commit is made)' }),
  commit: Type.String({ description: 'the notes commit the ref points at after the write' }),
  blob: Type.String({ description: 'object id of the note blob' }),
});
export type WriteResponse = Static<typeof WriteResponseSchema>;

/** Field filters one search takes at most (`field=` repeated). */
export const MAX_FIELD_FILTERS = 20;
/** Object ids one `commits=` list holds at most (search and missing). */
/**
 * Object ids in one `commits=`: 200 SHA-256 ids are a 13 KB query string, under node's 16 KiB
 * limit on a request's head (a longer URL is refused with 431 before any route runs).
 */
export const MAX_COMMITS = 200;
/** Hits a page with `content=true` holds at most: up to 1 MiB a note, so a page stays under ~50 MiB. */
export const CONTENT_MAX_LIMIT = 50;
/** Matched lines one hit carries at most, and the characters kept of each. */
export const HIT_MAX_LINES = 20;
export const HIT_LINE_MAX_CHARS = 500;
/** Groups a `count_by` answer holds at most (the largest counts). */
export const COUNT_MAX_GROUPS = 1000;

const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const MatchedLineSchema = Type.Object({
  n: Type.Integer({ minimum: 1, description: '1-based line number in the note' }),
  text: Type.String({ description: `the line, cut to ${HIT_LINE_MAX_CHARS} characters` }),
});
export type MatchedLine = Static<typeof MatchedLineSchema>;

export const SearchHitSchema = Type.Object({
  repo: Type.String({ description: 'the repository holding the note, `owner/name`' }),
  namespace: Type.String(),
  git_ref: Type.String(),
  target: Type.String({ description: 'full object id of the annotated object (same as `object`)' }),
  object: Type.String({ description: 'full object id of the annotated object' }),
  object_type: ObjectType,
  note_author: NullableString('author name of the notes commit that last changed this note (null until the index has read the notes ref\'s history)'),
  note_email: NullableString('author email of that notes commit'),
  note_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'author time of that notes commit, RFC 3339 UTC (null when unknown)' }),
  commit_subject: NullableString('subject line of the annotated commit (null unless the object is a commit of the repository)'),
  commit_author: NullableString('author name of the annotated commit (null unless the object is a commit of the repository)'),
  snippet: Type.String({
    description: 'words mode: the matching part of the note, matches wrapped in `[` `]`; literal and regex: the first matching line; no query: the start of the note (at most 200 characters)',
  }),
  score: Type.Number({ description: 'words mode with a query: relevance (bm25, higher is better); otherwise 0' }),
  lines: Type.Array(MatchedLineSchema, {
    description: `the lines that matched: words mode, lines holding a query word; literal, lines containing it; regex, matching lines; no query, none (at most ${HIT_MAX_LINES})`,
  }),
  // A map with any keys: `additionalProperties` (rather than TypeBox's Record, a patternProperties)
  // is what OpenAPI generators read as a map.
  fields: Type.Unsafe<Record<string, string[]>>({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    description: 'the fields parsed from the note (trailers `Key: value`, `key=value` lines, top-level scalars of JSON-object lines): key as written -> its values in order',
  }),
  content: Type.Optional(Type.String({ description: 'the whole note text (only with `content=true`)' })),
});
export type SearchHit = Static<typeof SearchHitSchema>;
export const SearchResponseSchema = Type.Object({
  data: Type.Array(SearchHitSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()], {
    description: 'pass as `cursor` (with the same other parameters) for the next page; null at the end. A regex page may hold fewer hits than `limit`, even none, with a non-null cursor',
  }),
  indexed: Type.Boolean({ description: 'whether the search index has seen the repository (false: results may be missing until indexing finishes); owner-wide: every repository searched' }),
  total: Type.Integer({ description: 'number of hits returned in this page' }),
});
export type SearchResponse = Static<typeof SearchResponseSchema>;

export const CountGroupSchema = Type.Object({
  key: Type.String({ description: 'the namespace, the note author, or the field value' }),
  count: Type.Integer({ description: 'matching notes in the group' }),
});
export type CountGroup = Static<typeof CountGroupSchema>;
export const CountResponseSchema = Type.Object({
  groups: Type.Array(CountGroupSchema, { description: `the groups, largest count first then by key (at most ${COUNT_MAX_GROUPS})` }),
  indexed: Type.Boolean({ description: 'as in a search answer' }),
  truncated: Type.Boolean({ description: `true when more than ${COUNT_MAX_GROUPS} groups existed (the smallest were left out)` }),
});
export type CountResponse = Static<typeof CountResponseSchema>;
/** The answer of a search: a page of hits, or with `count_by` the groups. */
export const SearchOrCountResponseSchema = Type.Union([SearchResponseSchema, CountResponseSchema], {
  description: 'a page of hits (`data`, `next_cursor`); with `count_by`, the groups (`groups`, `truncated`)',
});

export const MissingResponseSchema = Type.Object({
  data: Type.Array(Type.Object({ object: Type.String({ description: 'full object id of a commit with no note in the namespace' }) }), {
    description: 'the commits given that have no note in the namespace, in the order given',
  }),
  namespace: Type.String(),
  indexed: Type.Boolean({ description: 'whether the search index has seen the repository (the answer is read from it)' }),
});
export type MissingResponse = Static<typeof MissingResponseSchema>;

export const RepoParamsSchema = Type.Object({ owner: Type.String({ minLength: 1, maxLength: 100 }), repo: Type.String({ minLength: 1, maxLength: 100 }) });
export const NoteParamsSchema = Type.Object({
  owner: Type.String({ minLength: 1, maxLength: 100 }),
  repo: Type.String({ minLength: 1, maxLength: 100 }),
  target: Type.String({ description: 'full object id (40 or 64 hex digits)' }),
});
export const NamespaceQuerySchema = Type.Object({ namespace: Type.Optional(Type.String({ description: `default \`${DEFAULT_NAMESPACE}\`` })) });
export const GetNoteQuerySchema = Type.Object({
  namespace: Type.Optional(Type.String({ description: `default \`${DEFAULT_NAMESPACE}\`` })),
  attribution: Type.Optional(Type.Boolean({ description: 'include who wrote the note (bounded walk of the notes ref)' })),
});
export const HistoryQuerySchema = Type.Object({
  namespace: Type.Optional(Type.String({ description: `default \`${DEFAULT_NAMESPACE}\`` })),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: `most versions to return; default ${HISTORY_DEFAULT_LIMIT}, capped at ${HISTORY_MAX_LIMIT}` })),
});
export const OwnerParamsSchema = Type.Object({ owner: Type.String({ minLength: 1, maxLength: 100, description: "repository owner's username" }) });

export const SEARCH_MODES = ['words', 'literal', 'regex'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

export const SearchQuerySchema = Type.Object({
  q: Type.Optional(
    Type.String({
      description:
        'words mode: bare words (all must match), "quoted phrases", `or` between terms, `-excluded` terms; empty or absent: every note the filters keep. literal: an exact, case-sensitive substring. regex: a regular expression matched per line (RE2-like: no backreferences or lookaround; `(?i)` at the start ignores case)',
    }),
  ),
  mode: Type.Optional(Type.String({ enum: [...SEARCH_MODES], description: 'how `q` is read; default `words` (`literal` and `regex` need a non-empty `q`)' })),
  namespace: Type.Optional(Type.String({ description: 'restrict to one namespace' })),
  commits_only: Type.Optional(Type.Boolean({ description: 'drop notes on blobs and trees' })),
  field: Type.Optional(
    Type.Array(Type.String(), {
      description: `a field filter, repeatable (all must hold; at most ${MAX_FIELD_FILTERS}): \`KEY~text\` (a value of field KEY contains text, ignoring case) or \`KEY=value\` (a value equals value exactly); keys ignore case; the first \`~\` or \`=\` splits`,
    }),
  ),
  author: Type.Optional(Type.String({ description: "the note's author name or email (of the notes commit that last changed it), exact, ignoring case" })),
  since: Type.Optional(Type.String({ description: 'notes written at or after this time: RFC 3339 (`2026-11-29T13:00:00Z`) or a date (`2026-11-29`, midnight UTC)' })),
  until: Type.Optional(Type.String({ description: 'notes written before this time (same forms as `since`)' })),
  commits: Type.Optional(Type.String({ description: `comma-separated full object ids (at most ${MAX_COMMITS}): only notes on these objects` })),
  count_by: Type.Optional(
    Type.String({ description: 'answer groups with counts over every matching note instead of hits: `namespace`, `note_author`, or `field:KEY` (a note counts once per value of KEY)' }),
  ),
  cursor: Type.Optional(Type.String({ description: 'the `next_cursor` of the previous page of the same search' })),
  content: Type.Optional(Type.Boolean({ description: `include each note's whole text in \`content\` (pages then hold at most ${CONTENT_MAX_LIMIT} hits)` })),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: `maximum hits per page; default ${SEARCH_DEFAULT_LIMIT}, capped at ${SEARCH_MAX_LIMIT}` })),
});
export type SearchQuery = Static<typeof SearchQuerySchema>;

export const MissingQuerySchema = Type.Object({
  namespace: Type.Optional(Type.String({ description: `default \`${DEFAULT_NAMESPACE}\`` })),
  commits: Type.String({ description: `comma-separated full object ids of commits (at most ${MAX_COMMITS})` }),
});
export type MissingQuery = Static<typeof MissingQuerySchema>;
