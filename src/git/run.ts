// Running the system `git` on a repository: argument arrays only (never a shell string built
// from input), optional stdin, output collected as bytes, the exit code returned for the
// caller to judge.
import { spawn } from 'node:child_process';

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly result: GitResult,
  ) {
    super(`git ${args[0] ?? ''} failed (exit ${result.code}): ${result.stderr.trim().split('\n').slice(-1)[0] ?? ''}`);
  }
}

/** Environment every git child gets: no prompts, no user or system config leaking in. */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/nonexistent',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    LC_ALL: 'C',
    ...extra,
  };
}

/** Runs `git --git-dir=<gitDir> <args>`; resolves with the result whatever the exit code. */
export function runGit(gitDir: string | undefined, args: readonly string[], opts: { input?: string | Buffer; env?: Record<string, string> } = {}): Promise<GitResult> {
  const full = gitDir === undefined ? [...args] : ['--git-dir', gitDir, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn('git', full, { env: gitEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.stdin.on('error', () => undefined); // git may exit before reading all input
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') }));
    child.stdin.end(opts.input ?? '');
  });
}

/** Like runGit, but a non-zero exit is an error and stdout comes back as trimmed text. */
export async function git(gitDir: string | undefined, args: readonly string[], opts: { input?: string | Buffer; env?: Record<string, string> } = {}): Promise<string> {
  const r = await runGit(gitDir, args, opts);
  if (r.code !== 0) throw new GitError(args, r);
  return r.stdout.toString('utf8').trim();
}
