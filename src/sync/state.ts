// Local sync state of one device: the per-server profile (app key, email, device, pull cursor,
// an unfinished rotation) and resumable multipart sessions, as 0600 JSON files under
// $XDG_CONFIG_HOME/mkt/sync/. Secrets (token, keyring) never land here: see src/sync/secrets.ts.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDir } from '../config/paths.js';

export interface RotationState {
  rotation_id: string;
  new_key_id: number;
  /** Fingerprint of the new master key: tells a finished rotation from one still to run. */
  new_key_fingerprint: string;
  target_seq: number;
  /** Highest sequence re-encrypted so far (pages resume after it). */
  done_seq: number;
  started_at: string;
}

export interface SyncProfile {
  server: string;
  api_key: string;
  app_name?: string;
  email: string;
  device_id?: string;
  device_name?: string;
  /** Last sequence number `pull` has printed. */
  cursor: number;
  /** Server key id -> fingerprint of the master key in this device's keyring. */
  keys?: Record<string, string>;
  rotation?: RotationState;
}

export interface UploadSession {
  server: string;
  hash: string;
  file: string;
  plain_size: number;
  size_bytes: number;
  upload_id: string;
  /** Fingerprint of the master key the parts are sealed with: a resume must use the same one. */
  key_fingerprint: string;
  part_size: number;
  part_count: number;
  /** part number -> ETag of the parts already stored. */
  etags: Record<string, string>;
  started_at: string;
}

function writeJson0600(file: string, value: unknown): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
}

export class SyncState {
  readonly dir: string;
  constructor(env: NodeJS.ProcessEnv) {
    this.dir = join(configDir(env), 'sync');
  }

  private ensure(sub = ''): string {
    const d = join(this.dir, sub);
    mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  }

  private get profilesFile(): string {
    return join(this.dir, 'profiles.json');
  }

  profile(server: string): SyncProfile | undefined {
    return readJson<Record<string, SyncProfile>>(this.profilesFile)?.[server];
  }

  /** Every saved profile, one per server this device has signed in to sync at. */
  profiles(): SyncProfile[] {
    return Object.values(readJson<Record<string, SyncProfile>>(this.profilesFile) ?? {});
  }

  saveProfile(p: SyncProfile): void {
    this.ensure();
    const all = readJson<Record<string, SyncProfile>>(this.profilesFile) ?? {};
    all[p.server] = p;
    writeJson0600(this.profilesFile, all);
  }

  update(server: string, change: (p: SyncProfile) => void): SyncProfile {
    const p = this.profile(server);
    if (!p) throw new Error(`no sync profile for ${server}`);
    change(p);
    this.saveProfile(p);
    return p;
  }

  removeProfile(server: string): boolean {
    const all = readJson<Record<string, SyncProfile>>(this.profilesFile);
    if (!all || !(server in all)) return false;
    delete all[server];
    writeJson0600(this.profilesFile, all);
    return true;
  }

  private uploadFile(server: string, hash: string): string {
    const key = createHash('sha256').update(`${server}\n${hash}`).digest('hex').slice(0, 32);
    return join(this.dir, 'uploads', `${key}.json`);
  }

  upload(server: string, hash: string): UploadSession | undefined {
    return readJson<UploadSession>(this.uploadFile(server, hash));
  }

  saveUpload(s: UploadSession): void {
    this.ensure('uploads');
    writeJson0600(this.uploadFile(s.server, s.hash), s);
  }

  removeUpload(server: string, hash: string): void {
    rmSync(this.uploadFile(server, hash), { force: true });
  }

  /** Unfinished multipart sessions (for `blob put` resume and `status`). */
  uploads(server: string): UploadSession[] {
    let names: string[] = [];
    try {
      names = readdirSync(join(this.dir, 'uploads')).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
    return names.map((n) => readJson<UploadSession>(join(this.dir, 'uploads', n))).filter((s): s is UploadSession => s?.server === server);
  }
}
