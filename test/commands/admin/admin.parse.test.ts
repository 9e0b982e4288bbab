// Parse-level tests of `mkt admin` (gh's runF): each flag reaches its verb's options (UserAddOptions,
// ItemCreateOptions, ...) under its name, with the parent's --data-dir and --database-url before or
// after the verb; defaults hold; usage errors exit 2.
import { describe, expect, it } from 'vitest';
import type { reindexRun } from '../../../commands/admin/accounts/reindex.js';
import type { repoCreateRun } from '../../../commands/admin/accounts/repo-create.js';
import type { repoGrantRun } from '../../../commands/admin/accounts/repo-grant.js';
import type { repoListRun } from '../../../commands/admin/accounts/repo-list.js';
import type { notesMergeRun } from '../../../commands/admin/repo/notes-merge.js';
import type { sessionCreateRun } from '../../../commands/admin/accounts/session-create.js';
import type { tokenCreateRun } from '../../../commands/admin/accounts/token-create.js';
import type { tokenListRun } from '../../../commands/admin/accounts/token-list.js';
import type { tokenRevokeRun } from '../../../commands/admin/accounts/token-revoke.js';
import type { userAddRun } from '../../../commands/admin/accounts/user-add.js';
import type { userListRun } from '../../../commands/admin/accounts/user-list.js';
import type { appCreateRun } from '../../../commands/admin/app/app-create.js';
import type { appListRun } from '../../../commands/admin/app/app-list.js';
import type { billingRenewRun } from '../../../commands/admin/billing/renew.js';
import type { itemCreateRun } from '../../../commands/admin/license/item-create.js';
import type { keyIssueRun } from '../../../commands/admin/license/key-issue.js';
import type { keyListRun } from '../../../commands/admin/license/key-list.js';
import type { keyRevokeRun } from '../../../commands/admin/license/key-revoke.js';
import type { keySuspendRun } from '../../../commands/admin/license/key-standing.js';
import type { keyReinstateRun } from '../../../commands/admin/license/key-standing.js';
import type { keyEntitlementsRun } from '../../../commands/admin/license/key-entitlements.js';
import type { signingKeyRotateRun } from '../../../commands/admin/license/signing-key-rotate.js';
import type { migrateRun } from '../../../commands/admin/migrate/run.js';
import type { keyEventsRun } from '../../../commands/admin/license/key-events.js';
import type { webhookAddRun } from '../../../commands/admin/webhook/add.js';
import type { webhookListRun } from '../../../commands/admin/webhook/list.js';
import type { webhookRmRun } from '../../../commands/admin/webhook/rm.js';
import { leafPaths, parse, parseSuite } from '../../helpers/parse-cli.js';

const cli = parseSuite('admin');
const TARGET = ['--data-dir', '/var/lib/mkt', '--database-url', 'postgres://mkt@db/mkt'];
const target = { dataDir: '/var/lib/mkt', databaseUrl: 'postgres://mkt@db/mkt' };

