// `mkt admin app create|list`: sync apps (their public API key and pricing constants) in the
// marketplace's database (`mkt admin --database-url` or the data dir's SQLite file). Flags and help
// only; runners load on use.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { runVerb, type ParsedVerb } from '../../src/cli/flags.js';
import { addListVerb, adminTarget } from './flags.js';

export function registerAppAdmin(admin: Command, f: Factory, runF?: ParsedVerb): void {
  const app = admin
    .command('app')
    .description('sync apps: public API key (shown once) and pricing constants')
    .addHelpText('after', '\nExamples:\n  $ mkt admin app create Notes\n  $ mkt admin app list --json');
  app
    .command('create')
    .description('create a sync app and print its public API key (shown only this once; only a hash is kept): alone on stdout in a pipe, with the app in a table on a terminal')
    .argument('<name>', 'app name (unique, ignoring case)')
    .option('--min-charge-cents <n>', 'floor of every monthly and annual price, in cents', '100')
    .option('--per-gb-tenths-of-cent <n>', 'storage rate per GiB and month, in tenths of a cent', '25')
    .option('--annual-multiplier <n>', 'annual price = monthly price × this', '10')
    .option('--min-cap <size>', 'smallest storage cap a subscription may choose (50GiB, 500MB, bytes)', '1GiB')
    .option('--max-cap <size>', 'largest storage cap a subscription may choose', '1TiB')
    .option('--free <size>', 'storage a user has without a subscription', '1GiB')
    .option('--json', 'print machine-readable JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ APP_KEY=$(mkt admin app create Notes)
  $ mkt admin --data-dir /var/lib/mkt app create Photos --min-charge-cents 200 --per-gb-tenths-of-cent 40 --max-cap 2TiB --json
  $ mkt admin --database-url postgres://mkt@db/mkt app create Notes`,
    )
    .action(async (name: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), name, ...opts } as Parameters<typeof import('./app/app-create.js').appCreateRun>[0], async () => (await import('./app/app-create.js')).appCreateRun);
    });
  addListVerb(app, f, runF, { description: 'list sync apps and their pricing constants (API keys are not kept, so not shown)', examples: ['mkt admin app list', "mkt admin app list --json | jq -r '.[].name'"] }, async () => (await import('./app/app-list.js')).appListRun);
}
