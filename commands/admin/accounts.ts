// `mkt admin user add|list`, `token create|list|revoke`, `session create`, `repo create|grant|list`,
// `reindex`: accounts and hosted repositories, on the marketplace stores. Flags and help only.
import { Option, type Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { runVerb, type ParsedVerb } from '../../src/cli/flags.js';
import { addListVerb, adminTarget } from './flags.js';

export function registerAccountsAdmin(admin: Command, f: Factory, runF?: ParsedVerb): void {
  const user = admin
    .command('user')
    .description('marketplace accounts')
    .addHelpText('after', '\nExamples:\n  $ mkt admin user add ana --email ana@example.com\n  $ mkt admin user list --json');
  user
    .command('add')
    .description('add a user; a password (for sync login) is read from stdin when piped. The first user of a new marketplace creates it, when `mkt admin --data-dir DIR` (or --database-url) names where')
    .argument('<name>', 'user name (letters, digits, `.`, `_`, `-`); also the owner part of repositories')
    .requiredOption('--email <email>', 'email address (sync login)')
    .option('--json', 'print machine-readable JSON')
    .addHelpText('after', '\nExamples:\n  $ mkt admin user add ana --email ana@example.com\n  $ mkt admin user add bo --email bo@example.com < password.txt')
    .action(async (name: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), name, ...(opts as { email: string; json?: boolean }) }, async () => (await import('./accounts/user-add.js')).userAddRun);
    });
  addListVerb(user, f, runF, { description: 'list the users (name, email, id, created; never a password)', examples: ['mkt admin user list', "mkt admin user list --json | jq -r '.[].email'"] }, async () => (await import('./accounts/user-list.js')).userListRun);

  const token = admin
    .command('token')
    .description('personal access tokens (read or push scope)')
    .addHelpText('after', '\nExamples:\n  $ mkt admin token create ana --scope push\n  $ mkt admin token list ana\n  $ mkt admin token revoke 3f2a9c01d4e5');
  token
    .command('create')
    .description('create a token for a user and print it alone on stdout (shown only this once; only a hash is kept)')
    .argument('<user>', 'user name')
    .addOption(new Option('--scope <scope>', 'required: read (clone, fetch, read notes of repositories the user may see) or push (also git push and note writes)').choices(['read', 'push']).makeOptionMandatory())
    .option('--name <name>', 'a label to recognise the token by')
    .option('--json', 'print machine-readable JSON')
    .addHelpText('after', '\nExamples:\n  $ mkt admin token create ana --scope push --name laptop\n  $ TOKEN=$(mkt admin token create ci-bot --scope read)')
    .action(async (userName: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), user: userName, ...(opts as { scope: string; name?: string; json?: boolean }) }, async () => (await import('./accounts/token-create.js')).tokenCreateRun);
    });
  token
    .command('list')
    .description("list tokens (id, user, name, scope, created, revoked), revoked ones too; never a token's value or hash")
    .argument('[user]', 'only this user\'s tokens')
    .option('--json', 'print machine-readable JSON')
    .addHelpText('after', "\nExamples:\n  $ mkt admin token list\n  $ mkt admin token list ana --json | jq -r '.[] | select(.revoked_at == null) | .id'")
    .action(async (userName: string | undefined, opts: { json?: boolean }, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), user: userName, ...opts }, async () => (await import('./accounts/token-list.js')).tokenListRun);
    });
  token
    .command('revoke')
    .description('revoke a token by id or by value; `-` reads the token from stdin')
    .argument('<token>', 'token id (from `token create --json`), the token itself, or `-`')
    .addHelpText('after', '\nExamples:\n  $ mkt admin token revoke 3f2a9c01d4e5\n  $ printf %s "$TOKEN" | mkt admin token revoke -')
    .action(async (given: string, _opts: unknown, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), token: given }, async () => (await import('./accounts/token-revoke.js')).tokenRevokeRun);
    });

  admin
    .command('session')
    .description('browser sessions (cookie mkt_session; reads only)')
    .addHelpText('after', '\nExamples:\n  $ mkt admin session create ana\n  $ curl -H "Cookie: mkt_session=$(mkt admin session create ana)" http://127.0.0.1:7070/api/git/ana/app/notes')
    .command('create')
    .description('mint a session cookie value for a user and print it once')
    .argument('<user>', 'user name')
    .option('--json', 'print machine-readable JSON')
    .addHelpText('after', '\nExamples:\n  $ mkt admin session create ana\n  $ mkt admin session create ana --json')
    .action(async (userName: string, opts: { json?: boolean }, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), user: userName, ...opts }, async () => (await import('./accounts/session-create.js')).sessionCreateRun);
    });

  const repo = admin
    .command('repo')
    .description('hosted git repositories (bare, under <data-dir>/repos/)')
    .addHelpText('after', '\nExamples:\n  $ mkt admin repo create ana/app\n  $ mkt admin repo grant ana/app bo --push\n  $ mkt admin repo list');
  repo
    .command('create')
    .description('create a bare repository owned by a user, served at /OWNER/REPO.git')
    .argument('<owner/repo>', 'owner (an existing user) and repository name')
    .option('--private', 'invisible (404) to everyone but the owner and granted users')
    .addOption(new Option('--object-format <format>', 'the hash of the repository\'s objects').choices(['sha1', 'sha256']).default('sha1'))
    .option('--default-branch <name>', "the branch HEAD names, which a clone checks out; until it exists, the first branch pushed becomes HEAD (main preferred when one push brings several)", 'main')
    .option('--json', 'print machine-readable JSON')
    .addHelpText('after', '\nExamples:\n  $ mkt admin repo create ana/app\n  $ mkt admin repo create ana/secret --private --object-format sha256 --default-branch trunk')
    .action(async (full: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), repo: full, ...(opts as { private?: boolean; objectFormat?: string; defaultBranch?: string; json?: boolean }) }, async () => (await import('./accounts/repo-create.js')).repoCreateRun);
    });
  addListVerb(repo, f, runF, { description: 'list hosted repositories (owner/name, visibility, object format, created, path)', examples: ['mkt admin repo list', "mkt admin repo list --json | jq -r '.[] | select(.private) | .name'"] }, async () => (await import('./accounts/repo-list.js')).repoListRun);
  repo
    .command('grant')
    .description('let a user read, or read and push (git push and note writes), a repository')
    .argument('<owner/repo>', 'repository')
    .argument('<user>', 'user name')
    .option('--read', 'read access (private repositories become visible)')
    .option('--push', 'push access (implies read)')
    .addHelpText('after', '\nExamples:\n  $ mkt admin repo grant ana/secret bo --read\n  $ mkt admin repo grant ana/app ci-bot --push')
    .action(async (full: string, userName: string, opts: { read?: boolean; push?: boolean }, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), repo: full, user: userName, ...opts }, async () => (await import('./accounts/repo-grant.js')).repoGrantRun);
    });

  admin
    .command('reindex')
    .description('rebuild the notes search index of one repository, or of all')
    .argument('[owner/repo]', 'repository (default: every hosted repository)')
    .option('--json', 'print machine-readable JSON')
    .addHelpText('after', '\nExamples:\n  $ mkt admin reindex\n  $ mkt admin reindex ana/app --json')
    .action(async (full: string | undefined, opts: { json?: boolean }, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), repo: full, ...opts }, async () => (await import('./accounts/reindex.js')).reindexRun);
    });
}
