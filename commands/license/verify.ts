// verifyRun: `mkt license verify` — gets a signed token for this machine (7 days; on a floating key
// it ends with the seat's lease) and stores it in the user cache directory for `mkt license check`
// (which trusts pinned public keys, not the cache).
import type { Factory } from '../../src/cli/factory.js';
import { saveToken } from '../../src/client/license-offline.js';
import { PUBLIC_KEYS_ENV } from '../../src/client/license-trust.js';
import { call, finish, licenseClient, readKey, resolveMachine, type ClientFlags, type KeyFlags } from './shared.js';

export interface VerifyOptions extends ClientFlags, KeyFlags {
  factory: Factory;
  machine: string;
}

function claimsOf(token: string): Record<string, unknown> {
  try {
    return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

export async function verifyRun(opts: VerifyOptions): Promise<void> {
  const f = opts.factory;
  const machine = resolveMachine(opts.machine);
  const key = (await readKey(f, opts))!;
  const client = await licenseClient(f, opts);
  const res = await call(() => client.verify(key, machine));
  let file: string | undefined;
  let item = '';
  if (res.valid && res.token) {
    // Reading the claims only names the cache file; `check` verifies them against pinned keys.
    const claims = claimsOf(res.token);
    item = String(claims.item ?? 'license');
    file = saveToken(f.io.env, { server: client.http.baseUrl, item, license: String(claims.license ?? ''), token: res.token, saved_at: new Date(f.now()).toISOString() });
    if (!f.io.env[PUBLIC_KEYS_ENV]) {
      f.io.stderr.write(`hint: \`mkt license check\` trusts only pinned public keys: save ${client.http.baseUrl}/api/v1/license/jwks.json and pass --public-key FILE or set $${PUBLIC_KEYS_ENV}\n`);
    }
  }
  const expires = res.expires_in != null ? new Date(f.now().getTime() + res.expires_in * 1000).toISOString() : null;
  finish(f, opts.json, res, [['valid', 'yes'], ['item', item], ['token expires', expires], ['stored in', file]], res);
}
