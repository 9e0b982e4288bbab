// Hosted repositories on disk: where they live (`<data-dir>/repos/<owner>/<name>.git`), what
// owner and repository names may be (so paths built from them never leave that directory), and
// creating one (with mkt's hooks, src/git/hooks.ts).
import { join } from 'node:path';
import { git } from './run.js';
import { installHooks } from './hooks.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** Why a user or repository name is unusable, or undefined when it is fine. */
export function nameProblem(kind: 'owner' | 'repository', name: string): string | undefined {
  if (!NAME.test(name)) return `${kind} name must be 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit`;
  if (name.includes('..')) return `${kind} name must not contain ".."`;
  if (kind === 'repository' && name.toLowerCase().endsWith('.git')) return 'repository name must not end in ".git"';
  return undefined;
}

export function reposRoot(dataDir: string): string {
  return join(dataDir, 'repos');
}

/** Directory of a repository; names are lower-cased so lookups ignore case like the store. */
export function repoDir(dataDir: string, owner: string, name: string): string {
  return join(reposRoot(dataDir), owner.toLowerCase(), `${name.toLowerCase()}.git`);
}

/** Creates a bare repository with the given object format, accepting pushes over smart HTTP. */
export async function initBareRepo(dir: string, objectFormat: 'sha1' | 'sha256'): Promise<void> {
  await git(undefined, ['init', '--quiet', '--bare', `--object-format=${objectFormat}`, dir]);
  await git(dir, ['config', 'http.receivepack', 'true']);
  // Note writes from the API and pushes race on the same refs; keep reflogs for forensics.
  await git(dir, ['config', 'core.logAllRefUpdates', 'always']);
  // Pushes are held to the note size limit from the first one on.
  installHooks(dir);
}
