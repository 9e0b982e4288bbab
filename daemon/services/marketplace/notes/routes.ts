// The git-notes routes (spec "Git notes"): list_namespaces, search_notes, get_note, put_note,
// delete_note, and note_history (ours), under /api/git/{owner}/{repo}/notes, with their schemas for the OpenAPI document.
// Each calls the notes service and answers its outcome (refusals.ts says refusals in HTTP).
import type { FastifyInstance } from 'fastify';
import {
  GetNoteQuerySchema,
  HistoryQuerySchema,
  NamespaceQuerySchema,
  NoteHistoryResponseSchema,
  NamespacesResponseSchema,
  NoteParamsSchema,
  NoteResponseSchema,
  PutNoteRequestSchema,
  RepoParamsSchema,
  SearchQuerySchema,
  SearchResponseSchema,
  WriteResponseSchema,
  type PutNoteRequest,
} from '../../../../src/schemas/notes.js';
import { ErrorSchema } from '../../../../src/schemas/license.js';
import type { Callers } from './callers.js';
import type { NotesApi } from './notes.js';
import { answer } from './refusals.js';

const TAGS = ['notes'];
/** Reads declare no credential requirement (spec Authentication); a token or cookie widens visibility. */
const OPTIONAL = [{}, { bearer: [] }];
const PUSH = [{ bearer: [] }];

type RepoParams = { owner: string; repo: string };
type NoteParams = RepoParams & { target: string };

export async function notesRoutes(app: FastifyInstance, deps: { api: NotesApi; callers: Callers }): Promise<void> {
  const { api, callers } = deps;

  app.get<{ Params: RepoParams }>(
    '/api/git/:owner/:repo/notes',
    {
      schema: {
        operationId: 'list_namespaces',
        summary: 'List the notes namespaces of a repository, with a note count each',
        tags: TAGS,
        security: OPTIONAL,
        params: RepoParamsSchema,
        response: { 200: NamespacesResponseSchema, 401: ErrorSchema, 404: ErrorSchema },
      },
    },
    async (req) => answer(await api.listNamespaces(await callers.caller(req), req.params.owner, req.params.repo)),
  );

  app.get<{ Params: RepoParams; Querystring: { q: string; namespace?: string; commits_only?: boolean; limit?: number } }>(
    '/api/git/:owner/:repo/notes/search',
    {
      schema: {
        operationId: 'search_notes',
        summary: 'Full-text search over the notes of a repository',
        description: 'Bare words must all match; "quoted phrases" match in order; `or` between two terms matches either; `-term` excludes. Results are ranked (bm25) with a snippet.',
        tags: TAGS,
        security: OPTIONAL,
        params: RepoParamsSchema,
        querystring: SearchQuerySchema,
        response: { 200: SearchResponseSchema, 400: ErrorSchema, 401: ErrorSchema, 404: ErrorSchema },
      },
    },
    async (req) => answer(await api.search(await callers.caller(req), req.params.owner, req.params.repo, req.query)),
  );

  app.get<{ Params: NoteParams; Querystring: { namespace?: string; attribution?: boolean } }>(
    '/api/git/:owner/:repo/notes/:target',
    {
      schema: {
        operationId: 'get_note',
        summary: 'Read the note attached to a git object',
        tags: TAGS,
        security: OPTIONAL,
        params: NoteParamsSchema,
        querystring: GetNoteQuerySchema,
        response: { 200: NoteResponseSchema, 400: ErrorSchema, 401: ErrorSchema, 404: ErrorSchema },
      },
    },
    async (req) => answer(await api.get(await callers.caller(req), req.params.owner, req.params.repo, req.params.target, req.query)),
  );

  app.get<{ Params: NoteParams; Querystring: { namespace?: string; limit?: number } }>(
    '/api/git/:owner/:repo/notes/:target/history',
    {
      schema: {
        operationId: 'note_history',
        summary: 'The versions of the note on a git object, newest first (removals too)',
        description: 'Read from the notes ref\'s history with a bounded walk, as attribution: `complete` is false when older versions may exist. The same 404s as get_note, except that a note removed since still has its history.',
        tags: TAGS,
        security: OPTIONAL,
        params: NoteParamsSchema,
        querystring: HistoryQuerySchema,
        response: { 200: NoteHistoryResponseSchema, 400: ErrorSchema, 401: ErrorSchema, 404: ErrorSchema },
      },
    },
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
