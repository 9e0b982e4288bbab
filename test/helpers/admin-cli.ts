// Running `mkt admin --data-dir DIR ...` in-process with fake streams, as the admin tests do.
import { run } from '../../commands/root/run.js';
import { fakeIO } from './fake-io.js';

export type AdminCli = (args: string[], opts?: { stdin?: string; tty?: boolean; env?: NodeJS.ProcessEnv }) => Promise<{ code: number; out: string; err: string }>;

/**
 * `target.databaseUrl` adds `--database-url URL` (the stores on PostgreSQL); `opts.env` of a call
 * is the environment that call sees (MKT_DATABASE_URL, for one).
 */
export function adminCli(cwd: string, dataDir: string, target: { databaseUrl?: string } = {}): AdminCli {
  return async (args, opts = {}) => {
    const io = fakeIO({ env: opts.env ?? {}, stdin: opts.stdin, tty: opts.tty, cwd });
    const url = target.databaseUrl ? ['--database-url', target.databaseUrl] : [];
    const code = await run(['admin', '--data-dir', dataDir, ...url, ...args], io);
    return { code, out: io.out(), err: io.err() };
  };
}
