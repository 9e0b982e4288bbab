// The sync sign-ins this device holds, seen from outside a sync command: what `mkt auth status`
// shows (never a secret) and what `mkt auth logout marketplace` and `mkt sync logout` remove.
import { decodeJwt } from 'jose';
import type { CredentialStore } from '../config/credentials.js';
import { keyringAccount, tokenAccount } from './session.js';
import { SyncState } from './state.js';

export interface SyncSessionSummary {
  server: string;
  app_name: string | null;
  email: string;
  device_id: string | null;
  device_name: string | null;
  /** Where the sync token is: MKT_SYNC_TOKEN, the credential store's backend, or nowhere. */
  token: 'env' | CredentialStore['backend'] | 'none';
  /** When the saved token stops being accepted (its `exp` claim), null when unknown. */
  expires_at: string | null;
  expired: boolean | null;
  /** Whether this device holds the account's key (the keyring). */
  keys_held: boolean;
}

/** The `exp` of a JWT we hold, read without verifying it (the server does that). */
function expiryOf(token: string | undefined): Date | undefined {
  if (!token) return undefined;
  try {
    const exp = decodeJwt(token).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? new Date(exp * 1000) : undefined;
  } catch {
    return undefined;
  }
}

export async function syncSessions(env: NodeJS.ProcessEnv, creds: CredentialStore, now: Date): Promise<SyncSessionSummary[]> {
  const envToken = env.MKT_SYNC_TOKEN?.trim() || undefined;
  const out: SyncSessionSummary[] = [];
  for (const p of new SyncState(env).profiles()) {
    const saved = await creds.get(tokenAccount(p.server));
    const token = envToken ?? saved;
    const exp = expiryOf(token);
    out.push({
      server: p.server,
      app_name: p.app_name ?? null,
      email: p.email,
      device_id: p.device_id ?? null,
      device_name: p.device_name ?? null,
      token: envToken ? 'env' : saved ? creds.backend : 'none',
      expires_at: exp ? exp.toISOString() : null,
      expired: exp ? exp.getTime() <= now.getTime() : null,
      keys_held: (await creds.get(keyringAccount(p.server))) !== undefined,
    });
  }
  return out.sort((a, b) => a.server.localeCompare(b.server));
}

/** Removes the sync token, keyring and profile of `server`; false when there was none of them. */
export async function forgetSyncSession(env: NodeJS.ProcessEnv, creds: CredentialStore, server: string): Promise<boolean> {
  const a = await creds.delete(tokenAccount(server));
  const b = await creds.delete(keyringAccount(server));
  const c = new SyncState(env).removeProfile(server);
  return a || b || c;
}
