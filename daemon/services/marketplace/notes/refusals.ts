// The notes service's refusals said in HTTP: every status code and error text of the notes
// routes (and of a push refused to git smart HTTP) in one switch.
import { HttpError } from '../../../plugins/errors.js';
import { BEARER_CHALLENGE, WRITE_NEEDS_TOKEN } from './callers.js';
import type { NotesOutcome, NotesRefusal } from './outcomes.js';

export function refusalToHttp(r: NotesRefusal): HttpError {
  switch (r.kind) {
    case 'unauthenticated':
      return new HttpError(401, WRITE_NEEDS_TOKEN, BEARER_CHALLENGE);
    case 'session_cannot_write':
      return new HttpError(403, 'a session cookie can only read; use a personal access token with push scope');
    case 'read_scope_token':
      return new HttpError(403, 'this token has read scope; writing notes needs push scope');
    case 'no_push_right':
      return new HttpError(403, `${r.user} cannot push to ${r.repo}`);
    case 'no_repo':
      return new HttpError(404, `repository ${r.repo} not found`);
    case 'no_owner':
      // One text whether the owner is unknown or has only repositories the caller cannot see.
      return new HttpError(404, `no repositories of ${r.owner} found`);
    case 'malformed_target':
      return new HttpError(400, 'target must be a full object id (40 or 64 hex digits)');
    case 'wrong_id_length':
      return new HttpError(404, `no object ${r.target} in ${r.repo} (a ${r.format} repository uses ${r.digits}-digit ids)`);
    case 'not_a_commit':
      return new HttpError(404, r.type ? `${r.target} is a ${r.type}, not a commit` : `no commit ${r.target} in ${r.repo}`);
    case 'unreadable_namespace':
      return new HttpError(404, `namespace not found: ${r.reason}`);
    case 'bad_namespace_filter':
      return new HttpError(400, `namespace: ${r.reason}`);
    case 'unwritable_namespace':
      return new HttpError(422, r.reason);
    case 'no_namespace':
      return new HttpError(404, `namespace ${r.namespace} not found in ${r.repo}`);
    case 'no_note':
      return new HttpError(404, `no note on ${r.target} in namespace ${r.namespace}`);
    case 'bad_query':
      return new HttpError(400, r.reason);
    case 'namespace_twice':
      return new HttpError(400, 'namespace given in both the body and the query, with different values');
    case 'empty_content':
      return new HttpError(422, 'content is empty; to remove a note use DELETE');
    case 'content_too_large':
      return new HttpError(422, `content is larger than the maximum note size (${r.maxBytes} bytes)`);
    case 'nul_in_message':
      return new HttpError(422, 'message holds a NUL character, which git does not allow in a commit message');
    case 'write_refused':
      return new HttpError(422, r.reason);
  }
}

/** The outcome's value, or its refusal thrown as the route's answer. */
export function answer<T>(o: NotesOutcome<T>): T {
  if (o.kind === 'ok') return o.value;
  throw refusalToHttp(o);
}
