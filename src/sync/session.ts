// One device's view of a sync account on one server: the saved profile, the token and keyring
// (OS keychain or the 0600 credentials file), and a client carrying the token.
import type { Factory } from '../cli/factory.js';
import { AuthError, NegativeError } from '../cli/errors.js';
import type { CredentialStore } from '../config/credentials.js';
import { decodeKeyring, encodeKeyring, type Keyring } from '../crypto/envelope.js';
import { keyFingerprint } from '../crypto/sync-keys.js';
import { HttpClient } from '../client/http.js';
import { SyncClient } from '../client/sync.js';
import { SyncState, type SyncProfile } from './state.js';

const LOGIN_HINT = 'run `mkt sync login --app-key KEY --email EMAIL`';
const UNLOCK_HINT = 'run `mkt sync key unlock` (or `mkt sync key init` on the first device)';

export function tokenAccount(server: string): string {
  return `sync-token@${server}`;
}
export function keyringAccount(server: string): string {
  return `sync-keyring@${server}`;
}

export function clientFor(server: string, token?: string): SyncClient {
  return new SyncClient(new HttpClient({ baseUrl: server, token, timeoutMs: 120_000, connectTimeoutMs: 5_000 }));
}

export class SyncSession {
  private constructor(
    readonly server: string,
    readonly state: SyncState,
    readonly creds: CredentialStore,
    public profile: SyncProfile,
    public client: SyncClient,
  ) {}

  /** The logged-in session for the server of `--server` / MKT_MARKETPLACE_URL / the profile. */
  static async open(f: Factory, flags: { server?: string }): Promise<SyncSession> {
    const { url } = await f.resolveServer('marketplace', flags);
    const state = new SyncState(f.io.env);
    const profile = state.profile(url);
    const creds = await f.credentials();
    const token = f.io.env.MKT_SYNC_TOKEN?.trim() || (await creds.get(tokenAccount(url)));
    if (!profile || !token) throw new AuthError(`not logged in to sync at ${url}`, LOGIN_HINT);
    return new SyncSession(url, state, creds, profile, clientFor(url, token));
  }

  /** Keeps a fresh token (a re-sign-in with the password) for this and later commands. */
  async saveToken(token: string): Promise<void> {
    await this.creds.set(tokenAccount(this.server), token);
    this.client = clientFor(this.server, token);
  }

  save(change: (p: SyncProfile) => void): void {
    this.profile = this.state.update(this.server, change);
  }

  async keyring(): Promise<Keyring> {
    const text = await this.creds.get(keyringAccount(this.server));
    if (!text) throw new NegativeError('this device holds no sync key', UNLOCK_HINT);
    return decodeKeyring(text);
  }

  async saveKeyring(ring: Keyring, ids: Record<number, Uint8Array>): Promise<void> {
    await this.creds.set(keyringAccount(this.server), encodeKeyring(ring));
    this.save((p) => {
      p.keys ??= {};
      for (const [id, k] of Object.entries(ids)) p.keys[id] = keyFingerprint(k);
    });
  }

  /** The master key the server's key id `keyId` names, from this device's keyring. */
  async keyFor(keyId: number, ring?: Keyring): Promise<Uint8Array> {
    const r = ring ?? (await this.keyring());
    const fp = this.profile.keys?.[String(keyId)];
    const k = fp ? r.keys.find((x) => keyFingerprint(x) === fp) : undefined;
    if (!k) throw new NegativeError(`this device does not hold sync key ${keyId} (rotated on another device?)`, UNLOCK_HINT);
    return k;
  }
}
