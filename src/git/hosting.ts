// Hosted repositories on disk: where they live (`<data-dir>/repos/<owner>/<name>.git`), what
// owner, repository and branch names may be (so paths built from them never leave that
// directory), and creating one (with mkt's hooks, src/git/hooks.ts) readable by the server's user alone.
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { git, runGit } from './run.js';
import { installHooks } from './hooks.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** Why a user or repository name is unusable, or undefined when it is fine. */
export function nameProblem(kind: 'owner' | 'repository', name: string): string | undefined {
  if (!NAME.test(name)) return `${kind} name must be 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit`;
  if (name.includes('..')) return `${kind} name must not contain ".."`;
  if (kind === 'repository' && name.toLowerCase().endsWith('.git')) return 'repository name must not end in ".git"';
  return undefined;
}

/** The branch HEAD names in a new repository unless `repo create --default-branch` says otherwise. */
export const DEFAULT_BRANCH = 'main';

/**
 * Why a branch name is unusable as a default branch (git's own rules, `git check-ref-format
 * --branch`), or undefined when it is fine. A leading `-` is refused first: git would read it as
 * an option; `@{-1}` and the like are refused because git expands them to another name.
 */
export async function branchNameProblem(name: string): Promise<string | undefined> {
  const bad = `not a valid branch name: ${JSON.stringify(name)}`;
  if (name === '' || name.startsWith('-') || name.includes('\0')) return bad;
  const r = await runGit(undefined, ['check-ref-format', '--branch', name]);
  if (r.code !== 0 || r.stdout.toString('utf8').trim() !== name) return bad;
  return undefined;
}

export function reposRoot(dataDir: string): string {
  return join(dataDir, 'repos');
}

/** Directory of a repository; names are lower-cased so lookups ignore case like the store. */
export function repoDir(dataDir: string, owner: string, name: string): string {
  return join(reposRoot(dataDir), owner.toLowerCase(), `${name.toLowerCase()}.git`);
}

/**
 * The mode git gives every file it creates in a hosted repository (directories get 0700), whatever
 * the umask of the process that runs it: a private repository's notes and objects must not be
 * readable by other users of the machine, even in a data directory an operator made 0755.
 */
export const REPO_FILE_MODE = '0600';

/**
 * Takes group and other permissions off a directory and everything under it (symbolic links
 * are left alone): for what `git init` made with the umask, before anything is stored in it.
 */
export function restrictTree(path: string): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return;
  chmodSync(path, st.isDirectory() ? 0o700 : st.mode & 0o700);
  if (st.isDirectory()) for (const name of readdirSync(path)) restrictTree(join(path, name));
}

/**
 * Makes `<data-dir>/repos` 0700 (creating it when missing): one mode that hides every repository
 * below it, also those an earlier version created with the umask.
 */
export function restrictReposRoot(dataDir: string): void {
  const root = reposRoot(dataDir);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  chmodSync(root, 0o700);
}

/**
 * Creates a bare repository with the given object format, accepting pushes over smart HTTP, whose
 * HEAD names `defaultBranch` (checked with branchNameProblem by the caller) whatever the server
 * user's init.defaultBranch says.
 */
export async function initBareRepo(dir: string, objectFormat: 'sha1' | 'sha256', defaultBranch: string = DEFAULT_BRANCH): Promise<void> {
  // The directories above it that are made here (`repos/`, the owner's) are the server's alone
  // too: git init would make them with the umask.
  const first = mkdirSync(dirname(dir), { recursive: true, mode: 0o700 });
  if (first !== undefined) for (let d = dirname(dir); d.length >= first.length; d = dirname(d)) chmodSync(d, 0o700);
  await git(undefined, ['init', '--quiet', '--bare', `--object-format=${objectFormat}`, dir]);
  await git(dir, ['symbolic-ref', 'HEAD', `refs/heads/${defaultBranch}`]);
  // Not `git init --shared`, which also sets receive.denyNonFastforwards (notes are force-pushed).
  await git(dir, ['config', 'core.sharedRepository', REPO_FILE_MODE]);
  restrictTree(dir);
  await git(dir, ['config', 'http.receivepack', 'true']);
  // Note writes from the API and pushes race on the same refs; keep reflogs for forensics.
  await git(dir, ['config', 'core.logAllRefUpdates', 'always']);
  // Pushes are held to the note size limit from the first one on.
  installHooks(dir);
}
