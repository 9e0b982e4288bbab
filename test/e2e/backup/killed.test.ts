// `mkt backup create` killed with SIGKILL in the middle (the real binary): no output file appears,
// the data dir is untouched, the work directory it could not remove stays private (0700), and
// the next backup to the same file removes it and succeeds.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.js';
import { MKT, mkt } from './rig.js';

const tmp = tempDir('mkt-backup-killed-');
afterAll(() => tmp.remove());

/** Every file of a directory and its digest, to show that nothing changed. */
function digests(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    out.set(p, createHash('sha256').update(readFileSync(p)).digest('hex'));
  }
  return out;
}

/** A monitor data dir of `mib` MiB in 1 MiB files beside its database: big enough that a backup takes a while. */
function dataDir(mib: number): string {
  const dir = join(tmp.path, `data-${mib}`);
  mkdirSync(join(dir, 'blobs'), { recursive: true });
  const db = new Database(join(dir, 'monitor.db'));
  db.exec('CREATE TABLE x (v); INSERT INTO x VALUES (1), (2)');
  db.close();
  writeFileSync(join(dir, 'monitor.yaml'), 'targets: []\n', { mode: 0o600 });
  const block = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < mib; i++) {
    block.writeUInt32LE(i, 0);
    writeFileSync(join(dir, 'blobs', `f${i}`), block);
  }
  return dir;
}

const workDirs = (dir: string): string[] => readdirSync(dir).filter((n) => n.startsWith('.b.tar.mkt-backup-'));

/**
 * Starts a backup and stops it (SIGSTOP) as soon as its work directory holds the tar being
 * written, then kills it. Resolves with whether it was caught before it finished: a run that
 * finished first is no kill in the middle, and the caller tries again with more data.
 */
async function killMidway(data: string, outDir: string): Promise<boolean> {
  const child = spawn(process.execPath, [MKT, 'backup', 'create', 'monitor', '--data-dir', data, '--out', join(outDir, 'b.tar')], { stdio: 'ignore' });
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  let finished = false;
  void exited.then(() => (finished = true));
  // Polled without a timer's delay between looks: the window is the whole backup's duration.
  while (!finished) {
    const w = workDirs(outDir)[0];
    if (w && existsSync(join(outDir, w, 'backup.tar'))) {
      child.kill('SIGSTOP');
      break;
    }
    await new Promise((r) => setImmediate(r));
  }
  const caught = !finished && !existsSync(join(outDir, 'b.tar'));
  child.kill('SIGKILL');
  await exited;
  return caught;
}

describe('mkt backup create killed in the middle', () => {
  it('leaves no output and an untouched data dir; the next backup removes its work and succeeds', async () => {
    let caught = false;
    let data = '';
    let outDir = '';
    for (const mib of [64, 256, 512]) {
      data = dataDir(mib);
      outDir = join(tmp.path, `out-${mib}`);
      mkdirSync(outDir);
      const before = digests(data);
      caught = await killMidway(data, outDir);
      expect(digests(data)).toEqual(before);
      if (caught) break;
    }
    expect(caught, 'every backup finished before it could be stopped').toBe(true);
    expect(existsSync(join(outDir, 'b.tar'))).toBe(false);
    const [left] = workDirs(outDir);
    expect(left).toBeDefined();
    expect(statSync(join(outDir, left!)).mode & 0o777).toBe(0o700);

    const again = await mkt(['backup', 'create', 'monitor', '--data-dir', data, '--out', join(outDir, 'b.tar')]);
    expect(again.code, again.err).toBe(0);
    expect(again.err).toContain(`removed ${left}: the work of an earlier backup to this file that was killed`);
    expect(workDirs(outDir)).toEqual([]);
    const verified = await mkt(['backup', 'verify', join(outDir, 'b.tar')]);
    expect(verified.code, verified.err).toBe(0);
  });
});
