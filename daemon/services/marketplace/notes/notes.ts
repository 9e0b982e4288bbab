// The git-notes operations of the spec (list namespaces, get, put, delete), and a note's
// history, on hosted
// repositories: visibility and push rules, namespace and target checks, reads from the index
// once it reflects the ref on disk, writes through NoteWriter. Each answers an outcome
// (outcomes.ts); nothing here knows HTTP. Searches live in search.ts.
import type { Repo, RepoStore } from '../../../../src/store/repos.js';
import type { User } from '../../../../src/store/accounts.js';
import type { IndexedNote, NotesIndex } from '../../../../src/store/notes.js';
import type { NotesIndexer } from '../../../../src/notes/indexer.js';
import { BrokenRefError, ContentionError, MergeTooLargeError, NamespaceConflictError, type NoteWriter, type WriteOutcome } from '../../../../src/notes/writer.js';
import { checkNamespace } from '../../../../src/notes/namespace.js';
import { noteAttribution, noteVersions, objectInfo, readBlobs } from '../../../../src/git/notes-tree.js';
import type { RepoGitPool } from '../../../../src/git/repo-git.js';
import { readRef } from '../../../../src/git/refs.js';
import { repoDir } from '../../../../src/git/hosting.js';
import {
  ATTRIBUTION_WALK_LIMIT,
  DEFAULT_NAMESPACE,
  HISTORY_DEFAULT_LIMIT,
  HISTORY_MAX_BYTES,
  HISTORY_MAX_LIMIT,
  MAX_NOTE_BYTES,
  type NamespaceEntry,
  type NoteHistoryResponse,
  type NoteResponse,
  type WriteResponse,
} from '../../../../src/schemas/notes.js';
import type { Access, Caller } from './access.js';
import type { NotesOutcome } from './outcomes.js';

type Hosted = { id: string; dir: string; objectFormat: 'sha1' | 'sha256' };
type Writable = { repo: Repo; user: User; target: string; hosted: Hosted };

const ok = <T>(value: T): { kind: 'ok'; value: T } => ({ kind: 'ok', value });

/** get_note's answer for a note the index holds (attribution aside). */
export function noteResponse(target: string, namespace: string, note: IndexedNote): NoteResponse {
  return { target, object_type: note.object_type, namespace, git_ref: `refs/notes/${namespace}`, content: note.content, blob: note.blob };
}

const OBJECT_ID = /^([0-9a-f]{40}|[0-9a-f]{64})$/;

export class NotesApi {
  /** Commits known to exist, per repository: objects never disappear, so a hit saves a git process. */
  private readonly knownCommits = new Map<string, Set<string>>();
  /** Namespace names found readable (the rule never changes), so a read checks each name once. */
  private readonly readableNamespaces = new Set<string>();
  /** Directory of each repository by id (ids are never reused; a name's directory never moves). */
  private readonly dirs = new Map<string, string>();

  constructor(
    private readonly deps: { dataDir: string; repos: RepoStore; index: NotesIndex; indexer: NotesIndexer; writer: NoteWriter; access: Access; git: RepoGitPool },
  ) {}

  private hosted(repo: Repo): Hosted {
    let dir = this.dirs.get(repo.id);
    if (dir === undefined) {
      if (this.dirs.size >= 10_000) this.dirs.clear();
      dir = repoDir(this.deps.dataDir, repo.owner, repo.name);
      this.dirs.set(repo.id, dir);
    }
    return { id: repo.id, dir, objectFormat: repo.object_format };
  }

  private async visibleRepo(caller: Caller, owner: string, name: string): Promise<NotesOutcome<Repo>> {
    const repo = await this.deps.access.visibleRepo(owner, name, caller);
    return repo ? ok(repo) : { kind: 'no_repo', repo: `${owner}/${name}` };
  }

  private target(raw: string, repo: Repo): NotesOutcome<string> {
    const t = raw.toLowerCase();
    if (!OBJECT_ID.test(t)) return { kind: 'malformed_target' };
    const want = repo.object_format === 'sha256' ? 64 : 40;
    if (t.length !== want) return { kind: 'wrong_id_length', target: t, repo: `${repo.owner}/${repo.name}`, format: repo.object_format, digits: want };
    return ok(t);
  }

  /** Reads: an invalid namespace names nothing that can exist, so it is missing like a missing one. */
  private readNamespace(ns: string | undefined): NotesOutcome<string> {
    const name = ns ?? DEFAULT_NAMESPACE;
    if (this.readableNamespaces.has(name)) return ok(name);
    const c = checkNamespace(name);
    if (!c.ok && !c.reserved) return { kind: 'unreadable_namespace', reason: c.reason };
    if (this.readableNamespaces.size >= 1_000) this.readableNamespaces.clear();
    this.readableNamespaces.add(name);
    return ok(name);
  }

