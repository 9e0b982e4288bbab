// Stock git for tests, with no user or system config: a command's output (awaited, never a
// synchronous child beside a running server), a repository of many commits made in one
// `git fast-import`, and `git fsck` of a bare repository.
import { execFile } from 'node:child_process';

export const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.com', HOME: '/nonexistent' };

/** `git ...args` in `cwd`, its trimmed output; `input` on its stdin. */
export function gitIn(cwd: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`git ${args[0]} failed: ${stderr.trim()}`));
      else resolve(stdout.trim());
    });
    if (input !== undefined) {
      child.stdin?.on('error', () => undefined); // git may exit before reading all of it
      child.stdin?.end(input);
    }
  });
}

/** A local repository at `dir` with `n` empty commits on main, made in one `git fast-import`; their ids, oldest first. */
export async function fastCommits(dir: string, n: number): Promise<string[]> {
  await gitIn(dir, ['init', '-q', '--object-format=sha1', '-b', 'main']);
  let stream = '';
  for (let i = 1; i <= n; i++) {
    const msg = `commit ${i}\n`;
    stream += `commit refs/heads/main\nmark :${i}\ncommitter T <t@example.com> ${1_700_000_000 + i} +0000\ndata ${msg.length}\n${msg}${i > 1 ? `from :${i - 1}\n` : ''}\n`;
  }
  await gitIn(dir, ['fast-import', '--quiet'], stream);
  return (await gitIn(dir, ['rev-list', '--reverse', 'main'])).split('\n');
}

/** `git fsck --full --strict` in a bare repository: its exit code and what it printed. */
export function fsck(gitDir: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile('git', ['--git-dir', gitDir, 'fsck', '--full', '--strict'], { env: { ...process.env, ...GIT_ENV } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}
