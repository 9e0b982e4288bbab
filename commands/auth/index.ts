// `mkt auth login|status|logout`: saved server profiles and tokens for the service clients.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { jsonOption } from '../../src/cli/flags.js';

export function register(program: Command, f: Factory): void {
  const auth = program.command('auth').description('save, show and remove server profiles and tokens');
  auth
    .command('login')
    .description('save a server URL and its token (token read from stdin or a hidden prompt, never argv)')
    .argument('<service>', 'marketplace | monitor | tickets')
    .requiredOption('--server <url>', 'server base URL')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt auth login tickets --server http://10.0.0.2:7072
  $ printf '%s\\n' "$TOKEN" | mkt auth login monitor --server https://status.example.com`,
    )
    .action(async (service: string, opts: { server: string }) => {
      const { loginRun } = await import('./login.js');
      await loginRun({ factory: f, service, server: opts.server });
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
      const { statusRun } = await import('./status.js');
      await statusRun({ factory: f, json: Boolean(opts.json) });
    });
  auth
    .command('logout')
    .description('forget the saved token (and profile) of a service')
    .argument('<service>', 'marketplace | monitor | tickets')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt auth logout tickets
  $ mkt auth logout monitor`,
    )
    .action(async (service: string) => {
      const { logoutRun } = await import('./logout.js');
      await logoutRun({ factory: f, service });
    });
}
