// `mkt admin billing renew`: sync subscription administration on the marketplace's database
// (`mkt admin --database-url` or the data dir's SQLite file). Flags and help only; the runner loads on use.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { runVerb, type ParsedVerb } from '../../src/cli/flags.js';
import { adminTarget } from './flags.js';

export function registerBillingAdmin(admin: Command, f: Factory, runF?: ParsedVerb): void {
  const billing = admin
    .command('billing')
    .description('sync storage subscriptions of the local payment provider')
    .addHelpText('after', '\nExamples:\n  $ mkt admin billing renew\n  $ mkt admin billing renew --app "Notes App" --user ada@example.com --early');
  billing
    .command('renew')
    .description('renew local subscriptions whose period has ended (promotes a pending storage cap, bills the new price)')
    .option('--app <name-or-id>', 'only subscriptions of this sync app')
    .option('--user <email-or-name>', 'only subscriptions of this user')
    .option('--early', 'renew now even when the current period has not ended')
    .option('--json', 'print machine-readable JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt admin billing renew
  $ mkt admin --data-dir /var/lib/mkt billing renew --user ada@example.com --early --json
  $ mkt admin --database-url postgres://mkt@db/mkt billing renew`,
    )
    .action(async (opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), ...opts } as Parameters<typeof import('./billing/renew.js').billingRenewRun>[0], async () => (await import('./billing/renew.js')).billingRenewRun);
    });
}
