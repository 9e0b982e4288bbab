// What every `mkt admin` verb shares on the command line: the `--data-dir` of the parent
// `admin` command and the options each runner receives.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';

export interface AdminFlags {
  factory: Factory;
  dataDir?: string;
  json?: boolean;
}

export function dataDirFlag(cmd: Command): string | undefined {
  return (cmd.optsWithGlobals() as { dataDir?: string }).dataDir;
}
