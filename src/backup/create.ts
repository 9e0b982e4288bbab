// `mkt backup create`: an online, consistent backup of a service's data dir while its server runs
// and writes, streamed into one tar file (format.ts). Order matters and is deliberate:
//   1. every SQLite database first, through SQLite's online backup API in one step (a single read
//      transaction: a consistent snapshot that writers in WAL mode do not wait for);
//   2. then the rest of the data dir, git repositories with their refs taken through git itself
//      (`for-each-ref`, written as a packed-refs file) before their objects: objects are written
//      before any ref points at them, so every ref copied finds its objects in what follows;
//   3. the manifest last, since each member's SHA-256 is known only once it has been streamed.
// Everything the databases point at (repositories, blobs) is copied after them, so the restored
// service finds a superset: the notes index catches up with the repositories at start.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, type Stats } from 'node:fs';
import { chown, link, lstat, mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { git } from '../git/run.js';
import { UsageError } from '../cli/errors.js';
import { VERSION } from '../version.js';
import { TarWriter } from './tar.js';
import { claimWork, removeAbandoned, workName } from './abandoned.js';
import { redactDatabaseUrl } from '../util/redact-url.js';
import {
  DATA_PREFIX,
  FORMAT,
  FORMAT_VERSION,
  MANIFEST_DIGEST_NAME,
  MANIFEST_NAME,
  SERVICE_DATABASE,
  SQLITE_MAGIC,
  modeText,
  type BackupService,
  type Manifest,
  type ManifestMember,
} from './format.js';

export interface CreateBackupOptions {
  service: BackupService;
  dataDir: string;
  out: string;
  /** Replace an existing `out`. */
  force?: boolean;
  /** The PostgreSQL database the service uses (marketplace, monitor): not in the backup, said so. */
  databaseUrl?: string;
  /** Called after each member (the command draws its progress line from it). */
  progress?: (p: { members: number; bytes: number }) => void;
}

export interface CreateBackupSummary {
  file: string;
  service: BackupService;
  data_dir: string;
  members: number;
  files: number;
  /** Bytes of file data in the backup (before tar's headers and padding). */
  data_bytes: number;
  /** Size of the backup file. */
  bytes: number;
  sha256: string;
  databases: string[];
  repositories: string[];
  not_included: string[];
  /** Entries left out because a backup holds only files and directories (symbolic links, sockets). */
  skipped: string[];
  /** Work directories of earlier runs to the same output that were killed before they could clean up, removed. */
  abandoned_removed: string[];
}

/** The write-ahead log and friends of a database: never copied (the online backup holds their content). */
const SQLITE_SIDE_FILE = /-(wal|shm|journal)$/;
/** Files in flight that a restore must not find: tickets' snapshot copies, staged secrets, lock files. */
const TRANSIENT = [/^snapshot-.*\.db(-wal|-shm|-journal)?$/, /\.\d+\.[0-9a-f]{8}\.tmp$/, /\.lock$/];

async function isSqlite(file: string): Promise<boolean> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(file, 'r');
    const head = Buffer.alloc(SQLITE_MAGIC.length);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    return bytesRead === head.length && head.equals(SQLITE_MAGIC);
  } catch {
    return false;
  } finally {
    await fh?.close();
  }
}

/** SQLite's online backup, all pages in one step: one read transaction, so one consistent state. */
async function snapshotDatabase(source: string, dest: string): Promise<void> {
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 30000');
    // The first step copies nothing (better-sqlite3 sizes the backup); every later one takes all
    // remaining pages at once, so a write between steps cannot restart it forever.
    await db.backup(dest, { progress: () => 0x7fffffff });
  } finally {
    db.close();
  }
}

/**
 * Run as root (a backup timer usually is), the snapshot's connection may have created the
 * database's -wal and -shm files (a stopped server leaves none): root-owned, they would stop the
 * service's own user from opening its database. They go to the database file's owner.
 */
async function keepSideFilesOwned(db: string, st: Stats): Promise<void> {
  if (process.getuid?.() !== 0) return;
  for (const side of ['-wal', '-shm']) {
    const f = `${db}${side}`;
    const fst = await lstatOrUndefined(f);
    if (fst?.isFile() && (fst.uid !== st.uid || fst.gid !== st.gid)) await chown(f, st.uid, st.gid).catch(() => undefined);
  }
}

const isMissing = (err: unknown): boolean => (err as NodeJS.ErrnoException).code === 'ENOENT';

class BackupBuilder {
  readonly members: ManifestMember[] = [];
  readonly skipped: string[] = [];
  readonly repositories: string[] = [];
  dataBytes = 0;
  files = 0;

  constructor(
    private readonly tar: TarWriter,
    private readonly progress: CreateBackupOptions['progress'],
  ) {}

  private tick(): void {
    this.progress?.({ members: this.members.length, bytes: this.tar.written });
  }

