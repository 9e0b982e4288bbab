// Backup of a marketplace while it takes writes, on the real binary: notes are written through
// the API (each into its own namespace, so each is its own ref update racing the backup) and
// commits pushed over smart HTTP, `mkt backup create marketplace` runs in the middle, and on the
// marketplace restored from it every note, push and license activation acknowledged before the
// backup started is there (the key still validates: its hashing secret came back); the
// repository passes `git fsck`, marketplace.db passes integrity_check, and the server's secrets
// keep mode 0600. A second case: sync entries pushed and blobs stored in the
// local object store by `mkt sync` race the backup, and a new device on the restored server
// pulls every entry and fetches every blob acknowledged before it started. Each case starts the
// binary several times and runs rounds of writers: a loaded CI took 52 and 87 s, so each may take 300.
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { gitEnvAsAna } from '../../helpers/notes-server.js';
import { serveBinary, type Served } from '../../helpers/serve-binary.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { integrity, mkt, stopServed, writeLoop } from './rig.js';

const execFileAsync = promisify(execFile);
const tmp = tempDir('mkt-backup-marketplace-');
const servers: Served[] = [];
afterAll(async () => {
  for (const s of servers) await stopServed(s);
  tmp.remove();
});

async function admin(data: string, ...args: string[]): Promise<string> {
  const r = await mkt(['admin', '--data-dir', data, ...args], { MKT_DATABASE_URL: '' });
  if (r.code !== 0) throw new Error(`mkt admin ${args.join(' ')}: exit ${r.code}: ${r.err}`);
  return r.out;
}

