// What `mkt notes` learns from the local clone: the hosted OWNER/REPO from a remote URL and the
// full object id of a revision (HEAD, a tag, a short sha). simple-git loads only when needed.
import type { RepoRef } from './notes.js';

/** The clone cannot answer (not a clone, no usable remote, unknown revision): a usage problem. */
export class CloneError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'CloneError';
  }
}

const FULL_ID = /^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/;
const NAME = /^[A-Za-z0-9._-]+$/;

/** `owner/repo` as typed by a person (a trailing `.git` is dropped). */
export function parseRepoArg(raw: string): RepoRef {
  const m = /^([^/\s]+)\/([^/\s]+?)(\.git)?$/.exec(raw.trim());
  if (!m || !NAME.test(m[1]!) || !NAME.test(m[2]!)) throw new CloneError(`--repo must be OWNER/REPO, not ${JSON.stringify(raw)}`);
  return { owner: m[1]!, repo: m[2]! };
}

/**
 * OWNER/REPO from a remote URL: https://host/owner/repo(.git), ssh://git@host/owner/repo.git,
 * scp-like git@host:owner/repo.git. The last two path segments count, so a server mounted
 * under a path prefix works too. Local paths and other schemes give undefined.
 */
export function repoFromRemoteUrl(url: string): RepoRef | undefined {
  let path: string | undefined;
  const u = url.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(u)) {
    try {
      const parsed = new URL(u);
      if (!['http:', 'https:', 'ssh:', 'git:', 'git+ssh:', 'ssh+git:'].includes(parsed.protocol)) return undefined;
      path = decodeURIComponent(parsed.pathname);
    } catch {
      return undefined;
    }
  } else {
    const scp = /^(?:[^@/\s]+@)?[^:/\s]+:(?!\/\/)(.+)$/.exec(u);
    if (!scp) return undefined;
    path = scp[1]!;
  }
  const segs = path.split('/').filter((s) => s !== '');
  if (segs.length < 2) return undefined;
  const owner = segs[segs.length - 2]!;
  const repo = segs[segs.length - 1]!.replace(/\.git$/, '');
  if (!NAME.test(owner) || !NAME.test(repo) || repo === '') return undefined;
  return { owner, repo };
}

/** A remote URL fit for a message: any user name or token in it is removed. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1');
}

async function gitIn(cwd: string) {
  const { simpleGit } = await import('simple-git');
  try {
    return simpleGit({ baseDir: cwd, maxConcurrentProcesses: 1 });
  } catch {
    // simple-git refuses a baseDir that does not exist.
    return undefined;
  }
}

/** OWNER/REPO from the `origin` remote of the clone at cwd (or its only remote). */
export async function repoFromClone(cwd: string): Promise<RepoRef> {
  const hint = 'pass --repo OWNER/REPO';
  const git = await gitIn(cwd);
  if (!git || !(await git.checkIsRepo().catch(() => false))) throw new CloneError(`no repository given and ${cwd} is not inside a git clone`, hint);
  const remotes = await git.getRemotes(true);
  const remote = remotes.find((r) => r.name === 'origin') ?? (remotes.length === 1 ? remotes[0] : undefined);
  if (!remote) {
    const why = remotes.length === 0 ? 'the clone has no remote' : `the clone has no \`origin\` remote (it has ${remotes.map((r) => r.name).join(', ')})`;
    throw new CloneError(`no repository given and ${why}`, hint);
  }
  const url = remote.refs.fetch || remote.refs.push;
  const ref = repoFromRemoteUrl(url);
  if (!ref) throw new CloneError(`cannot tell OWNER/REPO from the URL of remote ${remote.name} (${redactUrl(url)})`, hint);
  return ref;
}

/**
 * The full object id of a revision. Full 40/64-hex ids pass through without a clone; anything
 * else is resolved in the clone at cwd, annotated tags peeled to the object they tag.
 */
export async function resolveTarget(cwd: string, rev: string): Promise<string> {
  if (FULL_ID.test(rev)) return rev.toLowerCase();
  if (rev === '' || rev.startsWith('-')) throw new CloneError(`not a revision: ${JSON.stringify(rev)}`);
  const git = await gitIn(cwd);
  if (!git || !(await git.checkIsRepo().catch(() => false))) {
    throw new CloneError(`cannot resolve ${rev}: ${cwd} is not inside a git clone`, 'run it in a clone, or pass a full 40- or 64-hex object id');
  }
  let id: string;
  try {
    // `^{}` peels annotated tags; after `REV:path` or `:/text` it would become part of the path or text.
    const spec = rev.includes(':') ? rev : `${rev}^{}`;
    id = (await git.revparse(['--verify', '--quiet', '--end-of-options', spec])).trim();
  } catch {
    throw new CloneError(`unknown revision ${JSON.stringify(rev)} in this clone`);
  }
  if (!FULL_ID.test(id)) throw new CloneError(`unknown revision ${JSON.stringify(rev)} in this clone`);
  return id.toLowerCase();
}

/**
 * The commits of a revision range (`A..B`, as `git rev-list` reads it) in the clone at cwd,
 * oldest first (`--reverse`): what `--range` and `mkt notes missing` send as `commits=`.
 */
export async function revList(cwd: string, range: string): Promise<string[]> {
  if (range.trim() === '' || range.startsWith('-')) throw new CloneError(`not a revision range: ${JSON.stringify(range)}`, 'give A..B, e.g. v1.0..HEAD');
  const git = await gitIn(cwd);
  if (!git || !(await git.checkIsRepo().catch(() => false))) {
    throw new CloneError(`cannot resolve ${range}: ${cwd} is not inside a git clone`, 'run it in the clone whose commits the range names');
  }
  let out: string;
  try {
    // `--` after the range: a name that is also a file is still read as a revision.
    out = await git.raw(['rev-list', '--reverse', '--end-of-options', range, '--']);
  } catch (err) {
    const why = (err as Error).message.split('\n').find((l) => l.startsWith('fatal:')) ?? 'unknown revision';
    throw new CloneError(`cannot resolve the range ${JSON.stringify(range)} in this clone (${why.replace(/^fatal:\s*/, '')})`);
  }
  return out.split('\n').filter((l) => FULL_ID.test(l)).map((l) => l.toLowerCase());
}
