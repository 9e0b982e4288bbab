// What the notes service answers: a value, or a refusal named in the domain's words with what
// its message needs. The routes say each refusal in HTTP in one place (refusals.ts).
import type { PushRefusal } from './access.js';

export type NotesRefusal =
  | PushRefusal
  /** The repository does not exist or the caller may not see it (`repo` as asked for). */
  | { kind: 'no_repo'; repo: string }
  /** The owner has no repository the caller may see (or does not exist): an owner-wide search. */
  | { kind: 'no_owner'; owner: string }
  | { kind: 'malformed_target' }
  /** A full object id of the other hash's length. */
  | { kind: 'wrong_id_length'; target: string; repo: string; format: 'sha1' | 'sha256'; digits: number }
  /** `type` undefined: no such object at all. */
  | { kind: 'not_a_commit'; target: string; type?: string; repo: string }
  /** A read names a namespace that cannot exist. */
  | { kind: 'unreadable_namespace'; reason: string }
  /** A search filters on a namespace that cannot exist. */
  | { kind: 'bad_namespace_filter'; reason: string }
  /** A write names a namespace that cannot be written (invalid, or reserved). */
  | { kind: 'unwritable_namespace'; reason: string }
  | { kind: 'no_namespace'; namespace: string; repo: string }
  | { kind: 'no_note'; target: string; namespace: string }
  | { kind: 'bad_query'; reason: string }
  | { kind: 'namespace_twice' }
  | { kind: 'empty_content' }
  | { kind: 'content_too_large'; maxBytes: number }
  | { kind: 'nul_in_message' }
  /** The writer gave up: the ref kept moving, cannot sit beside another, or is not a notes commit. */
  | { kind: 'write_refused'; reason: string };

export type NotesOutcome<T> = { kind: 'ok'; value: T } | NotesRefusal;
