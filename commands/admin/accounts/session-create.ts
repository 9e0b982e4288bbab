// sessionCreateRun: `mkt admin session create USER` — mints a browser-style session cookie
// value (cookie `mkt_session`; it authenticates reads only) and prints it once.
import { printJson } from '../../../src/cli/output.js';
import { withAccounts, type AdminFlags } from './shared.js';

export interface SessionCreateOptions extends AdminFlags {
  user: string;
}

export async function sessionCreateRun(opts: SessionCreateOptions): Promise<void> {
  const s = await withAccounts(opts, (admin) => admin.createSession(opts.user));
  const { io } = opts.factory;
  if (opts.json) printJson(io, { cookie: 'mkt_session', value: s.value, expires_at: s.expiresAt });
  else {
    io.stdout.write(`${s.value}\n`);
    io.stderr.write(`send it as "Cookie: mkt_session=<value>"; expires ${s.expiresAt}\n`);
  }
}
