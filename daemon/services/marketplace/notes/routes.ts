// The git-notes routes (spec "Git notes"): list_namespaces, search_notes, get_note, put_note,
// delete_note, and ours: note_history, list_missing_notes under /api/git/{owner}/{repo}/notes and
// search_owner_notes under /api/git/{owner}/notes, with their schemas for the OpenAPI document.
// Each calls the notes service and answers its outcome (refusals.ts says refusals in HTTP).
import type { FastifyInstance } from 'fastify';
import {
  GetNoteQuerySchema,
  HistoryQuerySchema,
  MissingQuerySchema,
  MissingResponseSchema,
  NamespaceQuerySchema,
  NoteHistoryResponseSchema,
  NamespacesResponseSchema,
  NoteParamsSchema,
  NoteResponseSchema,
  OwnerParamsSchema,
  PutNoteRequestSchema,
  RepoParamsSchema,
  SearchOrCountResponseSchema,
  SearchQuerySchema,
  WriteResponseSchema,
  type MissingQuery,
  type PutNoteRequest,
  type SearchQuery,
} from '../../../../src/schemas/notes.js';
import { ErrorSchema } from '../../../../src/schemas/license.js';
import type { Callers } from './callers.js';
import type { NotesApi } from './notes.js';
import type { NotesSearch } from './search.js';
import { answer } from './refusals.js';

const TAGS = ['notes'];
/** Reads declare no credential requirement (spec Authentication); a token or cookie widens visibility. */
const OPTIONAL = [{}, { bearer: [] }];
const PUSH = [{ bearer: [] }];

type RepoParams = { owner: string; repo: string };
type NoteParams = RepoParams & { target: string };

const SEARCH_DESCRIPTION = [
  '`mode=words` (the default): bare words must all match, "quoted phrases" match in order, `or` between two terms matches either, `-term` excludes; ranked (bm25) with a snippet. Without `q`, every note the filters keep, in index order.',
  '`mode=literal`: an exact, case-sensitive substring (message ids, URLs, object ids). `mode=regex`: a regular expression matched per line, linear-time; a search over its step budget answers 400.',
  'Filters (`namespace`, `commits_only`, `field`, `author`, `since`, `until`, `commits`) are ANDed. Every hit comes once through `next_cursor` (keyset paging); a cursor works only with the parameters it came from.',
  '`count_by` answers groups with counts over every matching note instead of hits.',
].join('\n\n');

/** What a read route's schema says beyond the shared parts. */
interface ReadSchema {
  operationId: string;
  summary: string;
  description?: string;
  params: object;
  querystring?: object;
  ok: object;
  /** Whether the route answers 400 for a bad parameter (all but list_namespaces do); default true. */
  bad?: boolean;
}

/**
 * A read route's schema: the notes tag, optional credentials (spec Authentication), its 200 and
 * `{"error"}` for 400 (unless `bad` is false), 401 and 404.
 */
function read(s: ReadSchema) {
  const { ok, bad = true, ...rest } = s;
  return { schema: { ...rest, tags: TAGS, security: OPTIONAL, response: { 200: ok, ...(bad ? { 400: ErrorSchema } : {}), 401: ErrorSchema, 404: ErrorSchema } } };
}

