// Token storage: the OS keychain through @napi-rs/keyring, else a 0600 file beside the config.
// The keychain is probed once per process; `mkt auth status` reports which backend answered.
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDir } from './paths.js';

export type CredentialBackend = 'keychain' | 'file';

export interface CredentialStore {
  readonly backend: CredentialBackend;
  /** Where the secrets are kept, for `auth status`. */
  readonly location: string;
  get(account: string): Promise<string | undefined>;
  set(account: string, secret: string): Promise<void>;
  delete(account: string): Promise<boolean>;
}

const KEYCHAIN_SERVICE = 'mkt';

class FileCredentialStore implements CredentialStore {
  readonly backend = 'file' as const;
  constructor(readonly location: string) {}

  private read(): Record<string, string> {
    try {
      return JSON.parse(readFileSync(this.location, 'utf8')) as Record<string, string>;
    } catch {
      return {};
    }
  }

  private write(all: Record<string, string>): void {
    mkdirSync(join(this.location, '..'), { recursive: true, mode: 0o700 });
    const tmp = `${this.location}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(all, null, 2) + '\n', { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.location);
  }

  async get(account: string): Promise<string | undefined> {
    return this.read()[account];
  }
  async set(account: string, secret: string): Promise<void> {
    const all = this.read();
    all[account] = secret;
    this.write(all);
  }
  async delete(account: string): Promise<boolean> {
    const all = this.read();
    if (!(account in all)) return false;
    delete all[account];
    this.write(all);
    return true;
  }
}

interface KeyringEntry {
  getPassword(): string | null | undefined;
  setPassword(p: string): void;
  deletePassword(): boolean | void;
}

class KeychainCredentialStore implements CredentialStore {
  readonly backend = 'keychain' as const;
  readonly location = 'OS keychain (service "mkt")';
  constructor(private readonly entry: (account: string) => KeyringEntry) {}
  async get(account: string): Promise<string | undefined> {
    return this.entry(account).getPassword() ?? undefined;
  }
  async set(account: string, secret: string): Promise<void> {
    this.entry(account).setPassword(secret);
  }
  async delete(account: string): Promise<boolean> {
    try {
      return this.entry(account).deletePassword() !== false;
    } catch {
      return false;
    }
  }
}

/**
 * Opens the keychain when it answers a write/read/delete probe; otherwise the file.
 * MKT_CREDENTIAL_STORE=file forces the file (headless servers, tests).
 */
export async function openCredentialStore(env: NodeJS.ProcessEnv): Promise<CredentialStore> {
  const file = new FileCredentialStore(join(configDir(env), 'credentials.json'));
  if (env.MKT_CREDENTIAL_STORE === 'file') return file;
  try {
    const mod = (await import('@napi-rs/keyring')) as unknown as {
      Entry: new (service: string, account: string) => KeyringEntry;
    };
    const probe = new mod.Entry(KEYCHAIN_SERVICE, '__mkt_probe__');
    probe.setPassword('probe');
    if (probe.getPassword() !== 'probe') return file;
    probe.deletePassword();
    return new KeychainCredentialStore((account) => new mod.Entry(KEYCHAIN_SERVICE, account));
  } catch {
    return file;
  }
}

/** Account name under which a service's token is kept: one per service and server. */
export function tokenAccount(service: string, server: string): string {
  return `${service}@${server.replace(/\/+$/, '')}`;
}
