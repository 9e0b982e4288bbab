// Recognising a full disk in the shapes it surfaces in (SQLite, Node's fs, git's stderr, wrapped
// as a cause), and the text every service answers with.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiskFullError, asDiskFull, gitDiskFull, isDiskFull, outOfSpace } from '../../../src/util/disk-full.js';

describe('isDiskFull', () => {
  it('knows SQLITE_FULL, an I/O error carrying ENOSPC, ENOSPC, and git saying "No space left on device"', () => {
    expect(isDiskFull(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }))).toBe(true);
    expect(isDiskFull(Object.assign(new Error('disk I/O error: ENOSPC'), { code: 'SQLITE_IOERR_WRITE' }))).toBe(true);
    expect(isDiskFull(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }))).toBe(true);
    expect(isDiskFull("error: unable to create temporary file: No space left on device\nfatal: failed to write object")).toBe(true);
    expect(isDiskFull({ result: { stderr: 'fatal: write error: No space left on device' } })).toBe(true);
    expect(isDiskFull(new Error('git update-ref failed: fatal: No space left on device'))).toBe(true);
    expect(isDiskFull(new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'ENOSPC' }) }))).toBe(true);
    expect(isDiskFull(new DiskFullError('a write'))).toBe(true);
  });

  it('leaves other failures alone', () => {
    expect(isDiskFull(Object.assign(new Error('no such table: tickets'), { code: 'SQLITE_ERROR' }))).toBe(false);
    expect(isDiskFull(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }))).toBe(false);
    expect(isDiskFull(Object.assign(new Error('permission denied'), { code: 'EACCES' }))).toBe(false);
    expect(isDiskFull("fatal: cannot lock ref 'refs/notes/x': is at 1234 but expected 5678")).toBe(false);
    expect(isDiskFull(undefined)).toBe(false);
    expect(isDiskFull(null)).toBe(false);
  });
});

describe('DiskFullError', () => {
  it('is 507, shown as is, saying what failed and what to do', () => {
    const e = asDiskFull(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }), 'a monitor ping')!;
    expect(e).toBeInstanceOf(DiskFullError);
    expect(e.statusCode).toBe(507);
    expect(e.expose).toBe(true);
    expect(e.message).toBe("the disk is full: a monitor ping; free space on the data directory's file system and retry");
    expect(asDiskFull(e, 'other')).toBe(e);
    expect(asDiskFull(new Error('boom'), 'x')).toBeUndefined();
  });

  it("reads git's \"couldn't write\" as a full disk only when the file system has no space left", () => {
    const dir = mkdtempSync(join(tmpdir(), 'mkt-disk-full-'));
    try {
      expect(outOfSpace(dir)).toBe(false);
      expect(gitDiskFull("fatal: prepare: cannot update ref 'refs/notes/x': couldn't write 'refs/notes/x.lock'", dir, 'moving refs/notes/x')).toBeUndefined();
      expect(gitDiskFull('fatal: No space left on device', dir, 'moving refs/notes/x')?.message).toMatch(/^the disk is full: moving refs\/notes\/x;/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the shared error handler and a full disk', () => {
  it('answers 507 for a raw SQLITE_FULL, but a 4xx quoting the caller\'s words "No space left on device" stays what it was', async () => {
    const { default: Fastify } = await import('fastify');
    const { HttpError, installErrorHandling } = await import('../../../daemon/plugins/errors.js');
    const app = Fastify();
    installErrorHandling(app);
    app.get('/full', () => {
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    });
    app.get('/quoted', () => {
      throw new HttpError(400, 'title "No space left on device" is taken');
    });
    try {
      const full = await app.inject('/full');
      expect(full.statusCode).toBe(507);
      expect(full.json<{ error: string }>().error).toMatch(/^the disk is full: GET \/full; /);
      const quoted = await app.inject('/quoted');
      expect(quoted.statusCode).toBe(400);
      expect(quoted.json()).toEqual({ error: 'title "No space left on device" is taken' });
    } finally {
      await app.close();
    }
  });
});
