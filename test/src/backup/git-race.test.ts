// A repository changing under the backup (src/backup/create.ts): commits and ref updates, `git
// repack -d --geometric` (which deletes packs and loose objects it has packed) and `git pack-refs`
// run in a loop while backups are taken. Each backup restores to a repository that passes
// `git fsck --full` and holds every ref (with its commit) updated before that backup started.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createBackup } from '../../../src/backup/create.js';
import { restoreBackup } from '../../../src/backup/restore.js';
import { tempDir } from '../../helpers/tmp.js';
import { gitIn } from '../../helpers/git.js';


const git = (args: string[], input?: string): Promise<string> => gitIn(process.cwd(), args, input ?? '');

const tmp = tempDir('mkt-backup-git-race-');
afterAll(() => tmp.remove());

describe('backup of a repository that changes meanwhile', () => {
  it('refs updated, objects repacked and refs packed during the backup: every restored copy passes fsck with every earlier ref', async () => {
    const data = join(tmp.path, 'data');
    const repo = join(data, 'repos', 'ana', 'busy.git');
    mkdirSync(join(data, 'repos', 'ana'), { recursive: true });
    new Database(join(data, 'tickets.db')).exec('CREATE TABLE x (v)');
    await git(['init', '-q', '--bare', repo]);
    const g = (...args: string[]): Promise<string> => git(['--git-dir', repo, ...args]);
    const refs: { ref: string; commit: string }[] = [];
    let stop = false;
    let parent: string | undefined;
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        const b = await git(['--git-dir', repo, 'hash-object', '-w', '--stdin'], `content ${i}\n${'x'.repeat(i % 500)}`);
        const tree = await git(['--git-dir', repo, 'mktree'], `100644 blob ${b}\tf${i}\n`);
        const commit = await g('commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', `c${i}`);
        await g('update-ref', `refs/heads/b${i}`, commit);
        await g('update-ref', 'refs/heads/main', commit);
        parent = commit;
        refs.push({ ref: `refs/heads/b${i}`, commit });
        if (i % 3 === 2) await g('repack', '-d', '-q', '--geometric=2');
        if (i % 11 === 10) await g('pack-refs', '--all');
      }
    })();
    try {
      for (let round = 0; round < 4; round++) {
        while (refs.length < 10 * (round + 1)) await new Promise((r) => setTimeout(r, 20));
        const before = [...refs];
        const file = join(tmp.path, `b${round}.tar`);
        await createBackup({ service: 'tickets', dataDir: data, out: file });
        const target = join(tmp.path, `r${round}`);
        await restoreBackup({ service: 'tickets', from: file, dataDir: target });
        const restored = join(target, 'repos', 'ana', 'busy.git');
        await git(['--git-dir', restored, 'fsck', '--full', '--no-dangling']);
        const got = new Map((await git(['--git-dir', restored, 'for-each-ref', '--format=%(refname) %(objectname)'])).split('\n').map((l) => l.split(' ') as [string, string]));
        for (const r of before) expect(got.get(r.ref), r.ref).toBe(r.commit);
      }
    } finally {
      stop = true;
      await writer;
    }
  });
});