  async dir(rel: string, st: Stats): Promise<void> {
    const name = rel === '' ? DATA_PREFIX : `${DATA_PREFIX}/${rel}`;
    await this.tar.directory(name, st.mode & 0o7777, st.mtimeMs / 1000);
    this.members.push({ path: name, type: 'dir', mode: modeText(st.mode), size: 0 });
    this.tick();
  }

  /** Streams an opened file: the handle keeps its content readable even if it is unlinked meanwhile. */
  async openedFile(rel: string, fh: FileHandle, mode: number, kind?: ManifestMember['kind']): Promise<void> {
    const st = await fh.stat();
    const name = `${DATA_PREFIX}/${rel}`;
    const body = st.size === 0 ? [] : fh.createReadStream({ start: 0, end: st.size - 1, autoClose: false, highWaterMark: 256 * 1024 });
    const sha256 = await this.tar.file(name, mode & 0o7777, st.mtimeMs / 1000, st.size, body);
    this.members.push({ path: name, type: 'file', mode: modeText(mode), size: st.size, sha256, ...(kind ? { kind } : {}) });
    this.files++;
    this.dataBytes += st.size;
    this.tick();
  }

  /** A file by path; false when it vanished before it could be opened (deleted meanwhile). */
  async file(rel: string, abs: string, kind?: ManifestMember['kind'], mode?: number): Promise<boolean> {
    let fh: FileHandle;
    try {
      fh = await open(abs, 'r');
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
    try {
      await this.openedFile(rel, fh, mode ?? (await fh.stat()).mode, kind);
      return true;
    } finally {
      await fh.close();
    }
  }

  async buffer(rel: string, data: Buffer, mode: number, mtime: number, kind?: ManifestMember['kind']): Promise<void> {
    const name = `${DATA_PREFIX}/${rel}`;
    const sha256 = await this.tar.buffer(name, mode, mtime, data);
    this.members.push({ path: name, type: 'file', mode: modeText(mode), size: data.length, sha256, ...(kind ? { kind } : {}) });
    this.files++;
    this.dataBytes += data.length;
    this.tick();
  }
}

async function sortedEntries(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
}

async function lstatOrUndefined(p: string): Promise<Stats | undefined> {
  try {
    return await lstat(p);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}

async function isGitRepository(dir: string): Promise<boolean> {
  const head = await lstatOrUndefined(join(dir, 'HEAD'));
  const objects = await lstatOrUndefined(join(dir, 'objects'));
  const refs = await lstatOrUndefined(join(dir, 'refs'));
  return Boolean(head?.isFile() && objects?.isDirectory() && refs?.isDirectory());
}

/** Pack files that belong together: taken all or none (an index without its pack is useless). */
const PACK_FILE = /^pack\/(pack-[0-9a-f]+)\.([a-z]+)$/;
const PACK_REQUIRED = ['idx', 'pack'];

/** Objects written while they are read: skip git's temporaries and a push's quarantine. */
const OBJECT_TRANSIENT = (name: string): boolean => name.startsWith('tmp_') || name.startsWith('incoming-') || name.endsWith('.lock') || name.startsWith('.tmp-');

async function listTree(root: string, rel = ''): Promise<{ dirs: string[]; files: string[] }> {
  const dirs: string[] = [];
  const files: string[] = [];
  for (const name of await sortedEntries(join(root, rel))) {
    if (OBJECT_TRANSIENT(name)) continue;
    const r = rel ? `${rel}/${name}` : name;
    const st = await lstatOrUndefined(join(root, r));
    if (st?.isDirectory()) {
      dirs.push(r);
      const sub = await listTree(root, r);
      dirs.push(...sub.dirs);
      files.push(...sub.files);
    } else if (st?.isFile()) files.push(r);
  }
  return { dirs, files };
}

/**
 * A bare repository, consistent with its refs: the refs through git (loose and packed, read the
 * way git reads them) into one packed-refs file, the rest of the repository (config, HEAD, hooks,
 * info), then the objects. A repack racing the copy deletes packs and loose objects only after
 * writing the pack that holds them, so what vanished is looked for again in a new listing.
 */
async function addRepository(b: BackupBuilder, rel: string, abs: string, st: Stats): Promise<void> {
  await b.dir(rel, st);
  b.repositories.push(rel);
  const refs = await git(abs, ['for-each-ref', '--format=%(objectname) %(refname)']);
  const headStat = await lstat(join(abs, 'HEAD'));
  for (const name of await sortedEntries(abs)) {
    const r = `${rel}/${name}`;
    const p = join(abs, name);
    // objects come after the refs; logs (reflogs) are not needed to serve, and may be appended to mid-copy.
    if (name === 'objects' || name === 'logs' || name === 'packed-refs' || name.endsWith('.lock')) continue;
    const est = await lstatOrUndefined(p);
    if (!est) continue;
    if (name === 'refs') {
      // The directories alone (git wants refs/, refs/heads, refs/tags to exist); the values are in packed-refs.
      await b.dir(r, est);
      for (const d of (await listTree(p)).dirs) {
        const dst = await lstatOrUndefined(join(p, d));
        if (dst) await b.dir(`${r}/${d}`, dst);
      }
      continue;
    }
    await addPath(b, r, p, est);
  }
  await b.buffer(`${rel}/packed-refs`, Buffer.from(refs === '' ? '' : `${refs}\n`), headStat.mode & 0o666, Date.now() / 1000, 'git-refs');

  const objects = join(abs, 'objects');
  const ost = await lstat(objects);
  await b.dir(`${rel}/objects`, ost);
  const doneDirs = new Set<string>();
  const doneFiles = new Set<string>();
  for (let round = 0; ; round++) {
    if (round === 20) throw new Error(`${abs}: its objects kept vanishing while they were copied (20 rounds); retry the backup`);
    const { dirs, files } = await listTree(objects);
    for (const d of dirs) {
      if (doneDirs.has(d)) continue;
      const dst = await lstatOrUndefined(join(objects, d));
      if (!dst) continue;
      await b.dir(`${rel}/objects/${d}`, dst);
      doneDirs.add(d);
    }
    let vanished = false;
    const groups = new Map<string, string[]>();
    for (const f of files) {
      const m = PACK_FILE.exec(f);
      if (m) groups.set(m[1]!, [...(groups.get(m[1]!) ?? []), f]);
    }
    for (const [, members] of groups) {
      if (members.every((f) => doneFiles.has(f))) continue;
      // Open every file of the pack before reading any: a repack may unlink them, open handles keep them.
      const handles = new Map<string, FileHandle>();
      try {
        for (const f of members) {
          try {
            handles.set(f, await open(join(objects, f), 'r'));
          } catch (err) {
            if (!isMissing(err)) throw err;
          }
        }
        const complete = PACK_REQUIRED.every((ext) => members.some((f) => f.endsWith(`.${ext}`) && handles.has(f)));
        if (!complete) {
          vanished = true;
          continue;
        }
        for (const [f, fh] of handles) {
          if (doneFiles.has(f)) continue;
          await b.openedFile(`${rel}/objects/${f}`, fh, (await fh.stat()).mode);
          doneFiles.add(f);
        }
      } finally {
        for (const fh of handles.values()) await fh.close();
      }
    }
    for (const f of files) {
      if (PACK_FILE.test(f) || doneFiles.has(f)) continue;
      if (await b.file(`${rel}/objects/${f}`, join(objects, f))) doneFiles.add(f);
      else vanished = true;
    }
    if (!vanished) break;
  }
}

/** One entry of the data dir, by what it is. */
async function addPath(b: BackupBuilder, rel: string, abs: string, st: Stats, top?: { databases: Map<string, string>; skip: Set<string>; skipTop: (name: string) => boolean }): Promise<void> {
  if (top?.skip.has(abs)) return;
  if (top && rel !== '' && !rel.includes('/') && top.skipTop(rel)) return;
  if (st.isDirectory()) {
    if (await isGitRepository(abs)) return addRepository(b, rel, abs, st);
    await b.dir(rel, st);
    // The local object store's staging area: uploads in flight, never acknowledged.
    if (rel === 'objects/.tmp') return;
    for (const name of await sortedEntries(abs)) {
      const p = join(abs, name);
      const est = await lstatOrUndefined(p);
      if (est) await addPath(b, rel === '' ? name : `${rel}/${name}`, p, est, top);
    }
    return;
  }
  if (!st.isFile()) {
    b.skipped.push(rel);
    return;
  }
  const snapshot = top?.databases.get(abs);
  if (snapshot) {
    await b.file(rel, snapshot, 'sqlite', st.mode);
    return;
  }
  await b.file(rel, abs);
}

export async function createBackup(opts: CreateBackupOptions): Promise<CreateBackupSummary> {
  const dataDir = resolve(opts.dataDir);
  const out = resolve(opts.out);
  const dst = await stat(dataDir).catch(() => undefined);
  if (!dst?.isDirectory()) throw new UsageError(`no data directory at ${dataDir}`);
  const dbFile = SERVICE_DATABASE[opts.service];
  const notIncluded: string[] = [];
  if (opts.databaseUrl) {
    notIncluded.push(`the ${opts.service} database on PostgreSQL (${redactDatabaseUrl(opts.databaseUrl)}): back it up with pg_dump before this backup (docs/backup.md, "PostgreSQL")`);
  } else if (!(await isSqlite(join(dataDir, dbFile)))) {
    throw new UsageError(`${dataDir} holds no ${opts.service} data (no SQLite database ${dbFile})`, opts.service === 'tickets' ? undefined : 'with PostgreSQL, pass --database-url (or set MKT_DATABASE_URL)');
  }
  const outStat = await stat(out).catch(() => undefined);
  if (outStat && !opts.force) throw new UsageError(`${out} exists; pass --force to replace it`);
  if (outStat?.isDirectory()) throw new UsageError(`${out} is a directory`);
  if (!(await stat(dirname(out)).catch(() => undefined))?.isDirectory()) throw new UsageError(`no directory ${dirname(out)} for ${basename(out)}`);

  // Beside the output: the snapshots of the databases and the file being written, renamed at the end.
  const abandoned = await removeAbandoned(dirname(out), basename(out));
  const work = join(dirname(out), workName(basename(out), randomBytes(4).toString('hex')));
  await mkdir(work, { mode: 0o700 });
  try {
    await claimWork(work);
    // 1. The databases, before anything they point at.
    const databases = new Map<string, string>();
    const skip = new Set<string>([work, out]);
    const topNames = await sortedEntries(dataDir);
    for (const name of topNames) {
      const p = join(dataDir, name);
      if (TRANSIENT.some((re) => re.test(name))) {
        skip.add(p);
        continue;
      }
      if (SQLITE_SIDE_FILE.test(name)) continue;
      // On PostgreSQL, a database file left from SQLite days is not the service's data.
      if (opts.databaseUrl && name === dbFile) {
        skip.add(p);
        continue;
      }
      const st = await lstatOrUndefined(p);
      if (st?.isFile() && (await isSqlite(p))) {
        const snap = join(work, `db-${databases.size}.sqlite`);
        await snapshotDatabase(p, snap);
        await keepSideFilesOwned(p, st);
        databases.set(p, snap);
      }
    }
    // The side files of the databases (their content is in the snapshots), including those the
    // snapshot's own connection may have created after the listing above.
    const sideOf = (name: string): boolean => {
      const m = /^(.*)-(wal|shm|journal)$/.exec(name);
      return Boolean(m && (databases.has(join(dataDir, m[1]!)) || m[1] === dbFile));
    };

    // 2. Everything else, streamed.
    const tmpOut = join(work, 'backup.tar');
    const stream = createWriteStream(tmpOut, { mode: 0o600 });
    const closed = new Promise<void>((res, rej) => {
      stream.once('close', res);
      stream.once('error', rej);
    });
    const tar = new TarWriter(stream);
    const b = new BackupBuilder(tar, opts.progress);
    const repositories = b.repositories;
    try {
      await addPath(b, '', dataDir, dst, { databases, skip, skipTop: (name) => sideOf(name) || TRANSIENT.some((re) => re.test(name)) });

      // 3. The manifest, then its digest.
      const manifest: Manifest = {
        format: FORMAT,
        version: FORMAT_VERSION,
        service: opts.service,
        created_at: new Date().toISOString(),
        mkt_version: VERSION,
        not_included: notIncluded,
        databases: b.members.filter((m) => m.kind === 'sqlite').map((m) => m.path.slice(DATA_PREFIX.length + 1)),
        repositories,
        members: b.members,
      };
      const text = Buffer.from(JSON.stringify(manifest, null, 1) + '\n');
      const now = Date.now() / 1000;
      await tar.buffer(MANIFEST_NAME, 0o644, now, text);
      const digest = createHash('sha256').update(text).digest('hex');
      await tar.buffer(MANIFEST_DIGEST_NAME, 0o644, now, Buffer.from(`${digest}  ${MANIFEST_NAME}\n`));
      await tar.finish();
      stream.end();
      await closed;
    } catch (err) {
      stream.destroy();
      throw err;
    }
    const fh = await open(tmpOut, 'r+');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    const sha256 = createHash('sha256');
    const size = (await stat(tmpOut)).size;
    // The file's own digest, for the summary (people paste it next to offsite copies).
    for await (const chunk of (await open(tmpOut, 'r')).createReadStream({ highWaterMark: 1024 * 1024 })) sha256.update(chunk as Buffer);
    if (opts.force) await rename(tmpOut, out);
    else {
      // link() refuses an existing name: no clobbering a file that appeared meanwhile.
      try {
        await link(tmpOut, out);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`${out} exists; pass --force to replace it`);
        throw err;
      }
    }
    return {
      file: out,
      service: opts.service,
      data_dir: dataDir,
      members: b.members.length + 2,
      files: b.files,
      data_bytes: b.dataBytes,
      bytes: size,
      sha256: sha256.digest('hex'),
      databases: b.members.filter((m) => m.kind === 'sqlite').map((m) => m.path.slice(DATA_PREFIX.length + 1)),
      repositories,
      not_included: notIncluded,
      skipped: b.skipped,
      abandoned_removed: abandoned,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
