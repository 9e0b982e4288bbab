// userAddRun: `mkt admin user add NAME --email E` — a marketplace account; a password (for sync
// login) is read from stdin when stdin is not a terminal, never from argv.
import { NegativeError } from '../../../src/cli/errors.js';
import { readAll } from '../../../src/cli/io.js';
import { printJson } from '../../../src/cli/output.js';
import { withAccounts, type AdminFlags } from './shared.js';

export interface UserAddOptions extends AdminFlags {
  name: string;
  email: string;
}

export async function userAddRun(opts: UserAddOptions): Promise<void> {
  const { io } = opts.factory;
  const password = io.stdin.isTTY ? undefined : ((await readAll(io.stdin)).split(/\r?\n/)[0] ?? '');
  // A first user makes the marketplace only where the command line names it (--data-dir or
  // --database-url): never in the ./.mkt-data default or a place left in the environment.
  const named = opts.dataDir !== undefined || opts.databaseUrl !== undefined;
  const input = { name: opts.name, email: opts.email, password: password || undefined };
  // Refused before anything is opened, so a bad first user leaves no marketplace behind.
  const { userInputProblem } = await import('../../../daemon/services/marketplace/accounts/admin.js');
  const problem = userInputProblem(input);
  if (problem) throw new NegativeError(problem);
  const user = await withAccounts(opts, (admin) => admin.addUser(input), named);
  if (opts.json) printJson(io, { ...user, password: password ? 'set' : 'none' });
  else io.stdout.write(`added user ${user.name} <${user.email}>${password ? ' with a password' : ''}\n`);
}
