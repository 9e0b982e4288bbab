// Local sync state of one device: the per-server profile (app key, email, device, pull cursor,
// an unfinished rotation) and resumable multipart sessions (each a JSON file and a log of the
// parts stored since, one JSON line each), as 0600 files under $XDG_CONFIG_HOME/mkt/sync/.
// Secrets (token, keyring) never land here: see src/sync/secrets.ts.
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

/** A file's text, or undefined when there is none; any other failure names the file. */
function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
}

function readJson<T>(file: string): T | undefined {
  const text = readText(file);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch (err) {
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

  /** The log of a session's stored parts, beside its file (see recordPart). */
  private partsFile(sessionFile: string): string {
    return sessionFile.replace(/\.json$/, '.parts');
  }

  /** A session's file with the parts its log holds (lines of another upload id, or torn by a crash, are left out). */
  private readUpload(file: string): UploadSession | undefined {
    const s = readJson<UploadSession>(file);
    if (s === undefined) return undefined;
    for (const line of (readText(this.partsFile(file)) ?? '').split('\n')) {
      let p: { upload_id?: unknown; part?: unknown; etag?: unknown };
      try {
        p = JSON.parse(line) as typeof p;
      } catch {
        continue;
      }
      if (p?.upload_id === s.upload_id && Number.isInteger(p.part) && typeof p.etag === 'string') s.etags[String(p.part)] = p.etag;
    }
    return s;
  }

  upload(server: string, hash: string): UploadSession | undefined {
    return this.readUpload(this.uploadFile(server, hash));
  }

  /** Writes the session whole (its start, a resume); the parts stored after go to recordPart. */
  saveUpload(s: UploadSession): void {
    this.ensure('uploads');
    const file = this.uploadFile(s.server, s.hash);
    writeJson0600(file, s);
    // Its ETags are in the file now; a log left by an earlier run is not needed.
    rmSync(this.partsFile(file), { force: true });
  }

  /**
   * Notes that part `n` of `s` is stored, as one line appended to the session's log: a `blob put`
   * stopped from here on resumes after it. Rewriting the whole file for each part stalled the
   * upload: on ext4 a rename over a file waits for the journal, which the upload's own traffic
   * keeps busy (bench/README.md, "Blob put"). A line torn by a crash is skipped when read back.
   */
  recordPart(s: UploadSession, n: number, etag: string): void {
    s.etags[String(n)] = etag;
    // The newline comes first: a line torn by a crash is then ended by the next run's first line
    // rather than joined to it.
    appendFileSync(this.partsFile(this.uploadFile(s.server, s.hash)), `\n${JSON.stringify({ upload_id: s.upload_id, part: n, etag })}`, { mode: 0o600 });
  }

  removeUpload(server: string, hash: string): void {
    const file = this.uploadFile(server, hash);
    rmSync(file, { force: true });
    rmSync(this.partsFile(file), { force: true });
  }

  /** Unfinished multipart sessions (for `blob put` resume and `status`). */
  uploads(server: string): UploadSession[] {
    let names: string[] = [];
    try {
      names = readdirSync(join(this.dir, 'uploads')).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
    return names.map((n) => this.readUpload(join(this.dir, 'uploads', n))).filter((s): s is UploadSession => s?.server === server);
  }
}
