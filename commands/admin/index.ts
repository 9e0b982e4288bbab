// `mkt admin`: local administration of a marketplace (works on its stores directly, SQLite in the
// data dir or PostgreSQL, no server needed). Each group of verbs is declared by its own module.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import type { ParsedVerb } from '../../src/cli/flags.js';
import { registerAccountsAdmin } from './accounts.js';
import { registerAppAdmin } from './app.js';
import { registerBillingAdmin } from './billing.js';
import { registerLicenseAdmin } from './license.js';
import { registerMigrateAdmin } from './migrate.js';
import { registerRepoAdmin } from './repo.js';
import { registerWebhookAdmin } from './webhook.js';

type RegisterGroup = (admin: Command, f: Factory, runF?: ParsedVerb) => void;

const GROUPS: RegisterGroup[] = [registerAccountsAdmin, registerRepoAdmin, registerLicenseAdmin, registerAppAdmin, registerBillingAdmin, registerWebhookAdmin, registerMigrateAdmin];

export function register(program: Command, f: Factory, runF?: ParsedVerb): void {
  const admin = program
    .command('admin')
    .description('administer a marketplace data directory (users, tokens, repos, items, keys, apps)')
    .option('--data-dir <dir>', 'marketplace data directory (default: $MKT_DATA_DIR or ./.mkt-data)')
    .option('--database-url <url>', 'the marketplace\'s PostgreSQL database (default: $MKT_DATABASE_URL, else SQLite in the data dir)')
    .addHelpText(
      'after',
      `
Every verb works on an existing marketplace: a data directory holding marketplace.db (one that
\`mkt serve marketplace\` has run on), or a PostgreSQL database with its schema. Anywhere else it
exits 1 ("no marketplace in DIR") and creates nothing. Two verbs create one: \`migrate\`, and a
first \`user add\` when --data-dir or --database-url names the place. Unless the place is the one
MKT_DATA_DIR (and MKT_DATABASE_URL) names, a line on stderr says which marketplace was used.

Examples:
  $ mkt admin --data-dir market user add ana --email ana@example.com
  $ MKT_DATA_DIR=/var/lib/mkt mkt admin user list`,
    );
  for (const g of GROUPS) g(admin, f, runF);
}
