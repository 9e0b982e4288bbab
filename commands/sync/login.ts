// loginRun: `mkt sync login` — app key and email from flags, password from a hidden prompt or
// stdin; keeps the token in the keychain (or 0600 file), registers this device, and unlocks
// the account's key when one exists (same password), so one command readies a device.
import { hostname } from 'node:os';
import type { Factory } from '../../src/cli/factory.js';
import { AuthError, UsageError } from '../../src/cli/errors.js';
import { printFields, printJson } from '../../src/cli/output.js';
import { ApiError } from '../../src/client/http.js';
import { SyncState } from '../../src/sync/state.js';
import { clientFor, SyncSession, tokenAccount } from '../../src/sync/session.js';
import { unlockKey } from '../../src/sync/keys.js';
import { call, readPassword, type ClientFlags } from './shared.js';

export interface LoginOptions extends ClientFlags {
  factory: Factory;
  appKey?: string;
  email: string;
  device?: string;
}

export async function loginRun(opts: LoginOptions): Promise<void> {
  const f = opts.factory;
  const appKey = opts.appKey ?? f.io.env.MKT_SYNC_APP_KEY?.trim();
  if (!appKey) throw new UsageError('no app key: pass --app-key KEY or set MKT_SYNC_APP_KEY');
  if (!opts.email.includes('@')) throw new UsageError(`--email is not an email address: ${opts.email}`);
  const { url } = await f.resolveServer('marketplace', { server: opts.server });
  const password = await readPassword(f, `Password for ${opts.email}: `);
  const anon = clientFor(url);
  const auth = await call(async () => {
    try {
      return await anon.auth({ api_key: appKey, email: opts.email, password });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) throw new AuthError('wrong app key, email or password');
      throw err;
    }
  });
  const app = await call(() => anon.validateApp(appKey)).catch(() => undefined);
  const state = new SyncState(f.io.env);
  const previous = state.profile(url);
  const sameAccount = previous?.email === opts.email && previous.api_key === appKey;
  state.saveProfile({
    server: url,
    api_key: appKey,
    app_name: app?.app_name,
    email: opts.email,
    cursor: sameAccount ? previous.cursor : 0,
    keys: sameAccount ? previous.keys : undefined,
    device_id: sameAccount ? previous.device_id : undefined,
    device_name: sameAccount ? previous.device_name : undefined,
    rotation: sameAccount ? previous.rotation : undefined,
  });
  const creds = await f.credentials();
  await creds.set(tokenAccount(url), auth.token);
  const s = await SyncSession.open(f, { server: url });
  const deviceName = opts.device ?? s.profile.device_name ?? hostname();
  const device = await call(() => s.client.registerDevice({ name: deviceName }));
  s.save((p) => {
    p.device_id = device.id;
    p.device_name = device.name;
  });
  const hasKey = await call(() => s.client.getKey());
  const key = hasKey ? await call(() => unlockKey(s, password)) : undefined;
  const where = creds.backend === 'keychain' ? 'the OS keychain' : creds.location;
  if (opts.json) {
    printJson(f.io, { server: url, app_name: app?.app_name ?? null, email: opts.email, device_id: device.id, device_name: device.name, key_unlocked: Boolean(key), credentials: creds.backend });
    return;
  }
  printFields(f.io, [
    ['server', url],
    ['app', app?.app_name ?? ''],
    ['email', opts.email],
    ['device', `${device.name} (${device.id})`],
    ['key', key ? `unlocked (key id ${key.key_id})` : 'none yet: run `mkt sync key init`'],
  ]);
  f.io.stderr.write(`Logged in; token and keys kept in ${where}\n`);
}
