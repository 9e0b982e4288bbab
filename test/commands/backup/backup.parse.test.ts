// Parse-level tests of `mkt backup` (gh's runF): each flag reaches its verb's options under its
// name; the service is one of the three; required flags and unknown ones are usage errors (exit 2).
import { describe, expect, it } from 'vitest';
import type { createRun } from '../../../commands/backup/create.js';
import type { restoreRun } from '../../../commands/backup/restore.js';
import type { verifyRun } from '../../../commands/backup/verify.js';
import { leafPaths, parseSuite } from '../../helpers/parse-cli.js';

const cli = parseSuite('backup');

describe('mkt backup: parsing', () => {
  it('create: the service, --data-dir, --out, --force, --database-url, --json', async () => {
    await cli.verb<typeof createRun>('backup create', ['tickets', '--out', 'b.tar'], { service: 'tickets', out: 'b.tar' });
    await cli.verb<typeof createRun>('backup create', ['marketplace', '--data-dir', '/d', '--out', 'b.tar', '--force', '--database-url', 'postgres://h/db', '--json'], {
      service: 'marketplace',
      dataDir: '/d',
      out: 'b.tar',
      force: true,
      databaseUrl: 'postgres://h/db',
      json: true,
    });
    await cli.usage(['backup', 'create', 'tickets'], /required option '--out <file>' not specified/);
    await cli.usage(['backup', 'create', 'gitea', '--out', 'x'], /command-argument value 'gitea' is invalid/);
    await cli.usage(['backup', 'create', '--out', 'x'], /missing required argument 'service'/);
  });

  it('verify: the file and --json', async () => {
    await cli.verb<typeof verifyRun>('backup verify', ['b.tar'], { file: 'b.tar' });
    await cli.verb<typeof verifyRun>('backup verify', ['b.tar', '--json'], { file: 'b.tar', json: true });
    await cli.usage(['backup', 'verify'], /missing required argument 'file'/);
  });

  it('restore: the service, --from, --data-dir (both required), --force, --json', async () => {
    await cli.verb<typeof restoreRun>('backup restore', ['monitor', '--from', 'b.tar', '--data-dir', 'new'], { service: 'monitor', from: 'b.tar', dataDir: 'new' });
    await cli.verb<typeof restoreRun>('backup restore', ['tickets', '--from', 'b.tar', '--data-dir', 'new', '--force', '--json'], { service: 'tickets', from: 'b.tar', dataDir: 'new', force: true, json: true });
    await cli.usage(['backup', 'restore', 'tickets', '--from', 'b.tar'], /required option '--data-dir <dir>' not specified/);
    await cli.usage(['backup', 'restore', 'tickets', '--data-dir', 'x'], /required option '--from <file>' not specified/);
  });

  it('every verb is covered', () => {
    expect(cli.covered()).toEqual(leafPaths('backup'));
  });
});
