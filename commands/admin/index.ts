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

type RegisterGroup = (admin: Command, f: Factory, runF?: ParsedVerb) => void;

const GROUPS: RegisterGroup[] = [registerAccountsAdmin, registerLicenseAdmin, registerAppAdmin, registerBillingAdmin, registerMigrateAdmin];

export function register(program: Command, f: Factory, runF?: ParsedVerb): void {
  const admin = program
    .command('admin')
    .description('administer a marketplace data directory (users, tokens, repos, items, keys, apps)')
    .option('--data-dir <dir>', 'marketplace data directory (default: $MKT_DATA_DIR or ./.mkt-data)')
    .option('--database-url <url>', 'the marketplace\'s PostgreSQL database (default: $MKT_DATABASE_URL, else SQLite in the data dir)');
  for (const g of GROUPS) g(admin, f, runF);
}
