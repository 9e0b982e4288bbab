// create/verify/restore on real files (src/backup): a data dir with a WAL-mode SQLite database, a
// bare git repository with loose and packed refs and notes, and 0600 secrets round-trips with its
// modes; any flipped byte of the file fails verify; truncation fails; member names that would
// escape the target ('../x', absolute paths, links) are refused and nothing lands outside it;
// restore refuses a non-empty target and leaves no staging directory behind a failure.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackup } from '../../../src/backup/create.js';
import { BackupDamagedError, checkBackup } from '../../../src/backup/verify.js';
import { restoreBackup } from '../../../src/backup/restore.js';
import { encodeHeader, TarWriter } from '../../../src/backup/tar.js';
import { FORMAT, FORMAT_VERSION, MANIFEST_DIGEST_NAME, MANIFEST_NAME, modeText, type Manifest } from '../../../src/backup/format.js';
import { createHash } from 'node:crypto';
import { UsageError } from '../../../src/cli/errors.js';
import { tempDir } from '../../helpers/tmp.js';
import { gitIn } from '../../helpers/git.js';

const git = (args: string[], input?: string): Promise<string> => gitIn(process.cwd(), args, input ?? '');

/** Every file and directory under `root` with its mode and (files) content digest. */
function tree(root: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(join(root, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    const st = statSync(join(root, r));
    if (st.isDirectory()) Object.assign(out, { [r]: `dir ${modeText(st.mode)}` }, tree(root, r));
    else out[r] = `${modeText(st.mode)} ${createHash('sha256').update(readFileSync(join(root, r))).digest('hex')}`;
  }
  return out;
}

const tmp = tempDir('mkt-backup-unit-');
const data = join(tmp.path, 'data');
const file = join(tmp.path, 'backup.tar');
const repo = join(data, 'repos', 'ana', 'notes.git');
let refsBefore = '';

beforeAll(async () => {
  mkdirSync(join(data, 'repos', 'ana'), { recursive: true, mode: 0o700 });
  chmodSync(join(data, 'repos'), 0o700);
  const db = new Database(join(data, 'tickets.db'));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
  for (let i = 0; i < 500; i++) ins.run(`row ${i} ${'x'.repeat(200)}`);
  // Left open: its newest rows live in the WAL, which a plain copy of the file would miss.
  db.pragma('wal_autocheckpoint = 0');
  for (let i = 0; i < 50; i++) ins.run(`late ${i}`);
  writeFileSync(join(data, 'token'), 'tok\n', { mode: 0o600 });
  writeFileSync(join(data, 'tickets.yaml'), 'peers: []\n', { mode: 0o640 });
  chmodSync(join(data, 'tickets.yaml'), 0o640);
  await git(['init', '-q', '--bare', repo]);
  const blob = await git(['--git-dir', repo, 'hash-object', '-w', '--stdin'], 'a note');
  const tree1 = await git(['--git-dir', repo, 'mktree'], `100644 blob ${blob}\tabc\n`);
  const c1 = await git(['--git-dir', repo, 'commit-tree', tree1, '-m', 'one']);
  await git(['--git-dir', repo, 'update-ref', 'refs/notes/commits', c1]);
  await git(['--git-dir', repo, 'update-ref', 'refs/heads/main', c1]);
  await git(['--git-dir', repo, 'pack-refs', '--all']);
  await git(['--git-dir', repo, 'repack', '-a', '-d', '-q']);
  const c2 = await git(['--git-dir', repo, 'commit-tree', tree1, '-p', c1, '-m', 'two']);
  await git(['--git-dir', repo, 'update-ref', 'refs/notes/review', c2]); // loose, beside the packed ones
  refsBefore = await git(['--git-dir', repo, 'for-each-ref']);
  // The database stays open (as a running server holds it) until the end.
  (globalThis as { heldDb?: Database.Database }).heldDb = db;
  await createBackup({ service: 'tickets', dataDir: data, out: file });
});

afterAll(() => {
  (globalThis as { heldDb?: Database.Database }).heldDb?.close();
  tmp.remove();
});

describe('backup create, verify and restore', () => {
  it('round trip: the database with its WAL content, the repository and its refs, secrets with their modes; nothing of SQLite\'s side files', async () => {
    const checked = await checkBackup(file);
    expect(checked.databases).toEqual([{ path: 'tickets.db', integrity: 'ok' }]);
    expect(checked.manifest.repositories).toEqual(['repos/ana/notes.git']);
    expect(checked.manifest.members.some((m) => /-(wal|shm)$/.test(m.path))).toBe(false);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const target = join(tmp.path, 'restored');
    const r = await restoreBackup({ service: 'tickets', from: file, dataDir: target });
    expect(r.replaced).toBe(false);
    const db = new Database(join(target, 'tickets.db'), { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 550 });
    db.close();
    expect(await git(['--git-dir', join(target, 'repos/ana/notes.git'), 'for-each-ref'])).toBe(refsBefore);
    await git(['--git-dir', join(target, 'repos/ana/notes.git'), 'fsck', '--full', '--strict']);
    const before = tree(data);
    const after = tree(target);
    for (const k of ['token', 'tickets.yaml', 'repos', 'repos/ana', 'repos/ana/notes.git/HEAD', 'repos/ana/notes.git/config']) expect(after[k], k).toBe(before[k]);
    expect(after.token).toMatch(/^0600 /);
    expect(after.repos).toBe('dir 0700');
    // No staging directory left beside the target.
    expect(readdirSync(tmp.path).filter((n) => n.includes('mkt-restore') || n.includes('mkt-backup-'))).toEqual([]);
  });

  it('restores permission bits only: a set-id or sticky bit in the backup does not make a set-id file', async () => {
    const src = join(tmp.path, 'setid-src');
    mkdirSync(join(src, 'sub'), { recursive: true });
    const made = new Database(join(src, 'tickets.db'));
    made.exec('CREATE TABLE t (x)');
    made.close();
    writeFileSync(join(src, 'tool'), '#!/bin/sh\n');
    chmodSync(join(src, 'tool'), 0o4755);
    chmodSync(join(src, 'sub'), 0o1777);
    const out = join(tmp.path, 'setid.tar');
    await createBackup({ service: 'tickets', dataDir: src, out });
    const target = join(tmp.path, 'setid-restored');
    await restoreBackup({ service: 'tickets', from: out, dataDir: target });
    expect(statSync(join(target, 'tool')).mode & 0o7777).toBe(0o755);
    expect(statSync(join(target, 'sub')).mode & 0o7777).toBe(0o777);
  });

  it('any flipped byte (every 512-byte block: headers, data, padding, the manifest and its digest) fails verify', async () => {
    const bytes = readFileSync(file);
    const bad = join(tmp.path, 'flipped.tar');
    let seed = 7;
    for (let block = 0; block * 512 < bytes.length; block++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const at = block * 512 + (seed % 512);
      const copy = Buffer.from(bytes);
      copy[at] = copy[at]! ^ 0x20;
      writeFileSync(bad, copy);
      await expect(checkBackup(bad), `byte ${at}`).rejects.toThrow(BackupDamagedError);
    }
  });

  it('a flip inside the manifest or its digest names them', async () => {
    const bytes = readFileSync(file);
    const bad = join(tmp.path, 'manifest-flip.tar');
    const manifestAt = bytes.lastIndexOf(Buffer.from('"members"'));
    const copy = Buffer.from(bytes);
    copy[manifestAt + 2] = copy[manifestAt + 2]! ^ 0x01;
    writeFileSync(bad, copy);
    await expect(checkBackup(bad)).rejects.toThrow(/MANIFEST.json does not match MANIFEST.sha256/);
  });

  it('a truncated file fails verify, wherever it is cut', async () => {
    const bytes = readFileSync(file);
    const bad = join(tmp.path, 'cut.tar');
    for (const cut of [0, 700, Math.floor(bytes.length / 2), bytes.length - 1024, bytes.length - 1]) {
      writeFileSync(bad, bytes.subarray(0, cut));
      await expect(checkBackup(bad), `cut at ${cut}`).rejects.toThrow(BackupDamagedError);
    }
  });

  it('restore refuses a non-empty target (nothing touched), a backup of another service, and a missing file', async () => {
    const target = join(tmp.path, 'busy');
    mkdirSync(target);
    writeFileSync(join(target, 'keep'), 'mine');
    await expect(restoreBackup({ service: 'tickets', from: file, dataDir: target })).rejects.toThrow(UsageError);
    expect(readdirSync(target)).toEqual(['keep']);
    expect(readFileSync(join(target, 'keep'), 'utf8')).toBe('mine');
    await expect(restoreBackup({ service: 'monitor', from: file, dataDir: join(tmp.path, 'other') })).rejects.toThrow(/backup of the tickets service/);
    expect(existsSync(join(tmp.path, 'other'))).toBe(false);
    await expect(restoreBackup({ service: 'tickets', from: join(tmp.path, 'none.tar'), dataDir: join(tmp.path, 'x') })).rejects.toThrow(UsageError);
    // --force replaces the content.
    const r = await restoreBackup({ service: 'tickets', from: file, dataDir: target, force: true });
    expect(r.replaced).toBe(true);
    expect(existsSync(join(target, 'keep'))).toBe(false);
    expect(existsSync(join(target, 'tickets.db'))).toBe(true);
    expect(readdirSync(tmp.path).filter((n) => n.includes('mkt-re'))).toEqual([]);
  });

  it('a damaged backup restores nothing: no target, no staging directory', async () => {
    const bytes = readFileSync(file);
    const copy = Buffer.from(bytes);
    copy[copy.length - 3000] = copy[copy.length - 3000]! ^ 0xff;
    const bad = join(tmp.path, 'damaged.tar');
    writeFileSync(bad, copy);
    await expect(restoreBackup({ service: 'tickets', from: bad, dataDir: join(tmp.path, 'never') })).rejects.toThrow(BackupDamagedError);
    expect(existsSync(join(tmp.path, 'never'))).toBe(false);
    expect(readdirSync(tmp.path).filter((n) => n.includes('mkt-restore'))).toEqual([]);
  });

  it('create refuses an existing --out (untouched) and a data dir without the service', async () => {
    const before = readFileSync(file);
    await expect(createBackup({ service: 'tickets', dataDir: data, out: file })).rejects.toThrow(/exists; pass --force/);
    expect(readFileSync(file).equals(before)).toBe(true);
    await expect(createBackup({ service: 'monitor', dataDir: data, out: join(tmp.path, 'm.tar') })).rejects.toThrow(/holds no monitor data/);
    expect(existsSync(join(tmp.path, 'm.tar'))).toBe(false);
  });
});

/** A backup whose manifest agrees with its members, so that only the hostile name is wrong. */
async function craft(out: string, members: { name: string; type: 'file' | 'dir'; data?: Buffer; raw?: Buffer }[]): Promise<void> {
  const stream = createWriteStream(out);
  const tar = new TarWriter(stream);
  const list: Manifest['members'] = [];
  for (const m of members) {
    if (m.raw) {
      stream.write(m.raw);
      continue;
    }
    if (m.type === 'dir') {
      await tar.directory(m.name, 0o755, 0);
      list.push({ path: m.name, type: 'dir', mode: '0755', size: 0 });
    } else {
      const sha256 = await tar.buffer(m.name, 0o644, 0, m.data ?? Buffer.from('pwned'));
      list.push({ path: m.name, type: 'file', mode: '0644', size: (m.data ?? Buffer.from('pwned')).length, sha256 });
    }
  }
  const manifest: Manifest = { format: FORMAT, version: FORMAT_VERSION, service: 'tickets', created_at: new Date().toISOString(), mkt_version: 'test', not_included: [], databases: [], repositories: [], members: list };
  const text = Buffer.from(JSON.stringify(manifest));
  await tar.buffer(MANIFEST_NAME, 0o644, 0, text);
  await tar.buffer(MANIFEST_DIGEST_NAME, 0o644, 0, Buffer.from(`${createHash('sha256').update(text).digest('hex')}  ${MANIFEST_NAME}\n`));
  await tar.finish();
  await new Promise<void>((res) => stream.end(res));
}

function linkHeader(name: string, target: string, flag: '1' | '2'): Buffer {
  const h = encodeHeader({ name, type: 'file', mode: 0o777, size: 0, mtime: 0 });
  h.write(flag, 156, 'ascii');
  h.write(target, 157, 'ascii');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii');
  return h;
}

describe('hostile member names (an attacker-made backup)', () => {
  const cases: [string, Parameters<typeof craft>[1]][] = [
    ['../x', [{ name: 'data', type: 'dir' }, { name: '../x', type: 'file' }]],
    ['data/../../x', [{ name: 'data', type: 'dir' }, { name: 'data/../../x', type: 'file' }]],
    ['an absolute path', [{ name: 'data', type: 'dir' }, { name: `${tmp.path}/abs-x`, type: 'file' }]],
    ['a name outside data/', [{ name: 'data', type: 'dir' }, { name: 'x', type: 'file' }]],
    ['an empty segment', [{ name: 'data', type: 'dir' }, { name: 'data//x', type: 'file' }]],
    ['a symbolic link', [{ name: 'data', type: 'dir' }, { name: 'data/link', type: 'file', raw: linkHeader('data/link', '/etc', '2') }, { name: 'data/link/passwd', type: 'file' }]],
    ['a hard link', [{ name: 'data', type: 'dir' }, { name: 'data/h', type: 'file', raw: linkHeader('data/h', '/etc/passwd', '1') }]],
    ['a duplicate', [{ name: 'data', type: 'dir' }, { name: 'data/a', type: 'file' }, { name: 'data/a', type: 'file' }]],
    ['a member under a file', [{ name: 'data', type: 'dir' }, { name: 'data/a', type: 'file' }, { name: 'data/a/b', type: 'file' }]],
    ['the data root as a file', [{ name: 'data', type: 'file' }]],
  ];
  for (const [what, members] of cases) {
    it(`refuses ${what}: verify fails, restore writes nothing anywhere`, async () => {
      const evil = join(tmp.path, 'evil.tar');
      await craft(evil, members);
      await expect(checkBackup(evil)).rejects.toThrow(BackupDamagedError);
      mkdirSync(join(tmp.path, 'evil-target'), { recursive: true });
      const target = join(tmp.path, 'evil-target', 'in');
      await expect(restoreBackup({ service: 'tickets', from: evil, dataDir: target })).rejects.toThrow(BackupDamagedError);
      expect(existsSync(target)).toBe(false);
      expect(existsSync(join(tmp.path, 'evil-target', 'x'))).toBe(false);
      expect(existsSync(join(tmp.path, 'x'))).toBe(false);
      expect(existsSync(join(tmp.path, 'abs-x'))).toBe(false);
      expect(readdirSync(join(tmp.path, 'evil-target'))).toEqual([]);
    });
  }
});

describe('run as root', () => {
  it("the database's -wal/-shm files the snapshot creates belong to the database's owner, not root", async () => {
    if (process.getuid?.() !== 0) return; // only root can make a file another user's; nothing to check otherwise
    const dir = join(tmp.path, 'owned');
    mkdirSync(dir);
    const db = new Database(join(dir, 'monitor.db'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE x (v)');
    db.close(); // a stopped server: no -wal, no -shm left
    const { chownSync } = await import('node:fs');
    chownSync(dir, 4321, 4321);
    chownSync(join(dir, 'monitor.db'), 4321, 4321);
    await createBackup({ service: 'monitor', dataDir: dir, out: join(tmp.path, 'owned.tar') });
    // SQLite's read-only connection to a WAL database creates both when they are missing.
    for (const side of ['-wal', '-shm']) expect(statSync(join(dir, `monitor.db${side}`)).uid, side).toBe(4321);
  });
});
