// signingKeyRotateRun: `mkt admin signing-key rotate` — a new Ed25519 token-signing key; the
// old public key stays in the JWKS until the tokens it signed expire. Every running instance
// on the database hears of it at once (or within a few seconds, when a notification is missed).
import { printFields, printJson } from '../../../src/cli/output.js';
import { withAdmin, type AdminFlags } from './shared.js';

export async function signingKeyRotateRun(opts: AdminFlags): Promise<void> {
  const r = await withAdmin(opts, async (admin) => admin.rotateSigningKey());
  if (opts.json) printJson(opts.factory.io, r);
  else printFields(opts.factory.io, [['current kid', r.kid], ['retired', r.retired.join(', ') || '(none)']]);
}
