// What every `mkt admin` verb shares on the command line: the `--data-dir` and `--database-url`
// of the parent `admin` command, the options each runner receives, and opening the marketplace
// they name (refusing a place that holds none, and saying on stderr which one was used).
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Factory, OpenedMarketplace } from '../../src/cli/factory.js';
import { runVerb, type ParsedVerb } from '../../src/cli/flags.js';

export interface AdminFlags {
  factory: Factory;
  dataDir?: string;
  /** PostgreSQL URL of the marketplace stores (else $MKT_DATABASE_URL, else SQLite in the data dir). */
  databaseUrl?: string;
  json?: boolean;
}

/** The marketplace an admin verb works on: `--data-dir` and `--database-url` of `mkt admin`. */
export function adminTarget(cmd: Command): { dataDir?: string; databaseUrl?: string } {
  const o = cmd.optsWithGlobals() as { dataDir?: string; databaseUrl?: string };
  return { ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}), ...(o.databaseUrl !== undefined ? { databaseUrl: o.databaseUrl } : {}) };
}

/**
 * `NOUN list [--json]`, the listing verb that user, repo and app share: no argument, the admin
 * place, and a runner loaded on use.
 */
export function addListVerb(noun: Command, f: Factory, runF: ParsedVerb | undefined, help: { description: string; examples: readonly string[] }, load: () => Promise<(opts: AdminFlags) => unknown>): void {
  noun
    .command('list')
    .description(help.description)
    .option('--json', 'print machine-readable JSON')
    .addHelpText('after', `\nExamples:\n${help.examples.map((e) => `  $ ${e}`).join('\n')}`)
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), ...opts }, load);
    });
}

/**
 * Opens the marketplace the flags name. Only `create` may make one where there is none (what
 * `migrate` and a first `user add` naming its place do); every other verb is refused, so a
 * mistyped or forgotten place never becomes a throwaway marketplace. Unless the place is the one
 * the environment names (MKT_DATA_DIR, MKT_DATABASE_URL), one line on stderr says which it is.
 */
export async function openMarketplace(opts: AdminFlags, create = false): Promise<OpenedMarketplace> {
  const { io } = opts.factory;
  const stores = await opts.factory.marketplaceStores({ dataDir: opts.dataDir, databaseUrl: opts.databaseUrl, create });
  const { dataDir, database, created } = stores.place;
  const envDir = io.env.MKT_DATA_DIR?.trim();
  const dirFromEnv = envDir !== undefined && envDir !== '' && resolve(io.cwd, envDir) === dataDir;
  const urlFromEnv = database === undefined || opts.databaseUrl === undefined || opts.databaseUrl.trim() === io.env.MKT_DATABASE_URL?.trim();
  if (created || !dirFromEnv || !urlFromEnv) {
    const where = database === undefined ? dataDir : `the database ${database} (data directory ${dataDir})`;
    io.stderr.write(`${created ? 'created a new marketplace in' : 'using the marketplace in'} ${where}\n`);
  }
  return stores;
}
