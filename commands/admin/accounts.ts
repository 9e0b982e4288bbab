// `mkt admin user add`, `token create|revoke`, `session create`, `repo create|grant|list`,
// `reindex`: accounts and hosted repositories, on the marketplace stores. Flags and help only.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { runVerb, type ParsedVerb } from '../../src/cli/flags.js';
import { adminTarget } from './flags.js';

export function registerAccountsAdmin(admin: Command, f: Factory, runF?: ParsedVerb): void {
  const user = admin
    .command('user')
    .description('marketplace accounts')
    .addHelpText('after', '\nExamples:\n  $ mkt admin user add ana --email ana@example.com\n  $ printf %s "$PASSWORD" | mkt admin user add ana --email ana@example.com');
  user
    .command('add')
    .description('add a user; a password (for sync login) is read from stdin when piped')
    .argument('<name>', 'user name (letters, digits, `.`, `_`, `-`); also the owner part of repositories')
    .requiredOption('--email <email>', 'email address (sync login)')
    .option('--json', 'print machine-readable JSON')
    .addHelpText('after', '\nExamples:\n  $ mkt admin user add ana --email ana@example.com\n  $ mkt admin user add bo --email bo@example.com < password.txt')
    .action(async (name: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), name, ...(opts as { email: string; json?: boolean }) }, async () => (await import('./accounts/user-add.js')).userAddRun);
    });

  const token = admin
    .command('token')
    .description('personal access tokens (read or push scope)')
    .addHelpText('after', '\nExamples:\n  $ mkt admin token create ana --scope push\n  $ mkt admin token revoke 3f2a9c01d4e5');
  token
    .command('create')
    .description('create a token for a user and print it (shown only this once; only a hash is kept)')
    .argument('<user>', 'user name')
    .requiredOption('--scope <scope>', 'read or push')
    .option('--name <name>', 'a label to recognise the token by')
    .option('--json', 'print machine-readable JSON')
    .addHelpText('after', '\nExamples:\n  $ mkt admin token create ana --scope push --name laptop\n  $ TOKEN=$(mkt admin token create ci-bot --scope read)')
    .action(async (userName: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), user: userName, ...(opts as { scope: string; name?: string; json?: boolean }) }, async () => (await import('./accounts/token-create.js')).tokenCreateRun);
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
    .addHelpText('after', '\nExamples:\n  $ mkt admin repo create ana/app\n  $ mkt admin repo grant ana/app bo --push');
  repo
    .command('create')
    .description('create a bare repository owned by a user, served at /OWNER/REPO.git')
    .argument('<owner/repo>', 'owner (an existing user) and repository name')
    .option('--private', 'invisible (404) to everyone but the owner and granted users')
    .option('--object-format <format>', 'sha1 or sha256', 'sha1')
    .option('--json', 'print machine-readable JSON')
    .addHelpText('after', '\nExamples:\n  $ mkt admin repo create ana/app\n  $ mkt admin repo create ana/secret --private --object-format sha256')
    .action(async (full: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), repo: full, ...(opts as { private?: boolean; objectFormat?: string; json?: boolean }) }, async () => (await import('./accounts/repo-create.js')).repoCreateRun);
    });
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
