// Reading a backup file back: every member against the manifest (type, size, mode, SHA-256, and the
// manifest against its own digest), the tar itself strictly (tar.ts), and each SQLite database
// through `PRAGMA integrity_check` on a copy extracted to disk. Used by `mkt backup verify`, and
// twice by restore: once to check, once to extract into its staging directory (checking again, so
// a file that changed between the two passes cannot slip through).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, rm, stat, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { NegativeError, UsageError } from '../cli/errors.js';
import { readTar, TarFormatError } from './tar.js';
import { DATA_PREFIX, MANIFEST_DIGEST_NAME, MANIFEST_NAME, SQLITE_MAGIC, modeText, parseManifest, unsafeMemberName, type Manifest, type ManifestMember } from './format.js';

/** The backup is damaged or not one this mkt wrote: exit 1, one line saying what. */
export class BackupDamagedError extends NegativeError {
  constructor(file: string, reason: string) {
    super(`${file}: the backup is damaged or not an mkt backup: ${reason}`);
  }
}

export interface CheckOptions {
  /** Write every data member under this directory (restore's staging dir), `data/x` as `<dir>/x`. */
  extractTo?: string;
}

export interface CheckResult {
  manifest: Manifest;
  /** Data members checked (files and directories). */
  members: number;
  files: number;
  data_bytes: number;
  databases: { path: string; integrity: 'ok' }[];
}

const MAX_MANIFEST_BYTES = 1024 * 1024 * 1024;

async function collect(body: AsyncIterable<Buffer>, limit: number, what: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const c of body) {
    n += c.length;
    if (n > limit) throw new Error(`${what} is larger than ${limit} bytes`);
    parts.push(c);
  }
  return Buffer.concat(parts);
}

function integrityCheck(file: string): string | undefined {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true });
    const rows = db.pragma('integrity_check') as { integrity_check: string }[];
    const bad = rows.map((r) => r.integrity_check).filter((t) => t !== 'ok');
    return bad.length === 0 ? undefined : bad.slice(0, 3).join('; ');
  } catch (err) {
    return (err as Error).message;
  } finally {
    db?.close();
  }
}

