// Running `mkt admin --data-dir DIR ...` in-process with fake streams, as the admin tests do.
import { run } from '../../src/cli/run.js';
import { fakeIO } from './fake-io.js';

export type AdminCli = (args: string[], opts?: { stdin?: string; tty?: boolean }) => Promise<{ code: number; out: string; err: string }>;

export function adminCli(cwd: string, dataDir: string): AdminCli {
  return async (args, opts = {}) => {
    const io = fakeIO({ env: {}, stdin: opts.stdin, tty: opts.tty, cwd });
    const code = await run(['admin', '--data-dir', dataDir, ...args], io);
    return { code, out: io.out(), err: io.err() };
  };
}