describe('mkt admin: parsing', () => {
  it('--data-dir and --database-url of `mkt admin` reach the verb, before the verb as after it', async () => {
    const p = await parse(['admin', ...TARGET, 'migrate', '--json']);
    expect(p.code).toBe(0);
    expect(p.path).toEqual(['admin', 'migrate']);
    const { factory: _f, ...rest } = p.opts!;
    expect(rest).toStrictEqual({ ...target, json: true });
    await cli.verb<typeof migrateRun>('admin migrate', [...TARGET, '--json'], { ...target, json: true });
    await cli.verb<typeof migrateRun>('admin migrate', [], {});
  });

  it('user add: <name>, --email required', async () => {
    await cli.verb<typeof userAddRun>('admin user add', ['ana', '--email', 'ana@example.com', '--json', ...TARGET], { name: 'ana', email: 'ana@example.com', json: true, ...target });
    await cli.usage(['admin', 'user', 'add', 'ana'], /required option '--email <email>' not specified/);
    await cli.usage(['admin', 'user', 'add', '--email', 'a@b'], /missing required argument 'name'/);
  });

  it('user list --json', async () => {
    await cli.verb<typeof userListRun>('admin user list', [], {});
    await cli.verb<typeof userListRun>('admin user list', ['--json', ...TARGET], { json: true, ...target });
    await cli.usage(['admin', 'user', 'list', 'ana'], /too many arguments/);
  });

  it('token create <user> --scope read|push (required) --name; token list [user]; token revoke <token>', async () => {
    await cli.verb<typeof tokenCreateRun>('admin token create', ['ana', '--scope', 'push', '--name', 'laptop', '--json'], { user: 'ana', scope: 'push', name: 'laptop', json: true });
    await cli.usage(['admin', 'token', 'create', 'ana'], /required option '--scope <scope>' not specified/);
    // The scopes are a choice the parser knows (and the help lists), not a free string.
    await cli.usage(['admin', 'token', 'create', 'ana', '--scope', 'admin'], /argument 'admin' is invalid\. Allowed choices are read, push/);
    await cli.verb<typeof tokenListRun>('admin token list', [], { user: undefined });
    await cli.verb<typeof tokenListRun>('admin token list', ['ana', '--json', ...TARGET], { user: 'ana', json: true, ...target });
    await cli.verb<typeof tokenRevokeRun>('admin token revoke', ['-', ...TARGET], { token: '-', ...target });
    await cli.usage(['admin', 'token', 'revoke'], /missing required argument 'token'/);
  });

  it('session create <user>', async () => {
    await cli.verb<typeof sessionCreateRun>('admin session create', ['ana', '--json'], { user: 'ana', json: true });
  });

  it('repo notes-merge <owner/repo> --strategy (required, one of git\'s five) --namespace (default commits)', async () => {
    await cli.verb<typeof notesMergeRun>('admin repo notes-merge', ['ana/app', '--strategy', 'union'], { repo: 'ana/app', strategy: 'union', namespace: 'commits' });
    await cli.verb<typeof notesMergeRun>('admin repo notes-merge', [...TARGET, 'ana/app', '--namespace', 'reviews/security', '--strategy', 'cat_sort_uniq', '--json'], {
      ...target,
      repo: 'ana/app',
      namespace: 'reviews/security',
      strategy: 'cat_sort_uniq',
      json: true,
    });
    await cli.usage(['admin', 'repo', 'notes-merge', 'ana/app'], /required option '--strategy <strategy>' not specified/);
    await cli.usage(['admin', 'repo', 'notes-merge', 'ana/app', '--strategy', 'recursive'], /argument 'recursive' is invalid. Allowed choices are manual, ours, theirs, union, cat_sort_uniq/);
    await cli.usage(['admin', 'repo', 'notes-merge', '--strategy', 'ours'], /missing required argument 'owner\/repo'/);
  });

  it('repo create <owner/repo> --private --object-format (default sha1) --default-branch (default main); repo grant --read --push; repo list', async () => {
    await cli.verb<typeof repoCreateRun>('admin repo create', ['ana/app'], { repo: 'ana/app', objectFormat: 'sha1', defaultBranch: 'main' });
    await cli.verb<typeof repoCreateRun>('admin repo create', ['ana/secret', '--private', '--object-format', 'sha256', '--default-branch', 'trunk', '--json'], {
      repo: 'ana/secret',
      private: true,
      objectFormat: 'sha256',
      defaultBranch: 'trunk',
      json: true,
    });
    await cli.verb<typeof repoListRun>('admin repo list', ['--json', ...TARGET], { json: true, ...target });
    await cli.verb<typeof repoGrantRun>('admin repo grant', ['ana/app', 'bo', '--read', '--push'], { repo: 'ana/app', user: 'bo', read: true, push: true });
    await cli.usage(['admin', 'repo', 'grant', 'ana/app'], /missing required argument 'user'/);
  });

  it('reindex [owner/repo]', async () => {
    await cli.verb<typeof reindexRun>('admin reindex', [], { repo: undefined });
    await cli.verb<typeof reindexRun>('admin reindex', ['ana/app', '--json'], { repo: 'ana/app', json: true });
  });

  it('item create <id> --name (required), --license-template, --max-activations, --verification (default off)', async () => {
    await cli.verb<typeof itemCreateRun>('admin item create', ['font-pro', '--name', 'Font Pro'], { id: 'font-pro', name: 'Font Pro', verification: 'off', activation: 'node-locked' });
    await cli.verb<typeof itemCreateRun>('admin item create', ['cli', '--name', 'CLI', '--license-template', 'L.tmpl', '--max-activations', '3', '--verification', 'on', '--json'], {
      id: 'cli',
      name: 'CLI',
      licenseTemplate: 'L.tmpl',
      maxActivations: '3',
      verification: 'on',
      activation: 'node-locked',
      json: true,
    });
    await cli.usage(['admin', 'item', 'create', 'font-pro'], /required option '--name <name>' not specified/);
  });

  it('item create --activation node-locked|floating --lease --max-deactivations --per (issue 33)', async () => {
    await cli.verb<typeof itemCreateRun>('admin item create', ['ci', '--name', 'CI', '--activation', 'floating', '--lease', '15m', '--max-deactivations', '3', '--per', '30d'], {
      id: 'ci',
      name: 'CI',
      verification: 'off',
      activation: 'floating',
      lease: '15m',
      maxDeactivations: '3',
      per: '30d',
    });
    await cli.usage(['admin', 'item', 'create', 'ci', '--name', 'CI', '--activation', 'roaming'], /argument 'roaming' is invalid/);
  });

  it('key issue <item> (--count default 1), key list <item>, key revoke <key>', async () => {
    await cli.verb<typeof keyIssueRun>('admin key issue', ['font-pro'], { itemId: 'font-pro', count: '1' });
    await cli.verb<typeof keyIssueRun>('admin key issue', ['font-pro', '--count', '10', '--max-activations', 'unlimited', '--expires', '2027-01-01', '--licensee', 'ACME Corp', '--json'], {
      itemId: 'font-pro',
      count: '10',
      maxActivations: 'unlimited',
      expires: '2027-01-01',
      licensee: 'ACME Corp',
      json: true,
    });
    await cli.verb<typeof keyListRun>('admin key list', ['font-pro', '--json'], { itemId: 'font-pro', json: true });
    await cli.verb<typeof keyRevokeRun>('admin key revoke', ['lk_3f9a'], { key: 'lk_3f9a' });
    await cli.usage(['admin', 'key', 'revoke', 'lk_1', '--json'], /unknown option '--json'/);
  });

  it('key issue --entitlements --max-deactivations --per; key suspend|reinstate <key>; key entitlements <key> --add --remove (issue 33)', async () => {
    await cli.verb<typeof keyIssueRun>('admin key issue', ['font-pro', '--entitlements', 'export-pdf,sso', '--max-deactivations', '2', '--per', '30d'], {
      itemId: 'font-pro',
      count: '1',
      entitlements: 'export-pdf,sso',
      maxDeactivations: '2',
      per: '30d',
    });
    await cli.verb<typeof keySuspendRun>('admin key suspend', ['lk_3f9a'], { key: 'lk_3f9a' });
    await cli.verb<typeof keySuspendRun>('admin key suspend', ['-', '--json'], { key: '-', json: true });
    await cli.verb<typeof keyReinstateRun>('admin key reinstate', ['lk_3f9a', '--json'], { key: 'lk_3f9a', json: true });
    await cli.verb<typeof keyEntitlementsRun>('admin key entitlements', ['lk_3f9a', '--add', 'a,b', '--remove', 'c'], { key: 'lk_3f9a', add: 'a,b', remove: 'c' });
    await cli.verb<typeof keyEntitlementsRun>('admin key entitlements', ['lk_3f9a', '--json'], { key: 'lk_3f9a', json: true });
    await cli.usage(['admin', 'key', 'suspend'], /missing required argument 'key'/);
    await cli.usage(['admin', 'key', 'entitlements', 'lk_1', '--grant', 'x'], /unknown option '--grant'/);
  });

  it('key events KEY --since --json; webhook add URL --events, list, rm ID', async () => {
    await cli.verb<typeof keyEventsRun>('admin key events', ['lk_3f9a'], { key: 'lk_3f9a' });
    await cli.verb<typeof keyEventsRun>('admin key events', ['-', '--since', '24h', '--json', ...TARGET], { key: '-', since: '24h', json: true, ...target });
    await cli.verb<typeof webhookAddRun>('admin webhook add', ['https://vendor.example/hook', '--events', 'license.*'], { url: 'https://vendor.example/hook', events: 'license.*' });
    await cli.usage(['admin', 'webhook', 'add', 'https://vendor.example/hook'], /required option '--events <patterns>'/);
    await cli.verb<typeof webhookListRun>('admin webhook list', ['--json'], { json: true });
    await cli.verb<typeof webhookRmRun>('admin webhook rm', ['wh_1'], { id: 'wh_1' });
  });

  it('signing-key rotate', async () => {
    await cli.verb<typeof signingKeyRotateRun>('admin signing-key rotate', ['--json', ...TARGET], { json: true, ...target });
  });

  it('app create <name> with its pricing defaults; app list', async () => {
    await cli.verb<typeof appCreateRun>('admin app create', ['Notes'], {
      name: 'Notes',
      minChargeCents: '100',
      perGbTenthsOfCent: '25',
      annualMultiplier: '10',
      minCap: '1GiB',
      maxCap: '1TiB',
      free: '1GiB',
    });
    await cli.verb<typeof appCreateRun>(
      'admin app create',
      ['Photos', '--min-charge-cents', '200', '--per-gb-tenths-of-cent', '40', '--annual-multiplier', '12', '--min-cap', '5GiB', '--max-cap', '2TiB', '--free', '2GiB', '--json'],
      { name: 'Photos', minChargeCents: '200', perGbTenthsOfCent: '40', annualMultiplier: '12', minCap: '5GiB', maxCap: '2TiB', free: '2GiB', json: true },
    );
    await cli.verb<typeof appListRun>('admin app list', ['--json', ...TARGET], { json: true, ...target });
  });

  it('billing renew --app --user --early', async () => {
    await cli.verb<typeof billingRenewRun>('admin billing renew', [], {});
    await cli.verb<typeof billingRenewRun>('admin billing renew', ['--app', 'Notes App', '--user', 'ada@example.com', '--early', '--json'], { app: 'Notes App', user: 'ada@example.com', early: true, json: true });
  });

  it('every verb of mkt admin has its parse case', () => {
    expect(cli.covered()).toEqual(leafPaths('admin'));
  });
});