/** Checks (and with `extractTo`, extracts) the backup at `file`; throws BackupDamagedError on any mismatch. */
export async function checkBackup(file: string, opts: CheckOptions = {}): Promise<CheckResult> {
  const st = await stat(file).catch(() => undefined);
  if (!st) throw new UsageError(`no backup file at ${file}`);
  if (!st.isFile()) throw new UsageError(`${file} is not a file`);
  const damaged = (reason: string): BackupDamagedError => new BackupDamagedError(file, reason);
  // Without a staging dir, databases are extracted here for integrity_check (then removed).
  const scratch = opts.extractTo ? undefined : await mkdtemp(join(tmpdir(), 'mkt-backup-verify-'));
  const seen: ManifestMember[] = [];
  const names = new Set<string>();
  const fileNames = new Set<string>();
  /** Data path → where its bytes were written (databases, or everything when extracting). */
  const written = new Map<string, string>();
  let manifestText: Buffer | undefined;
  let digestText: string | undefined;
  let files = 0;
  let dataBytes = 0;
  try {
    try {
      for await (const e of readTar(createReadStream(file, { highWaterMark: 256 * 1024 }))) {
        if (digestText !== undefined) throw damaged(`a member ${JSON.stringify(e.name)} after ${MANIFEST_DIGEST_NAME}`);
        if (e.name === MANIFEST_NAME) {
          if (manifestText) throw damaged(`two ${MANIFEST_NAME} members`);
          if (e.type !== 'file') throw damaged(`${MANIFEST_NAME} is not a file`);
          manifestText = await collect(e.body, MAX_MANIFEST_BYTES, MANIFEST_NAME);
          continue;
        }
        if (e.name === MANIFEST_DIGEST_NAME) {
          if (!manifestText) throw damaged(`${MANIFEST_DIGEST_NAME} before ${MANIFEST_NAME}`);
          digestText = (await collect(e.body, 4096, MANIFEST_DIGEST_NAME)).toString('utf8');
          continue;
        }
        if (manifestText) throw damaged(`a member ${JSON.stringify(e.name)} after ${MANIFEST_NAME}`);
        const unsafe = unsafeMemberName(e.name);
        if (unsafe) throw damaged(`member ${JSON.stringify(e.name)} has ${unsafe}; refused`);
        if (names.has(e.name)) throw damaged(`member ${JSON.stringify(e.name)} appears twice`);
        if (e.name === DATA_PREFIX && e.type !== 'dir') throw damaged(`member ${DATA_PREFIX} is not a directory`);
        // A member under a name that is a file is a tar made by hand: refused before anything is written.
        for (let i = e.name.indexOf('/'); i > 0; i = e.name.indexOf('/', i + 1)) {
          if (fileNames.has(e.name.slice(0, i))) throw damaged(`member ${JSON.stringify(e.name)} lies under the file ${JSON.stringify(e.name.slice(0, i))}`);
        }
        names.add(e.name);
        if (e.type === 'file') fileNames.add(e.name);
        const rel = e.name === DATA_PREFIX ? '' : e.name.slice(DATA_PREFIX.length + 1);
        if (e.type === 'dir') {
          if (opts.extractTo) await mkdir(join(opts.extractTo, rel), { recursive: true, mode: 0o700 });
          seen.push({ path: e.name, type: 'dir', mode: modeText(e.mode), size: 0 });
          continue;
        }
        const hash = createHash('sha256');
        let fh: FileHandle | undefined;
        let head = Buffer.alloc(0);
        let decided = false;
        const sinkPath = (): string => (opts.extractTo ? join(opts.extractTo, rel) : join(scratch!, `db-${written.size}.sqlite`));
        try {
          if (opts.extractTo) {
            // The parent exists when the backup lists directories before their files (create does);
            // a hand-made tar may not, and mkdir keeps it inside the staging dir either way.
            await mkdir(join(opts.extractTo, rel, '..'), { recursive: true, mode: 0o700 });
            fh = await open(sinkPath(), 'wx', 0o600);
            written.set(rel, sinkPath());
            decided = true;
          }
          for await (const chunk of e.body) {
            hash.update(chunk);
            if (!decided) {
              head = Buffer.concat([head, chunk]);
              if (head.length < SQLITE_MAGIC.length) continue;
              decided = true;
              if (head.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) {
                const p = sinkPath();
                fh = await open(p, 'wx', 0o600);
                written.set(rel, p);
                await fh.write(head);
              }
              continue;
            }
            if (fh) await fh.write(chunk);
          }
          if (fh && opts.extractTo) await fh.sync();
        } finally {
          await fh?.close();
        }
        // Permission bits only: a data directory holds no set-id or sticky file, and a crafted backup restored as root must not make one.
        if (opts.extractTo) await chmod(join(opts.extractTo, rel), e.mode & 0o777);
        files++;
        dataBytes += e.size;
        seen.push({ path: e.name, type: 'file', mode: modeText(e.mode), size: e.size, sha256: hash.digest('hex') });
      }
    } catch (err) {
      if (err instanceof TarFormatError) throw damaged(err.message);
      throw err;
    }
    if (!manifestText) throw damaged(`no ${MANIFEST_NAME} (the file is truncated or not an mkt backup)`);
    if (digestText === undefined) throw damaged(`no ${MANIFEST_DIGEST_NAME} (the file is truncated)`);
    const digest = createHash('sha256').update(manifestText).digest('hex');
    if (digestText !== `${digest}  ${MANIFEST_NAME}\n`) throw damaged(`${MANIFEST_NAME} does not match ${MANIFEST_DIGEST_NAME}`);
    let manifest: Manifest;
    try {
      manifest = parseManifest(manifestText.toString('utf8'));
    } catch (err) {
      throw damaged((err as Error).message);
    }
    if (manifest.members.length !== seen.length) throw damaged(`the manifest lists ${manifest.members.length} members, the file holds ${seen.length}`);
    manifest.members.forEach((m, i) => {
      const s = seen[i]!;
      if (m.path !== s.path) throw damaged(`member ${i + 1} is ${JSON.stringify(s.path)}, the manifest says ${JSON.stringify(m.path)}`);
      if (m.type !== s.type) throw damaged(`${s.path}: a ${s.type}, the manifest says ${m.type}`);
      if (m.mode !== s.mode) throw damaged(`${s.path}: mode ${s.mode}, the manifest says ${m.mode}`);
      if (m.size !== s.size) throw damaged(`${s.path}: ${s.size} bytes, the manifest says ${m.size}`);
      if (m.sha256 !== s.sha256) throw damaged(`${s.path}: its SHA-256 does not match the manifest`);
    });
    const databases: CheckResult['databases'] = [];
    for (const db of manifest.databases) {
      const p = written.get(db);
      if (!p) throw damaged(`database ${db} is not an SQLite file in the backup`);
      const bad = integrityCheck(p);
      if (bad) throw damaged(`database ${db} fails integrity_check: ${bad}`);
      databases.push({ path: db, integrity: 'ok' });
    }
    return { manifest, members: seen.length, files, data_bytes: dataBytes, databases };
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}
