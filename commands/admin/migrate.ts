// `mkt admin migrate`: brings the marketplace's schema (SQLite in the data dir, or PostgreSQL) to
// this mkt's version, ahead of a rolling upgrade. Flags and help only; the runner loads on use.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { runVerb, type ParsedVerb } from '../../src/cli/flags.js';
import { adminTarget } from './flags.js';

export function registerMigrateAdmin(admin: Command, f: Factory, runF?: ParsedVerb): void {
  admin
    .command('migrate')
    .description("create the marketplace where there is none, or apply its pending schema migrations; print each component's version")
    .option('--json', 'print machine-readable JSON')
    .addHelpText(
      'after',
      `
Servers migrate at start too (instances starting together take turns); run this first to upgrade
the schema before the instances of a cluster restart one by one. It is the one verb that creates a
marketplace wherever it points (the ./.mkt-data default too); the others refuse a place without one.

Examples:
  $ mkt admin migrate
  $ MKT_DATABASE_URL=postgres://mkt@db.internal/mkt mkt admin migrate --json`,
    )
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), ...opts }, async () => (await import('./migrate/run.js')).migrateRun);
    });
}