export async function notesRoutes(app: FastifyInstance, deps: { api: NotesApi; search: NotesSearch; callers: Callers }): Promise<void> {
  const { api, search, callers } = deps;

  app.get<{ Params: RepoParams }>(
    '/api/git/:owner/:repo/notes',
    read({
      operationId: 'list_namespaces',
      summary: 'List the notes namespaces of a repository, with a note count each',
      params: RepoParamsSchema,
      ok: NamespacesResponseSchema,
      bad: false,
    }),
    async (req) => answer(await api.listNamespaces(await callers.caller(req), req.params.owner, req.params.repo)),
  );

  app.get<{ Params: RepoParams; Querystring: SearchQuery }>(
    '/api/git/:owner/:repo/notes/search',
    read({
      operationId: 'search_notes',
      summary: 'Search the notes of a repository (words, literal or regex; filters; paged by cursor)',
      description: SEARCH_DESCRIPTION,
      params: RepoParamsSchema,
      querystring: SearchQuerySchema,
      ok: SearchOrCountResponseSchema,
    }),
    async (req) => answer(await search.search(await callers.caller(req), req.params.owner, req.params.repo, req.query)),
  );

  app.get<{ Params: { owner: string }; Querystring: SearchQuery }>(
    '/api/git/:owner/notes/search',
    read({
      operationId: 'search_owner_notes',
      summary: 'Search the notes of every repository of an owner the caller can see',
      description: `${SEARCH_DESCRIPTION}\n\nRepositories are searched in name order, each one's hits in its own order; each hit names its \`repo\`. 404 when the owner has no repository the caller can see.`,
      params: OwnerParamsSchema,
      querystring: SearchQuerySchema,
      ok: SearchOrCountResponseSchema,
    }),
    async (req) => answer(await search.searchOwner(await callers.caller(req), req.params.owner, req.query)),
  );

  // A static segment: the router prefers it to `:target`, and `missing` is no object id anyway.
  app.get<{ Params: RepoParams; Querystring: MissingQuery }>(
    '/api/git/:owner/:repo/notes/missing',
    read({
      operationId: 'list_missing_notes',
      summary: 'Which of the given commits have no note in a namespace, in the order given',
      description: 'Read from the search index (caught up first). A namespace that has no notes yet lacks them all.',
      params: RepoParamsSchema,
      querystring: MissingQuerySchema,
      ok: MissingResponseSchema,
    }),
    async (req) => answer(await search.missing(await callers.caller(req), req.params.owner, req.params.repo, req.query)),
  );

  app.get<{ Params: NoteParams; Querystring: { namespace?: string; attribution?: boolean } }>(
    '/api/git/:owner/:repo/notes/:target',
    read({
      operationId: 'get_note',
      summary: 'Read the note attached to a git object',
      params: NoteParamsSchema,
      querystring: GetNoteQuerySchema,
      ok: NoteResponseSchema,
    }),
    async (req) => answer(await api.get(await callers.caller(req), req.params.owner, req.params.repo, req.params.target, req.query)),
  );

  app.get<{ Params: NoteParams; Querystring: { namespace?: string; limit?: number } }>(
    '/api/git/:owner/:repo/notes/:target/history',
    read({
      operationId: 'note_history',
      summary: 'The versions of the note on a git object, newest first (removals too)',
      description: 'Read from the notes ref\'s history with a bounded walk, as attribution: `complete` is false when older versions may exist. The same 404s as get_note, except that a note removed since still has its history.',
      params: NoteParamsSchema,
      querystring: HistoryQuerySchema,
      ok: NoteHistoryResponseSchema,
    }),
    async (req) => answer(await api.history(await callers.caller(req), req.params.owner, req.params.repo, req.params.target, req.query)),
  );

  app.put<{ Params: NoteParams; Querystring: { namespace?: string }; Body: PutNoteRequest }>(
    '/api/git/:owner/:repo/notes/:target',
    {
      schema: {
        operationId: 'put_note',
        summary: 'Add or replace the note on a commit',
        description: 'Needs a personal access token with push scope. One notes commit is written with the token owner as author; a write racing a push is retried, and sustained contention answers 422. A namespace that cannot exist beside an existing one (`a` and `a/b`) answers 422 at once; a `message` holding NUL answers 422.',
        tags: TAGS,
        security: PUSH,
        params: NoteParamsSchema,
        querystring: NamespaceQuerySchema,
        body: PutNoteRequestSchema,
        response: { 200: WriteResponseSchema, 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema, 422: ErrorSchema },
      },
    },
    async (req) => answer(await api.put(await callers.caller(req), req.params.owner, req.params.repo, req.params.target, req.body, req.query.namespace)),
  );

  app.delete<{ Params: NoteParams; Querystring: { namespace?: string } }>(
    '/api/git/:owner/:repo/notes/:target',
    {
      schema: {
        operationId: 'delete_note',
        summary: 'Remove the note on a commit (204 whether or not it existed)',
        tags: TAGS,
        security: PUSH,
        params: NoteParamsSchema,
        querystring: NamespaceQuerySchema,
        response: { 204: { type: 'null', description: 'no body' }, 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema, 422: ErrorSchema },
      },
    },
    async (req, reply) => {
      answer(await api.delete(await callers.caller(req), req.params.owner, req.params.repo, req.params.target, req.query.namespace));
      return reply.code(204).send();
    },
  );
}
