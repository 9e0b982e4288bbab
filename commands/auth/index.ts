// `mkt auth login|status|logout`: saved server profiles and tokens for the service clients.
import { Argument, type Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { jsonOption, runVerb, type ParsedVerb } from '../../src/cli/flags.js';
import { SERVICES } from '../../src/config/services.js';

export function register(program: Command, f: Factory, runF?: ParsedVerb): void {
  const auth = program.command('auth').description('save, show and remove server profiles and tokens');
  auth
    .command('login')
    .description('check a token against its server, then save the server URL and the token (read from stdin or a hidden prompt, never argv); a refused token exits 4, an unreachable server 3, and neither saves anything')
    .addArgument(new Argument('<service>', 'the service the token is for').choices(SERVICES))
    .option('--server <url>', 'server base URL (else MKT_<SERVICE>_URL, the saved profile, or http://127.0.0.1:<default port>)')
    .addHelpText(
      'after',
      `
The check is one read-only request: tickets GET /sync/node (the login names the node),
monitor GET /api/status, marketplace GET /api/user.

Examples:
  $ mkt auth login tickets < tickets/token
  $ mkt auth login tickets --server http://10.0.0.2:7072
  $ printf '%s\\n' "$TOKEN" | mkt auth login monitor --server https://status.example.com`,
    )
    .action(async (service: string, opts: { server?: string }) => {
      await runVerb(runF, { factory: f, service, ...(opts.server !== undefined ? { server: opts.server } : {}) }, async () => (await import('./login.js')).loginRun);
    });
  auth
    .command('status')
    .description('show saved profiles, where tokens are kept, and which are set')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  $ mkt auth status
  $ mkt auth status --json`,
    )
    .action(async (opts: { json?: boolean }) => {
      await runVerb(runF, { factory: f, json: Boolean(opts.json) }, async () => (await import('./status.js')).statusRun);
    });
  auth
    .command('logout')
    .description('forget the saved token (and profile) of a service; for the marketplace also the sync sign-in at that server')
    .addArgument(new Argument('<service>', 'the service to sign out of').choices(SERVICES))
    .addHelpText(
      'after',
      `
Examples:
  $ mkt auth logout tickets
  $ mkt auth logout monitor`,
    )
    .action(async (service: string) => {
      await runVerb(runF, { factory: f, service }, async () => (await import('./logout.js')).logoutRun);
    });
}
