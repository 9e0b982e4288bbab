// The git-notes operations of the spec (list namespaces, search, get, put, delete) on hosted
// repositories: visibility and push rules, namespace and target checks, reads from the index
// once it reflects the ref on disk, writes through NoteWriter.
import type { Repo, RepoStore } from '../../../../src/store/repos.js';
import type { NotesIndex } from '../../../../src/store/notes.js';
import type { NotesIndexer } from '../../../../src/notes/indexer.js';
import { BrokenRefError, ContentionError, NamespaceConflictError, type NoteWriter } from '../../../../src/notes/writer.js';
import { checkNamespace } from '../../../../src/notes/namespace.js';
import { QueryError, parseQuery, type NotesQuery } from '../../../../src/notes/query.js';
import { noteAttribution } from '../../../../src/git/notes-tree.js';
import type { RepoGitPool } from '../../../../src/git/repo-git.js';
import { readRef } from '../../../../src/git/refs.js';
import { repoDir } from '../../../../src/git/hosting.js';
import {
  ATTRIBUTION_WALK_LIMIT,
  DEFAULT_NAMESPACE,
  MAX_NOTE_BYTES,
  SEARCH_DEFAULT_LIMIT,
  SEARCH_MAX_LIMIT,
  type NamespaceEntry,
  type NoteResponse,
  type SearchResponse,
  type WriteResponse,
} from '../../../../src/schemas/notes.js';
import { HttpError } from '../../../plugins/errors.js';
import type { Access, Caller } from './access.js';

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

  private hosted(repo: Repo) {
    let dir = this.dirs.get(repo.id);
    if (dir === undefined) {
      if (this.dirs.size >= 10_000) this.dirs.clear();
      dir = repoDir(this.deps.dataDir, repo.owner, repo.name);
      this.dirs.set(repo.id, dir);
    }
    return { id: repo.id, dir, objectFormat: repo.object_format };
  }

  private target(raw: string, repo: Repo): string {
    const t = raw.toLowerCase();
    if (!OBJECT_ID.test(t)) throw new HttpError(400, 'target must be a full object id (40 or 64 hex digits)');
    const want = repo.object_format === 'sha256' ? 64 : 40;
    if (t.length !== want) throw new HttpError(404, `no object ${t} in ${repo.owner}/${repo.name} (a ${repo.object_format} repository uses ${want}-digit ids)`);
    return t;
  }

  /** Reads: an invalid namespace names nothing that can exist, so it is a 404 like a missing one. */
  private readNamespace(ns: string | undefined): string {
    const name = ns ?? DEFAULT_NAMESPACE;
    if (this.readableNamespaces.has(name)) return name;
    const c = checkNamespace(name);
    if (!c.ok && !c.reserved) throw new HttpError(404, `namespace not found: ${c.reason}`);
    if (this.readableNamespaces.size >= 1_000) this.readableNamespaces.clear();
    this.readableNamespaces.add(name);
    return name;
  }

  async listNamespaces(caller: Caller, owner: string, name: string): Promise<{ data: NamespaceEntry[] }> {
    const repo = await this.deps.access.visibleRepo(owner, name, caller);
    const hosted = this.hosted(repo);
    await this.deps.indexer.ensureCurrent(hosted);
    const counts = await this.deps.index.counts(repo.id);
    const data = [...(await this.deps.indexer.tips(repo.id))]
      .map(([ns, tip]) => ({ name: ns, git_ref: `refs/notes/${ns}`, tip, notes: counts.get(ns) ?? 0 }))
      .sort((a, b) => a.name.localeCompare(b.name));
    return { data };
  }

  async search(caller: Caller, owner: string, name: string, q: { q: string; namespace?: string; commits_only?: boolean; limit?: number }): Promise<SearchResponse> {
    const repo = await this.deps.access.visibleRepo(owner, name, caller);
    let query: NotesQuery;
    try {
      query = parseQuery(q.q);
    } catch (err) {
      if (err instanceof QueryError) throw new HttpError(400, err.message);
      throw err;
    }
    if (q.namespace !== undefined) {
      const c = checkNamespace(q.namespace);
      // A filter naming no possible namespace is a malformed query, not a missing repository.
      if (!c.ok && !c.reserved) throw new HttpError(400, `namespace: ${c.reason}`);
    }
    await this.deps.indexer.ensureCurrent(this.hosted(repo));
    const limit = Math.min(q.limit ?? SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT);
    const hits = await this.deps.index.search(repo.id, query, { namespace: q.namespace, commitsOnly: q.commits_only === true, limit });
    return {
      data: hits.map((h) => ({ ...h, git_ref: `refs/notes/${h.namespace}` })),
      indexed: await this.deps.indexer.isIndexed(repo.id),
      total: hits.length,
    };
  }

  async get(caller: Caller, owner: string, name: string, rawTarget: string, q: { namespace?: string; attribution?: boolean }): Promise<NoteResponse> {
    const repo = await this.deps.access.visibleRepo(owner, name, caller);
    const target = this.target(rawTarget, repo);
    const ns = this.readNamespace(q.namespace);
    const hosted = this.hosted(repo);
    await this.deps.indexer.ensureRefCurrent(hosted, ns);
    if (!(await this.deps.indexer.tips(repo.id)).has(ns)) throw new HttpError(404, `namespace ${ns} not found in ${repo.owner}/${repo.name}`);
    const note = await this.deps.indexer.note(repo.id, ns, target);
    if (!note) throw new HttpError(404, `no note on ${target} in namespace ${ns}`);
    const res: NoteResponse = { target, object_type: note.object_type, namespace: ns, git_ref: `refs/notes/${ns}`, content: note.content, blob: note.blob };
    if (q.attribution) {
      const tip = readRef(hosted.dir, `refs/notes/${ns}`);
      const a = tip ? await noteAttribution(hosted.dir, tip, target, note.blob, ATTRIBUTION_WALK_LIMIT) : undefined;
      if (a) res.attribution = a;
    }
    return res;
  }

  /** Shared by put and delete: credential, visibility, push right, namespace, existing commit. */
  private async writable(caller: Caller, owner: string, name: string, rawTarget: string, ns: string) {
    if (!caller.user) throw new HttpError(401, 'writing notes needs a personal access token with push scope', { 'www-authenticate': 'Bearer realm="mkt"' });
    const repo = await this.deps.access.visibleRepo(owner, name, caller);
    const user = await this.deps.access.requirePush(repo, caller);
    const target = this.target(rawTarget, repo);
    const c = checkNamespace(ns);
    if (!c.ok) throw new HttpError(422, c.reason);
    const hosted = this.hosted(repo);
    await this.requireCommit(hosted, target, repo);
    return { repo, user, target, hosted };
  }

  private async requireCommit(hosted: { id: string; dir: string; objectFormat: 'sha1' | 'sha256' }, target: string, repo: Repo): Promise<void> {
    const known = this.knownCommits.get(hosted.id);
    if (known?.has(target)) return;
    const type = (await this.deps.git.get(hosted.dir, hosted.objectFormat).info(target))?.type;
    if (type !== 'commit') throw new HttpError(404, type ? `${target} is a ${type}, not a commit` : `no commit ${target} in ${repo.owner}/${repo.name}`);
    const set = known ?? new Set<string>();
    if (set.size >= 100_000) set.clear();
    set.add(target);
    this.knownCommits.set(hosted.id, set);
  }

  async put(caller: Caller, owner: string, name: string, rawTarget: string, body: { content: string; namespace?: string; message?: string }, queryNs: string | undefined): Promise<WriteResponse> {
    if (body.namespace !== undefined && queryNs !== undefined && body.namespace !== queryNs) throw new HttpError(400, 'namespace given in both the body and the query, with different values');
    const ns = body.namespace ?? queryNs ?? DEFAULT_NAMESPACE;
    const { user, target, hosted } = await this.writable(caller, owner, name, rawTarget, ns);
    if (body.content.length === 0) throw new HttpError(422, 'content is empty; to remove a note use DELETE');
    if (Buffer.byteLength(body.content, 'utf8') > MAX_NOTE_BYTES) throw new HttpError(422, `content is larger than the maximum note size (${MAX_NOTE_BYTES} bytes)`);
    // git commit-tree refuses a message holding NUL; say so instead of failing the write.
    if (body.message?.includes('\0')) throw new HttpError(422, 'message holds a NUL character, which git does not allow in a commit message');
    // A lone surrogate has no UTF-8 form: git stores U+FFFD for it, and so must the index.
    const content = Buffer.from(body.content, 'utf8').toString('utf8');
    try {
      const out = await this.deps.writer.write(hosted, { namespace: ns, target, content, author: { name: user.name, email: user.email }, message: body.message });
      return { target, namespace: ns, git_ref: `refs/notes/${ns}`, action: out.action as WriteResponse['action'], commit: out.commit, blob: out.blob! };
    } catch (err) {
      if (err instanceof ContentionError || err instanceof NamespaceConflictError || err instanceof BrokenRefError) throw new HttpError(422, err.message);
      throw err;
    }
  }

  async delete(caller: Caller, owner: string, name: string, rawTarget: string, queryNs: string | undefined): Promise<void> {
    const ns = queryNs ?? DEFAULT_NAMESPACE;
    const { user, target, hosted } = await this.writable(caller, owner, name, rawTarget, ns);
    try {
      await this.deps.writer.write(hosted, { namespace: ns, target, content: null, author: { name: user.name, email: user.email } });
    } catch (err) {
      if (err instanceof ContentionError || err instanceof NamespaceConflictError || err instanceof BrokenRefError) throw new HttpError(422, err.message);
      throw err;
    }
  }
}
