// removeAbandoned: which work directories of killed backups it removes (a dead pid on this host,
// an ownerless one older than an hour) and which it leaves (a live pid, another host, a fresh
// ownerless one, another output's).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeAbandoned, workName } from '../../../src/backup/abandoned.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir('mkt-abandoned-');
afterAll(() => tmp.remove());

function work(name: string, owner?: string): void {
  mkdirSync(join(tmp.path, name), { mode: 0o700 });
  writeFileSync(join(tmp.path, name, 'backup.tar'), 'partial');
  if (owner !== undefined) writeFileSync(join(tmp.path, name, 'owner'), owner);
}

describe('removeAbandoned', () => {
  it('removes the dead and the stale, keeps the living, the foreign and the fresh', async () => {
    // A pid that surely ended: a child that has exited and been reaped.
    const deadPid = spawnSync(process.execPath, ['-e', '0']).pid!;
    work(workName('b.tar', '00000001'), `${hostname()} ${deadPid}\n`);
    work(workName('b.tar', '00000002'), `${hostname()} ${process.pid}\n`);
    work(workName('b.tar', '00000003'), `another-host ${deadPid}\n`);
    work(workName('b.tar', '00000004'));
    work(workName('b.tar', '00000005'));
    const hoursAgo = (Date.now() - 2 * 3600_000) / 1000;
    utimesSync(join(tmp.path, workName('b.tar', '00000005')), hoursAgo, hoursAgo);
    work(workName('c.tar', '00000006'), `${hostname()} ${deadPid}\n`);
    work('.b.tar.mkt-backup-notmine', `${hostname()} ${deadPid}\n`);

    const removed = await removeAbandoned(tmp.path, 'b.tar');
    expect(removed.sort()).toEqual([workName('b.tar', '00000001'), workName('b.tar', '00000005')]);
    expect(readdirSync(tmp.path).sort()).toEqual(
      [workName('b.tar', '00000002'), workName('b.tar', '00000003'), workName('b.tar', '00000004'), workName('c.tar', '00000006'), '.b.tar.mkt-backup-notmine'].sort(),
    );
  });
});
