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

export const SearchHitSchema = Type.Object({
  namespace: Type.String(),
  git_ref: Type.String(),
  target: Type.String(),
  object_type: ObjectType,
  snippet: Type.String({ description: 'the matching part of the note, matches wrapped in `[` `]`' }),
  score: Type.Number({ description: 'relevance (bm25, higher is better)' }),
});
export type SearchHit = Static<typeof SearchHitSchema>;
export const SearchResponseSchema = Type.Object({
  data: Type.Array(SearchHitSchema),
  indexed: Type.Boolean({ description: 'whether the search index has seen the repository (false: results may be missing until indexing finishes)' }),
  total: Type.Integer({ description: 'number of hits returned' }),
});
export type SearchResponse = Static<typeof SearchResponseSchema>;

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
export const SearchQuerySchema = Type.Object({
  q: Type.String({ description: 'bare words (all must match), "quoted phrases", `or` between terms, `-excluded` terms' }),
  namespace: Type.Optional(Type.String()),
  commits_only: Type.Optional(Type.Boolean({ description: 'drop notes on blobs and trees' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: `maximum hits; default ${SEARCH_DEFAULT_LIMIT}, capped at ${SEARCH_MAX_LIMIT}` })),
});
