// `mkt backup` run through the CLI (commands/root/run.ts) on real files: the exit codes and the
// one line people read. Existing --out: 2 and untouched; non-empty target: 2 and untouched; a
// missing file: 2; a damaged backup: 1; --json summaries; no progress line when stderr is a pipe.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir('mkt-backup-cli-');
const data = join(tmp.path, 'data');
const file = join(tmp.path, 'b.tar');

async function mkt(argv: string[], stderrTTY = false): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ cwd: tmp.path });
  io.stderr.isTTY = stderrTTY;
  const code = await run(argv, io);
  return { code, out: io.out(), err: io.err() };
}

beforeAll(() => {
  mkdirSync(data);
  const db = new Database(join(data, 'monitor.db'));
  db.exec('CREATE TABLE x (v); INSERT INTO x VALUES (1)');
  db.close();
  writeFileSync(join(data, 'monitor.yaml'), 'targets: []\n', { mode: 0o600 });
});
afterAll(() => tmp.remove());

describe('mkt backup (CLI)', () => {
  it('create --json prints a summary; a second create without --force is exit 2 and leaves the file alone', async () => {
    const r = await mkt(['backup', 'create', 'monitor', '--data-dir', data, '--out', 'b.tar', '--json']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe('');
    const s = JSON.parse(r.out) as { file: string; databases: string[]; not_included: string[] };
    expect(s.file).toBe(file);
    expect(s.databases).toEqual(['monitor.db']);
    expect(s.not_included).toEqual([]);
    const before = readFileSync(file);
    const again = await mkt(['backup', 'create', 'monitor', '--data-dir', data, '--out', 'b.tar']);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/b\.tar exists; pass --force/);
    expect(readFileSync(file).equals(before)).toBe(true);
    const forced = await mkt(['backup', 'create', 'monitor', '--data-dir', data, '--out', 'b.tar', '--force']);
    expect(forced.code, forced.err).toBe(0);
    expect(forced.out).toMatch(/^wrote .*b\.tar: monitor, 2 files/);
  });

  it('create: a progress line on stderr when stderr is a terminal, erased at the end', async () => {
    const r = await mkt(['backup', 'create', 'monitor', '--data-dir', data, '--out', 'tty.tar'], true);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/^\rbacking up monitor: \d+ members, /);
    expect(r.err.endsWith('\r\x1b[K')).toBe(true);
    expect(r.out).toMatch(/^wrote /);
  });

  it('create: a data dir without the service is exit 2; --database-url says what is not included', async () => {
    expect((await mkt(['backup', 'create', 'tickets', '--data-dir', data, '--out', 't.tar'])).code).toBe(2);
    expect((await mkt(['backup', 'create', 'tickets', '--data-dir', join(tmp.path, 'nothing'), '--out', 't.tar'])).code).toBe(2);
    expect((await mkt(['backup', 'create', 'tickets', '--data-dir', data, '--out', 't.tar', '--database-url', 'postgres://h/d'])).code).toBe(2);
    const pg = await mkt(['backup', 'create', 'monitor', '--data-dir', data, '--out', 'pg.tar', '--database-url', 'postgres://mkt:hunter2@db.internal/mkt', '--json']);
    expect(pg.code, pg.err).toBe(0);
    expect(pg.err).toMatch(/^not included: the monitor database on PostgreSQL \(postgres:\/\/mkt:\*\*\*@db\.internal\/mkt\)/);
    expect(pg.err).not.toContain('hunter2');
    const s = JSON.parse(pg.out) as { databases: string[]; not_included: string[] };
    // On PostgreSQL a monitor.db in the data dir is not the service's data: left out, said so.
    expect(s.databases).toEqual([]);
    expect((await mkt(['backup', 'verify', 'pg.tar', '--json'])).out).not.toContain('monitor.db');
    expect(s.not_included).toHaveLength(1);
  });

  it('verify: ok is exit 0 (--json too), a flipped byte exit 1 with one line, a missing file exit 2', async () => {
    const ok = await mkt(['backup', 'verify', 'b.tar', '--json']);
    expect(ok.code, ok.err).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ ok: true, service: 'monitor', databases: [{ path: 'monitor.db', integrity: 'ok' }] });
    const bytes = readFileSync(file);
    bytes[2000] = bytes[2000]! ^ 0x10;
    writeFileSync(join(tmp.path, 'bad.tar'), bytes);
    const bad = await mkt(['backup', 'verify', 'bad.tar']);
    expect(bad.code).toBe(1);
    expect(bad.err.trim().split('\n')).toHaveLength(1);
    expect(bad.err).toMatch(/bad\.tar: the backup is damaged/);
    expect((await mkt(['backup', 'verify', 'missing.tar'])).code).toBe(2);
  });

  it('restore: a non-empty target is exit 2 and untouched; a new one gets the data; a damaged file is exit 1 and creates nothing', async () => {
    const busy = join(tmp.path, 'busy');
    mkdirSync(busy);
    writeFileSync(join(busy, 'mine'), 'x');
    const refused = await mkt(['backup', 'restore', 'monitor', '--from', 'b.tar', '--data-dir', busy]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/is not empty/);
    expect(readdirSync(busy)).toEqual(['mine']);
    const ok = await mkt(['backup', 'restore', 'monitor', '--from', 'b.tar', '--data-dir', 'fresh', '--json']);
    expect(ok.code, ok.err).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ service: 'monitor', data_dir: join(tmp.path, 'fresh'), replaced: false });
    expect(readFileSync(join(tmp.path, 'fresh', 'monitor.yaml'), 'utf8')).toBe('targets: []\n');
    const damaged = await mkt(['backup', 'restore', 'monitor', '--from', 'bad.tar', '--data-dir', 'never']);
    expect(damaged.code).toBe(1);
    expect(existsSync(join(tmp.path, 'never'))).toBe(false);
    const wrong = await mkt(['backup', 'restore', 'tickets', '--from', 'b.tar', '--data-dir', 'never']);
    expect(wrong.code).toBe(2);
    expect((await mkt(['backup', 'restore', 'monitor', '--from', 'missing.tar', '--data-dir', 'never'])).code).toBe(2);
    expect(existsSync(join(tmp.path, 'never'))).toBe(false);
  });
});
