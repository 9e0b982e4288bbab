// userListRun: `mkt admin user list` — the marketplace's accounts (never a password or its hash).
import { printJson, printTable } from '../../../src/cli/output.js';
import { withAccounts, type AdminFlags } from './shared.js';

export async function userListRun(opts: AdminFlags): Promise<void> {
  const users = await withAccounts(opts, (admin) => admin.accounts.listUsers());
  const { io } = opts.factory;
  if (opts.json) printJson(io, users);
  else printTable(io, ['name', 'email', 'id', 'created'], users.map((u) => [u.name, u.email, u.id, u.created_at]));
}