  async listNamespaces(caller: Caller, owner: string, name: string): Promise<NotesOutcome<{ data: NamespaceEntry[] }>> {
    const visible = await this.visibleRepo(caller, owner, name);
    if (visible.kind !== 'ok') return visible;
    const repo = visible.value;
    const hosted = this.hosted(repo);
    await this.deps.indexer.ensureCurrent(hosted);
    const counts = await this.deps.index.counts(repo.id);
    const strategies = await this.deps.repos.notesMergeStrategies(repo.id);
    const data = [...(await this.deps.indexer.tips(repo.id))]
      .map(([ns, tip]) => ({ name: ns, git_ref: `refs/notes/${ns}`, tip, notes: counts.get(ns) ?? 0, merge_strategy: strategies.get(ns) ?? 'manual' }))
      .sort((a, b) => a.name.localeCompare(b.name));
    return ok({ data });
  }

  /** Shared by get and history: visibility, the target, the namespace (current, and existing). */
  private async readable(caller: Caller, owner: string, name: string, rawTarget: string, namespace: string | undefined): Promise<NotesOutcome<{ repo: Repo; target: string; ns: string; hosted: Hosted }>> {
    const visible = await this.visibleRepo(caller, owner, name);
    if (visible.kind !== 'ok') return visible;
    const repo = visible.value;
    const checked = this.target(rawTarget, repo);
    if (checked.kind !== 'ok') return checked;
    const readable = this.readNamespace(namespace);
    if (readable.kind !== 'ok') return readable;
    const ns = readable.value;
    const hosted = this.hosted(repo);
    await this.deps.indexer.ensureRefCurrent(hosted, ns);
    if (!(await this.deps.indexer.tips(repo.id)).has(ns)) return { kind: 'no_namespace', namespace: ns, repo: `${repo.owner}/${repo.name}` };
    return ok({ repo, target: checked.value, ns, hosted });
  }

  async get(caller: Caller, owner: string, name: string, rawTarget: string, q: { namespace?: string; attribution?: boolean }): Promise<NotesOutcome<NoteResponse>> {
    const found = await this.readable(caller, owner, name, rawTarget, q.namespace);
    if (found.kind !== 'ok') return found;
    const { repo, target, ns, hosted } = found.value;
    const note = await this.deps.indexer.note(repo.id, ns, target);
    if (!note) return { kind: 'no_note', target, namespace: ns };
    const res = noteResponse(target, ns, note);
    if (q.attribution) {
      const tip = readRef(hosted.dir, `refs/notes/${ns}`);
      const a = tip ? await noteAttribution(hosted.dir, tip, target, note.blob, ATTRIBUTION_WALK_LIMIT) : undefined;
      if (a) res.attribution = a;
    }
    return ok(res);
  }

  /**
   * The note an anonymous get (without attribution) answers 200 with, when every lookup it makes
   * is in memory and fresh (SqlRepoStore.cachedRepo, NotesIndexer.cachedNote): no await, so a
   * read of a note read before is answered in the turn it arrived. Undefined whenever get must
   * look anything up, and for every answer but a note of a public repository.
   */
  cachedAnonymousGet(owner: string, name: string, rawTarget: string, namespace: string | undefined): IndexedNote | undefined {
    const repo = this.deps.repos.cachedRepo(owner, name);
    if (repo === undefined || repo.private) return undefined;
    const target = this.target(rawTarget, repo);
    const ns = this.readNamespace(namespace);
    if (target.kind !== 'ok' || ns.kind !== 'ok') return undefined;
    return this.deps.indexer.cachedNote(this.hosted(repo), ns.value, target.value);
  }

  /**
   * The versions of a note, newest first, from one bounded walk of the notes ref (as attribution):
   * the same 404s as get_note, except that a note removed since still has a history. Versions
   * whose blob is over the note size limit (written behind the server's back) are never read and
   * are left out, as get_note leaves such a note out.
   */
  async history(caller: Caller, owner: string, name: string, rawTarget: string, q: { namespace?: string; limit?: number }): Promise<NotesOutcome<NoteHistoryResponse>> {
    const found = await this.readable(caller, owner, name, rawTarget, q.namespace);
    if (found.kind !== 'ok') return found;
    const { repo, target, ns, hosted } = found.value;
    const tip = readRef(hosted.dir, `refs/notes/${ns}`);
    const walked = tip ? await noteVersions(hosted.dir, tip, target, ATTRIBUTION_WALK_LIMIT, Math.min(q.limit ?? HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT)) : undefined;
    const current = await this.deps.indexer.note(repo.id, ns, target);
    if (!walked || (walked.versions.length === 0 && !current && walked.complete)) return { kind: 'no_note', target, namespace: ns };
    const blobs = walked.versions.flatMap((v) => (v.blob === null ? [] : [v.blob]));
    const sizes = await objectInfo(hosted.dir, blobs);
    let complete = walked.complete;
    let bytes = 0;
    const kept: typeof walked.versions = [];
    for (const v of walked.versions) {
      const size = v.blob === null ? 0 : (sizes.get(v.blob)?.size ?? 0);
      if (size > MAX_NOTE_BYTES) continue;
      if (bytes + size > HISTORY_MAX_BYTES) {
        // Whole versions only, newest first: what is left out is older than everything shown.
        complete = false;
        break;
      }
      bytes += size;
      kept.push(v);
    }
    const texts = await readBlobs(hosted.dir, kept.flatMap((v) => (v.blob === null ? [] : [v.blob])));
    const data = kept.map((v) => ({ content: v.blob === null ? null : (texts.get(v.blob) ?? ''), commit: v.commit, name: v.name, email: v.email, at: v.at }));
    return ok({ target, namespace: ns, git_ref: `refs/notes/${ns}`, data, complete });
  }

