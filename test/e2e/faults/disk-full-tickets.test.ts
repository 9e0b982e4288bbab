// Issue 35, a full disk, the ticket tracker on the real binary: its data dir on a small tmpfs of
// its own, filled to the last byte by a filler file. Writes answer the spec's 500 with a text that
// starts "the disk is full", reads answer, the daemon stays up; once the filler is gone the next
// write succeeds (SQLite's transaction state after SQLITE_FULL does not block it), and after a
// restart every acknowledged ticket is there and the database passes integrity_check.
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { serveBinary } from '../../helpers/serve-binary.js';
import { dirOn, smallDisk } from '../../helpers/small-disk.js';
import { send, stopServed } from '../crash/harness.js';

const TOKEN = 'disk-full-token';
const auth = { authorization: `Bearer ${TOKEN}` };
const env = { MKT_TICKETS_TOKEN: TOKEN };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const stop = stopServed;

describe('tickets on a full disk', () => {
  it('writes answer 500 "the disk is full", reads answer, the node stays up and recovers; nothing acknowledged is lost', async () => {
    const disk = await smallDisk(16 * 1024 * 1024);
    cleanups.push(() => disk.remove());
    const dataDir = dirOn(disk, 'data');
    const first = await serveBinary('tickets', dataDir, env);
    cleanups.push(() => stop(first));

    const acknowledged: { id: string; title: string }[] = [];
    const create = async (title: string) => {
      const r = await send(`${first.url}/tickets`, 'POST', { title, description: 'd'.repeat(3000) }, auth);
      if (r.status === 201) acknowledged.push({ id: r.body.id as string, title });
      return r;
    };
    for (let i = 0; i < 20; i++) expect((await create(`before ${i}`)).status).toBe(201);

    disk.fill();
    // A write may still fit in a page the database already holds; within a few the disk runs out.
    let refused: Awaited<ReturnType<typeof create>> | undefined;
    for (let i = 0; i < 200 && !refused; i++) {
      const r = await create(`full ${i}`);
      if (r.status !== 201) refused = r;
    }
    expect(refused, 'a write was refused on the full disk').toBeDefined();
    expect(refused!.status).toBe(500);
    expect(refused!.body.error).toMatch(/^the disk is full: .*free space/);
    // An edit and a comment meet the same full disk, with the same answer.
    const edit = await send(`${first.url}/tickets/${acknowledged[0]!.id}`, 'PATCH', { description: 'e'.repeat(20_000) }, auth);
    expect(edit.status).toBe(500);
    expect(edit.body.error).toMatch(/^the disk is full/);

    // Reads answer, and the node is up.
    const one = await send(`${first.url}/tickets/${acknowledged[0]!.id}`, 'GET', undefined, auth);
    expect(one.status).toBe(200);
    expect(one.body.title).toBe('before 0');
    expect((await send(`${first.url}/tickets?limit=5`, 'GET', undefined, auth)).status).toBe(200);
    expect((await send(`${first.url}/sync/node`, 'GET', undefined, auth)).status).toBe(200);
    expect(first.child.exitCode).toBeNull();

    // Space freed: the very next write succeeds, and so does the edit refused before.
    disk.free();
    const after = await create('after the space came back');
    expect(after.status).toBe(201);
    expect((await send(`${first.url}/tickets/${acknowledged[0]!.id}`, 'PATCH', { description: 'edited' }, auth)).status).toBe(200);

    await stop(first);
    expect(first.child.exitCode).toBe(0);
    const db = new Database(join(dataDir, 'tickets.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }

    const second = await serveBinary('tickets', dataDir, env);
    cleanups.push(() => stop(second));
    for (const t of acknowledged) {
      const got = await send(`${second.url}/tickets/${t.id}`, 'GET', undefined, auth);
      expect(got.status, t.title).toBe(200);
      expect(got.body.title).toBe(t.title);
    }
  });
});
