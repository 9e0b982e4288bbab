// get_note (GET /api/git/{owner}/{repo}/notes/{target}) taken before fastify (daemon/direct-routes.ts)
// for the read scripts and CI jobs make most: anonymous, a full object id, the default namespace or
// one given plainly. fastify's routing, hooks and reply cost such a read about as much as its own
// work (bench/README.md, "get_note taken before fastify"). The lane answers as the route in
// routes.ts would, through the same NotesApi.get: same status, body bytes, headers and request
// line, the 200 answer serialized by the serializer fastify compiles for the route's schema.
// Anything else it declines untouched, and the route answers it: a credential (an Authorization
// header or any cookie), a query other than `namespace=`, an escape or any other character, an id
// that is not 40 or 64 lower-case hex digits (`search`, `missing`), a body, HEAD.
import type { FastifyInstance } from 'fastify';
import { NoteResponseSchema, type NoteResponse } from '../../../../src/schemas/notes.js';
import type { DirectRoutes, Lane } from '../../../direct-routes.js';
import { ANONYMOUS } from './callers.js';
import { noteResponse, type NotesApi } from './notes.js';
import type { IndexedNote } from '../../../../src/store/notes.js';
import { refusalToHttp } from './refusals.js';

export const NOTES_PREFIX = '/api/git/';
const PATTERN = '/api/git/:owner/:repo/notes/:target';
/** An owner or repository name within the route's schema (1 to 100 characters), in characters no parser changes. */
const NAME = /^[A-Za-z0-9._-]{1,100}$/;
/** A full object id as the API takes it; anything else (a static segment too) is the route's. */
const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
/** A namespace in characters fastify's query parser leaves as they are (no `+`, `%` or `&`). */
const NAMESPACE = /^[A-Za-z0-9._/-]{1,255}$/;

/** The parts of a get_note URL the lane answers, or undefined for any other URL. */
export function noteGetParts(url: string): { owner: string; repo: string; target: string; namespace: string | undefined } | undefined {
  const q = url.indexOf('?');
  const path = q < 0 ? url.slice(NOTES_PREFIX.length) : url.slice(NOTES_PREFIX.length, q);
  let namespace: string | undefined;
  if (q >= 0) {
    const query = url.slice(q + 1);
    if (!query.startsWith('namespace=')) return undefined;
    namespace = query.slice('namespace='.length);
    if (!NAMESPACE.test(namespace)) return undefined;
  }
  const parts = path.split('/');
  if (parts.length !== 4 || parts[2] !== 'notes') return undefined;
  const [owner, repo, , target] = parts as [string, string, string, string];
  if (!NAME.test(owner) || !NAME.test(repo) || !OBJECT_ID.test(target)) return undefined;
  return { owner, repo, target, namespace };
}

/** The lane of get_note. `text` is the route's 200 serializer (known once the server is ready). */
export function noteGetLane(direct: DirectRoutes, api: NotesApi, text: (answer: NoteResponse) => string): Lane {
  const route = direct.route('GET', PATTERN);
  // The index's cache replaces a note's object whenever the note changes (never edits one in
  // place), so an answer made from an object stays its answer.
  const texts = new WeakMap<IndexedNote, string>();
  return (req, res, url) => {
    if (req.method !== 'GET') return false;
    const h = req.headers;
    // A credential widens what the caller sees (or is refused): the route's Callers reads it.
    if (h.authorization !== undefined || h.cookie !== undefined) return false;
    if (h['content-length'] !== undefined || h['transfer-encoding'] !== undefined) return false;
    const p = noteGetParts(url);
    if (!p) return false;
    const taken = direct.begin(res, route);
    // A note read before, with nothing it was checked against gone stale, is answered in this
    // turn from text made once: a read's chain of awaits cost more than everything else it does
    // (bench/README.md, "get_note taken before fastify").
    const cached = api.cachedAnonymousGet(p.owner, p.repo, p.target, p.namespace);
    if (cached !== undefined) {
      let t = texts.get(cached);
      if (t === undefined) texts.set(cached, (t = text(noteResponse(cached.target, cached.namespace, cached))));
      taken.send(200, t);
      return true;
    }
    api.get(ANONYMOUS, p.owner, p.repo, p.target, p.namespace === undefined ? {} : { namespace: p.namespace }).then(
      (o) => (o.kind === 'ok' ? taken.send(200, text(o.value)) : taken.fail(refusalToHttp(o))),
      (e: Error) => taken.fail(e),
    );
    return true;
  };
}

/** Adds the lane to the server, its answers serialized by the route's own serializer. */
export function installNoteGetLane(app: FastifyInstance, api: NotesApi): void {
  let text: ((r: NoteResponse) => string) | undefined;
  app.addHook('onReady', async () => {
    const compile = app.serializerCompiler;
    if (compile === undefined) throw new Error('fastify has no serializer compiler at onReady');
    text = compile({ schema: NoteResponseSchema, method: 'GET', url: PATTERN, httpStatus: '200' }) as (r: NoteResponse) => string;
  });
  app.directRoutes.add(NOTES_PREFIX, noteGetLane(app.directRoutes, api, (r) => text!(r)));
}