describe('mkt backup: marketplace, online', () => {
  it('every note, push and license activation acknowledged before the backup started is on the restored marketplace', async () => {
    const data = join(tmp.path, 'data');
    const clone = join(tmp.path, 'clone');
    mkdirSync(data, { mode: 0o700 });
    await admin(data, 'user', 'add', 'ana', '--email', 'ana@example.com');
    const token = /\bmkt_[A-Za-z0-9_-]+/.exec(await admin(data, 'token', 'create', 'ana', '--scope', 'push'))![0];
    await admin(data, 'repo', 'create', 'ana/widgets');
    await admin(data, 'item', 'create', 'app', '--name', 'App', '--max-activations', '100000');
    const key = (JSON.parse(await admin(data, 'key', 'issue', 'app', '--json')) as { key: string }[])[0]!.key;
    const live = await serveBinary('marketplace', data, { MKT_DATABASE_URL: '' });
    servers.push(live);

    const gitEnv = { ...process.env, ...gitEnvAsAna(tmp.path, token) };
    const git = async (...args: string[]): Promise<string> => (await execFileAsync('git', args, { cwd: clone, env: gitEnv, encoding: 'utf8' })).stdout.trim();
    await execFileAsync('git', ['init', '-q', '-b', 'main', clone]);
    await git('commit', '-q', '--allow-empty', '-m', 'first');
    await git('remote', 'add', 'origin', `${live.url}/ana/widgets.git`);
    await git('push', '-q', 'origin', 'main');
    const target = await git('rev-parse', 'HEAD');

    const put = async (i: number): Promise<void> => {
      const res = await fetch(`${live.url}/api/git/ana/widgets/notes/${target}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content: `note ${i}`, namespace: `n${i}` }),
      });
      if (res.status !== 200 && res.status !== 201) throw new Error(`put note answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };
    const validate = async (url: string, machine: string, activate: boolean): Promise<{ valid: boolean; code: string; activated: boolean }> => {
      const res = await fetch(`${url}/api/v1/keys/validate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key, machine_id: machine, ...(activate ? { activate } : {}) }) });
      if (res.status !== 200) throw new Error(`validate answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as { valid: boolean; code: string; activated: boolean };
    };
    // Each round: a note (a new notes ref), a license activation, and every third round a pushed
    // commit (a branch update).
    const loop = writeLoop(async (i) => {
      await put(i);
      const act = await validate(live.url, `machine-${i}`, true);
      if (!act.valid || !act.activated) throw new Error(`activation ${i}: ${JSON.stringify(act)}`);
      let pushed: string | undefined;
      if (i % 3 === 0) {
        await git('commit', '-q', '--allow-empty', '-m', `round ${i}`);
        await git('push', '-q', 'origin', 'main');
        pushed = await git('rev-parse', 'HEAD');
      }
      return { i, pushed };
    });
    await waitFor(async () => loop.acked().length >= 24, 'twenty-four acknowledged rounds', 120_000);
    const before = loop.acked();
    const file = join(tmp.path, 'marketplace.tar');
    const made = await mkt(['backup', 'create', 'marketplace', '--data-dir', data, '--out', file, '--json'], { MKT_DATABASE_URL: '' });
    await loop.stop();
    expect(made.code, made.err).toBe(0);
    const summary = JSON.parse(made.out) as { databases: string[]; repositories: string[]; not_included: string[] };
    expect(summary.databases).toContain('marketplace.db');
    expect(summary.repositories).toEqual(['repos/ana/widgets.git']);
    expect(summary.not_included).toEqual([]);

    expect((await mkt(['backup', 'verify', file])).code).toBe(0);
    const restoredDir = join(tmp.path, 'restored');
    const restored = await mkt(['backup', 'restore', 'marketplace', '--from', file, '--data-dir', restoredDir]);
    expect(restored.code, restored.err).toBe(0);
    // The server's secrets (license key hashing, sync) keep their 0600.
    for (const name of readdirSync(data).filter((n) => /secret/.test(n))) expect(statSync(join(restoredDir, name)).mode & 0o777, name).toBe(0o600);
    const repo = join(restoredDir, 'repos/ana/widgets.git');
    await execFileAsync('git', ['--git-dir', repo, 'fsck', '--full', '--no-dangling']);

    const back = await serveBinary('marketplace', restoredDir, { MKT_DATABASE_URL: '' });
    servers.push(back);
    for (const { i } of before) {
      const res = await fetch(`${back.url}/api/git/ana/widgets/notes/${target}?namespace=n${i}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, `note ${i}`).toBe(200);
      expect(((await res.json()) as { content: string }).content).toBe(`note ${i}`);
    }
    for (const { i } of before) expect(await validate(back.url, `machine-${i}`, false), `activation ${i}`).toMatchObject({ valid: true, code: 'VALID' });
    const lastPush = before.filter((r) => r.pushed).at(-1)!.pushed!;
    await execFileAsync('git', ['--git-dir', repo, 'merge-base', '--is-ancestor', lastPush, 'refs/heads/main']);
    // The restored server takes pushes (its hooks were reinstalled at start) and note writes.
    await git('remote', 'set-url', 'origin', `${back.url}/ana/widgets.git`);
    await git('fetch', '-q', 'origin');
    await git('reset', '-q', '--hard', 'origin/main');
    await git('commit', '-q', '--allow-empty', '-m', 'after the restore');
    await git('push', '-q', 'origin', 'main');
    await stopServed(back);
    expect(integrity(join(restoredDir, 'marketplace.db'))).toBe('ok');
    await execFileAsync('git', ['--git-dir', repo, 'fsck', '--full', '--no-dangling']);
  }, 300_000);

  it('sync: every entry pushed and blob stored (local object store) before the backup started comes back', async () => {
    const data = join(tmp.path, 'sync-data');
    mkdirSync(data, { mode: 0o700 });
    const password = 'correct horse battery staple';
    expect((await mkt(['admin', '--data-dir', data, 'migrate'], { MKT_DATABASE_URL: '' })).code).toBe(0);
    const app = await mkt(['admin', '--data-dir', data, 'app', 'create', 'Notes', '--json'], { MKT_DATABASE_URL: '' });
    expect(app.code, app.err).toBe(0);
    const appKey = (JSON.parse(app.out) as { api_key: string }).api_key;
    const user = await mkt(['admin', '--data-dir', data, 'user', 'add', 'ada', '--email', 'ada@example.com'], { MKT_DATABASE_URL: '' }, `${password}\n`);
    expect(user.code, user.err).toBe(0);
    const live = await serveBinary('marketplace', data, { MKT_DATABASE_URL: '' });
    servers.push(live);
    const device = (name: string, url: string): ((args: string[], stdin?: string) => Promise<string>) => {
      const home = join(tmp.path, `device-${name}`);
      mkdirSync(home, { recursive: true });
      const env = { XDG_CONFIG_HOME: join(home, 'config'), XDG_CACHE_HOME: join(home, 'cache'), MKT_CREDENTIAL_STORE: 'file', MKT_MARKETPLACE_URL: url, MKT_DATABASE_URL: '' };
      return async (args, stdin = '') => {
        const r = await mkt(['sync', ...args], env, stdin, home);
        if (r.code !== 0) throw new Error(`mkt sync ${args.join(' ')}: exit ${r.code}: ${r.err}`);
        return r.out.trim();
      };
    };
    const a = device('a', live.url);
    await a(['login', '--app-key', appKey, '--email', 'ada@example.com', '--device', 'a'], `${password}\n`);
    await a(['key', 'init'], `${password}\n`);
    const loop = writeLoop(async (i) => {
      await a(['push'], JSON.stringify({ table: 'notes', op: 'upsert', row_id: `n${i}`, data: { title: `entry ${i}` } }) + '\n');
      let blob: { hash: string; content: string } | undefined;
      if (i % 2 === 0) {
        const file = join(tmp.path, `blob-${i}.txt`);
        const content = `blob ${i} ${'y'.repeat(i * 97)}`;
        writeFileSync(file, content);
        blob = { hash: (await a(['blob', 'put', file])).split(/\s+/)[0]!, content };
      }
      return { i, blob };
    });
    await waitFor(async () => loop.acked().length >= 8, 'eight acknowledged sync rounds', 120_000);
    const before = loop.acked();
    const file = join(tmp.path, 'sync.tar');
    const made = await mkt(['backup', 'create', 'marketplace', '--data-dir', data, '--out', file], { MKT_DATABASE_URL: '' });
    await loop.stop();
    expect(made.code, made.err).toBe(0);
    const restoredDir = join(tmp.path, 'sync-restored');
    expect((await mkt(['backup', 'restore', 'marketplace', '--from', file, '--data-dir', restoredDir])).code).toBe(0);
    expect(statSync(join(restoredDir, 'sync-secret')).mode & 0o777).toBe(0o600);
    const back = await serveBinary('marketplace', restoredDir, { MKT_DATABASE_URL: '' });
    servers.push(back);
    // A second device on the restored server: signs in (the account and its key came back), pulls, fetches blobs.
    const b = device('b', back.url);
    await b(['login', '--app-key', appKey, '--email', 'ada@example.com', '--device', 'b'], `${password}\n`);
    const pulled = (await b(['pull'])).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { row_id: string; data: { title: string } });
    const rows = new Map(pulled.map((e) => [e.row_id, e.data.title]));
    for (const { i, blob } of before) {
      expect(rows.get(`n${i}`), `entry ${i}`).toBe(`entry ${i}`);
      if (blob) {
        const out = join(tmp.path, `got-${i}`);
        await b(['blob', 'get', blob.hash, '-o', out]);
        expect(readFileSync(out, 'utf8'), `blob ${i}`).toBe(blob.content);
      }
    }
    await stopServed(back);
    expect(integrity(join(restoredDir, 'marketplace.db'))).toBe('ok');
  }, 300_000);
});
