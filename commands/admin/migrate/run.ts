// migrateRun: `mkt admin migrate`. Opening the stores applies every pending migration (as the
// server does at start); then the versions now recorded are printed.
import { printJson, printTable } from '../../../src/cli/output.js';
import { openMarketplace, type AdminFlags } from '../flags.js';

export async function migrateRun(opts: AdminFlags): Promise<void> {
  // The one verb that makes a marketplace wherever it is pointed: creating the schema is its job.
  const stores = await openMarketplace(opts, true);
  try {
    const rows = await stores.sql.all<{ component: string; version: number }>('SELECT component, version FROM schema_migrations ORDER BY component');
    if (opts.json) return printJson(opts.factory.io, { engine: stores.sql.engine, database: stores.sql.label, components: rows });
    opts.factory.io.stdout.write(`${stores.sql.engine} database ${stores.sql.label} is current\n`);
    printTable(opts.factory.io, ['component', 'version'], rows.map((r) => [r.component, r.version]));
  } finally {
    await stores.close();
  }
}