  /** Shared by put and delete: credential, visibility, push right, namespace, existing commit. */
  private async writable(caller: Caller, owner: string, name: string, rawTarget: string, ns: string): Promise<NotesOutcome<Writable>> {
    if (!caller.user) return { kind: 'unauthenticated' };
    const visible = await this.visibleRepo(caller, owner, name);
    if (visible.kind !== 'ok') return visible;
    const repo = visible.value;
    const right = await this.deps.access.pushRight(repo, caller);
    if (right.kind !== 'ok') return right;
    const checked = this.target(rawTarget, repo);
    if (checked.kind !== 'ok') return checked;
    const target = checked.value;
    const c = checkNamespace(ns);
    if (!c.ok) return { kind: 'unwritable_namespace', reason: c.reason };
    const hosted = this.hosted(repo);
    const commit = await this.requireCommit(hosted, target, repo);
    if (commit.kind !== 'ok') return commit;
    return ok({ repo, user: right.user, target, hosted });
  }

  private async requireCommit(hosted: Hosted, target: string, repo: Repo): Promise<NotesOutcome<undefined>> {
    const known = this.knownCommits.get(hosted.id);
    if (known?.has(target)) return ok(undefined);
    const type = (await this.deps.git.get(hosted.dir, hosted.objectFormat).info(target))?.type;
    if (type !== 'commit') return { kind: 'not_a_commit', target, type, repo: `${repo.owner}/${repo.name}` };
    const set = known ?? new Set<string>();
    if (set.size >= 100_000) set.clear();
    set.add(target);
    this.knownCommits.set(hosted.id, set);
    return ok(undefined);
  }

  async put(caller: Caller, owner: string, name: string, rawTarget: string, body: { content: string; namespace?: string; message?: string }, queryNs: string | undefined): Promise<NotesOutcome<WriteResponse>> {
    if (body.namespace !== undefined && queryNs !== undefined && body.namespace !== queryNs) return { kind: 'namespace_twice' };
    const ns = body.namespace ?? queryNs ?? DEFAULT_NAMESPACE;
    const w = await this.writable(caller, owner, name, rawTarget, ns);
    if (w.kind !== 'ok') return w;
    const { user, target, hosted } = w.value;
    if (body.content.length === 0) return { kind: 'empty_content' };
    if (Buffer.byteLength(body.content, 'utf8') > MAX_NOTE_BYTES) return { kind: 'content_too_large', maxBytes: MAX_NOTE_BYTES };
    // git commit-tree refuses a message holding NUL; say so instead of failing the write.
    if (body.message?.includes('\0')) return { kind: 'nul_in_message' };
    // A lone surrogate has no UTF-8 form: git stores U+FFFD for it, and so must the index.
    const content = Buffer.from(body.content, 'utf8').toString('utf8');
    const out = await this.write(hosted, { namespace: ns, target, content, author: { name: user.name, email: user.email }, message: body.message });
    if (out.kind !== 'ok') return out;
    return ok({ target, namespace: ns, git_ref: `refs/notes/${ns}`, action: out.value.action as WriteResponse['action'], commit: out.value.commit, blob: out.value.blob! });
  }

  async delete(caller: Caller, owner: string, name: string, rawTarget: string, queryNs: string | undefined): Promise<NotesOutcome<undefined>> {
    const ns = queryNs ?? DEFAULT_NAMESPACE;
    const w = await this.writable(caller, owner, name, rawTarget, ns);
    if (w.kind !== 'ok') return w;
    const { user, target, hosted } = w.value;
    const out = await this.write(hosted, { namespace: ns, target, content: null, author: { name: user.name, email: user.email } });
    return out.kind === 'ok' ? ok(undefined) : out;
  }

  /** The writer's refusals (the ref kept moving, cannot exist, or is not a notes commit) as an outcome. */
  private async write(hosted: Hosted, input: Parameters<NoteWriter['write']>[1]): Promise<NotesOutcome<WriteOutcome>> {
    try {
      return ok(await this.deps.writer.write(hosted, input));
    } catch (err) {
      if (err instanceof ContentionError || err instanceof NamespaceConflictError || err instanceof BrokenRefError || err instanceof MergeTooLargeError) return { kind: 'write_refused', reason: err.message };
      throw err;
    }
  }
}
