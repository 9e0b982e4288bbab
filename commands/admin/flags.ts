// What every `mkt admin` verb shares on the command line: the `--data-dir` and `--database-url`
// of the parent `admin` command, and the options each runner receives.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';

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
