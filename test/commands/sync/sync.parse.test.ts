// Parse-level tests of `mkt sync` (gh's runF): each flag reaches its verb's options (LoginOptions,
// PlanOptions, ...) under its name; verbs that print no data take no --json; usage errors exit 2.
import { describe, expect, it } from 'vitest';
import type { accountRun } from '../../../commands/sync/account.js';
import type { blobGetRun } from '../../../commands/sync/blob-get.js';
import type { blobPutRun } from '../../../commands/sync/blob-put.js';
import type { devicesAddRun, devicesLsRun, devicesRenameRun, devicesRmRun } from '../../../commands/sync/devices.js';
import type { keyInitRun } from '../../../commands/sync/key-init.js';
import type { keyCancelRun, keyRotateRun } from '../../../commands/sync/key-rotate.js';
import type { keyUnlockRun } from '../../../commands/sync/key-unlock.js';
import type { loginRun } from '../../../commands/sync/login.js';
import type { logoutRun } from '../../../commands/sync/logout.js';
import type { planBuyRun, planCapRun, planQuoteRun, planStatusRun } from '../../../commands/sync/plan.js';
import type { pullRun } from '../../../commands/sync/pull.js';
import type { pushRun } from '../../../commands/sync/push.js';
import type { statusRun } from '../../../commands/sync/status.js';
import { leafPaths, parse, parseSuite } from '../../helpers/parse-cli.js';

const cli = parseSuite('sync');
const CLIENT = ['--server', 'http://m:7070', '--json'];
const client = { server: 'http://m:7070', json: true };

describe('mkt sync: parsing', () => {
  it('login: --email required; --app-key, --device', async () => {
    await cli.verb<typeof loginRun>('sync login', ['--email', 'ada@example.com'], { email: 'ada@example.com' });
    await cli.verb<typeof loginRun>('sync login', ['--app-key', 'app_pk_123', '--email', 'ada@example.com', '--device', 'laptop', ...CLIENT], {
      appKey: 'app_pk_123',
      email: 'ada@example.com',
      device: 'laptop',
      ...client,
    });
    await cli.usage(['sync', 'login', '--app-key', 'k'], /required option '--email <email>' not specified/);
    await cli.usage(['sync', 'login', '--email', 'a@b', '--password', 'p'], /unknown option '--password'/);
  });

  it('logout: --server only', async () => {
    await cli.verb<typeof logoutRun>('sync logout', ['--server', 'u'], { server: 'u' });
    await cli.usage(['sync', 'logout', '--json'], /unknown option '--json'/);
  });

  it('account and status: the client flags', async () => {
    await cli.verb<typeof accountRun>('sync account', CLIENT, client);
    await cli.verb<typeof statusRun>('sync status', CLIENT, client);
    await cli.verb<typeof statusRun>('sync status', [], {});
  });

  it('key init|unlock|rotate|cancel-rotation', async () => {
    await cli.verb<typeof keyInitRun>('sync key init', CLIENT, client);
    await cli.verb<typeof keyUnlockRun>('sync key unlock', CLIENT, client);
    await cli.verb<typeof keyRotateRun>('sync key rotate', CLIENT, client);
    await cli.verb<typeof keyCancelRun>('sync key cancel-rotation', ['--server', 'u'], { server: 'u' });
    await cli.usage(['sync', 'key', 'cancel-rotation', '--json'], /unknown option '--json'/);
  });

  it('push: [file]; pull: --since and --json (issue 30 item 9: --json on every data command)', async () => {
    await cli.verb<typeof pushRun>('sync push', [], { file: undefined });
    await cli.verb<typeof pushRun>('sync push', ['changes.jsonl', ...CLIENT], { file: 'changes.jsonl', ...client });
    await cli.verb<typeof pullRun>('sync pull', ['--since', '0', '--server', 'u'], { since: '0', server: 'u' });
    await cli.verb<typeof pullRun>('sync pull', ['--json'], { json: true });
    await cli.verb<typeof pullRun>('sync pull', ['--since', '3', ...CLIENT], { since: '3', ...client });
  });

  it('blob put <file>; blob get <hash> -o/--output', async () => {
    await cli.verb<typeof blobPutRun>('sync blob put', ['video.mp4', ...CLIENT], { file: 'video.mp4', ...client });
    await cli.verb<typeof blobGetRun>('sync blob get', ['9f86d081', '-o', 'notes.db', ...CLIENT], { hash: '9f86d081', output: 'notes.db', ...client });
    await cli.verb<typeof blobGetRun>('sync blob get', ['9f86d081', '--output', 'x'], { hash: '9f86d081', output: 'x' });
    // `-o -` (stdout) reaches the verb as the value `-`, not as an option.
    await cli.verb<typeof blobGetRun>('sync blob get', ['9f86d081', '-o', '-'], { hash: '9f86d081', output: '-' });
    await cli.usage(['sync', 'blob', 'put'], /missing required argument 'file'/);
    await cli.usage(['sync', 'blob', 'get'], /missing required argument 'hash'/);
  });

  it('devices ls|rename <name>|rm <id>; add is the hidden old name of rename', async () => {
    await cli.verb<typeof devicesLsRun>('sync devices ls', CLIENT, client);
    await cli.verb<typeof devicesRenameRun>('sync devices rename', ['ci runner', ...CLIENT], { name: 'ci runner', ...client });
    await cli.verb<typeof devicesAddRun>('sync devices add', ['ci runner', ...CLIENT], { name: 'ci runner', ...client });
    await cli.verb<typeof devicesRmRun>('sync devices rm', ['3f2a9c1e', '--server', 'u'], { id: '3f2a9c1e', server: 'u' });
    await cli.usage(['sync', 'devices', 'rename'], /missing required argument 'name'/);
    await cli.usage(['sync', 'devices', 'add'], /missing required argument 'name'/);
    await cli.usage(['sync', 'devices', 'rm'], /missing required argument 'id'/);
    const help = await parse(['sync', 'devices', '--help']);
    expect(help.out).toMatch(/^\s+rename /m);
    expect(help.out).not.toMatch(/^\s+add /m);
  });

  it('plan quote|buy|status|cap: --cap, --annual, --open', async () => {
    await cli.verb<typeof planQuoteRun>('sync plan quote', ['--cap', '1TiB', '--annual', ...CLIENT], { cap: '1TiB', annual: true, ...client });
    await cli.verb<typeof planBuyRun>('sync plan buy', ['--cap', '50GiB', '--annual', '--open', ...CLIENT], { cap: '50GiB', annual: true, open: true, ...client });
    await cli.verb<typeof planStatusRun>('sync plan status', CLIENT, client);
    await cli.verb<typeof planCapRun>('sync plan cap', ['--cap', '20GiB', ...CLIENT], { cap: '20GiB', ...client });
    await cli.usage(['sync', 'plan', 'cap', '--annual'], /unknown option '--annual'/);
  });

  it('every verb of mkt sync has its parse case', () => {
    expect(cli.covered()).toEqual(leafPaths('sync'));
  });
});
