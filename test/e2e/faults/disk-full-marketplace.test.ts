// Issue 35, a full disk, the marketplace on the real binary: its data dir (database and hosted git
// repositories) on a small tmpfs filled to the last byte. Notes written through the API while it is
// full answer 507 "the disk is full", reads answer, the daemon stays up; no refused write leaves a
// broken ref, a stray pack or an index row that disagrees with git. Once the filler is gone writes
// work again, and after a restart every acknowledged note reads back, `git fsck` is clean and the
// database passes integrity_check.
import { afterEach, describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { AccountsAdmin } from '../../../daemon/services/marketplace/accounts/admin.js';
import { fastCommits, fsck, gitIn } from '../../helpers/git.js';
import { serveBinary } from '../../helpers/serve-binary.js';
import { dirOn, smallDisk } from '../../helpers/small-disk.js';
import { tempDir } from '../../helpers/tmp.js';
import { send, stopServed } from '../crash/harness.js';

const COMMITS = 40;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const stop = stopServed;

interface Note {
  namespace: string;
  commit: string;
  content: string;
}

describe('the marketplace on a full disk', () => {
  it('note writes answer 507 and leave nothing half-written; reads answer; freed, writes work; nothing acknowledged is lost, fsck and integrity_check pass', async () => {
    const disk = await smallDisk(32 * 1024 * 1024);
    cleanups.push(() => disk.remove());
    const dataDir = dirOn(disk, 'data');
    const work = tempDir('mkt-disk-full-work-');
    cleanups.push(() => work.remove());
    const admin = await AccountsAdmin.open({ dataDir });
    await admin.addUser({ name: 'ana', email: 'ana@example.com' });
    const token = (await admin.createToken('ana', 'push')).token;
    await admin.createRepo('ana/app', { private: false, objectFormat: 'sha1' });
    await admin.close();
    const ids = await fastCommits(work.path, COMMITS);
    const gitDir = join(dataDir, 'repos', 'ana', 'app.git');

    const server = await serveBinary('marketplace', dataDir);
    cleanups.push(() => stop(server));
    const remote = new URL(`${server.url}/ana/app.git`);
    remote.username = 'x';
    remote.password = token;
    await gitIn(work.path, ['push', '-q', remote.toString(), 'main']);

    const auth = { authorization: `Bearer ${token}` };
    const acknowledged = new Map<string, Note>();
    const refused: Note[] = [];
    const put = async (n: Note) => {
      const r = await send(`${server.url}/api/git/ana/app/notes/${n.commit}?namespace=${n.namespace}`, 'PUT', { content: n.content }, auth);
      if (r.status === 200) acknowledged.set(`${n.namespace} ${n.commit}`, n);
      else refused.push(n);
      return r;
    };
    for (let i = 0; i < 10; i++) expect((await put({ namespace: 'before', commit: ids[i]!, content: `before ${i}\n` })).status).toBe(200);

    disk.fill();
    // Notes of several namespaces (several refs), each a new commit and pack: the first ones may
    // still fit in pages the files already hold; then the disk is out.
    let full: Awaited<ReturnType<typeof put>> | undefined;
    for (let i = 0; i < COMMITS && !full; i++) {
      const answers = await Promise.all(
        ['full/a', 'full/b', 'before'].map((namespace) => put({ namespace, commit: ids[i]!, content: `${namespace} while full ${i}\n${'x'.repeat(8000)}\n` })),
      );
      for (const a of answers) expect([200, 507], JSON.stringify(a.body)).toContain(a.status);
      full = answers.find((a) => a.status === 507);
    }
    expect(full, 'a note write was refused on the full disk').toBeDefined();
    expect(full!.body.error).toMatch(/^the disk is full: .*; free space on the data directory's file system and retry$/);
    // More writes while it is full, each refused the same way (none is a 500 or a 409 "kept moving").
    for (let i = 0; i < 5; i++) {
      const r = await put({ namespace: 'full/c', commit: ids[i]!, content: `still full ${i}\n${'y'.repeat(8000)}\n` });
      expect(r.status, JSON.stringify(r.body)).toBe(507);
    }

    // Reads answer, the daemon is up.
    for (const n of [...acknowledged.values()].slice(0, 5)) {
      const got = await send(`${server.url}/api/git/ana/app/notes/${n.commit}?namespace=${n.namespace}`, 'GET', undefined);
      expect(got.status).toBe(200);
      expect(got.body.content).toBe(n.content);
    }
    expect((await send(`${server.url}/healthz`, 'GET', undefined)).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
    // No half-written pack is left in the repository while the disk is full.
    expect(readdirSync(join(gitDir, 'objects', 'pack')).filter((f) => f.startsWith('tmp_'))).toEqual([]);

    // Freed: the next write succeeds, the refused ones too when sent again.
    disk.free();
    expect((await put({ namespace: 'after', commit: ids[0]!, content: 'after the space came back\n' })).status).toBe(200);
    const retried = refused.splice(0);
    for (const n of retried) expect((await put(n)).status).toBe(200);

    await stop(server);
    expect(server.child.exitCode).toBe(0);
    const checked = await fsck(gitDir);
    expect(checked, checked.out).toMatchObject({ code: 0 });
    expect(checked.out).not.toMatch(/error|missing|broken|corrupt/i);
    for (const f of readdirSync(dataDir).filter((f) => f.endsWith('.db'))) {
      const db = new Database(join(dataDir, f), { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true }), f).toBe('ok');
      } finally {
        db.close();
      }
    }

    // Restarted: every acknowledged note reads back, from git and from the index (a search).
    const again = await serveBinary('marketplace', dataDir);
    cleanups.push(() => stop(again));
    for (const n of acknowledged.values()) {
      const got = await send(`${again.url}/api/git/ana/app/notes/${n.commit}?namespace=${n.namespace}`, 'GET', undefined);
      expect(got.status, `${n.namespace} ${n.commit}`).toBe(200);
      expect(got.body.content).toBe(n.content);
    }
    const namespaces = await send(`${again.url}/api/git/ana/app/notes`, 'GET', undefined);
    expect(namespaces.status).toBe(200);
    // The index agrees with git: each namespace's tip is its ref on disk, its count the notes acknowledged there.
    const entries = (namespaces.body as unknown as { data: { name: string; tip: string; notes: number }[] }).data;
    for (const e of entries) expect(e.tip, e.name).toBe((await gitIn(gitDir, ['rev-parse', `refs/notes/${e.name}`])).trim());
    const counts = new Map(entries.map((e) => [e.name, e.notes]));
    for (const ns of new Set([...acknowledged.values()].map((n) => n.namespace))) {
      expect(counts.get(ns), ns).toBe(new Set([...acknowledged.values()].filter((n) => n.namespace === ns).map((n) => n.commit)).size);
    }
  });
});
