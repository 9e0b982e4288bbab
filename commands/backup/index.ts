// `mkt backup create|verify|restore`: online backups of a service's data dir into one checked
// file, and their restore. Flags and help only; each verb is loaded when it runs.
import { Argument, type Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { jsonOption, runVerb, type ParsedVerb } from '../../src/cli/flags.js';

/** SERVICES of src/backup/format.ts (a leaf here, so `mkt backup --help` loads nothing else). */
const SERVICES = ['marketplace', 'monitor', 'tickets'];
const service = (): Argument => new Argument('<service>', 'the service whose data dir it is').choices(SERVICES);

export function register(program: Command, f: Factory, runF?: ParsedVerb): void {
  const backup = program
    .command('backup')
    .description("back up a service's data dir while its server runs, check a backup, restore one")
    .addHelpText(
      'after',
      `
Examples:
  $ mkt backup create tickets --data-dir /var/lib/mkt-tickets --out /backup/tickets-$(date +%F).tar
  $ mkt backup verify /backup/tickets-2026-11-29.tar
  $ mkt backup restore tickets --from /backup/tickets-2026-11-29.tar --data-dir /var/lib/mkt-tickets.new

The format, what each service's backup holds, and the PostgreSQL procedure: docs/backup.md.`,
    );

  backup
    .command('create')
    .description('write a consistent backup of a data dir, the server running or not')
    .addArgument(service())
    .option('--data-dir <dir>', 'the data directory (default: $MKT_DATA_DIR or ./.mkt-data)')
    .requiredOption('--out <file>', 'the backup file to write (refused when it exists, unless --force)')
    .option('--force', 'replace an existing --out')
    .option('--database-url <url>', 'the PostgreSQL database the marketplace or monitor uses (default: $MKT_DATABASE_URL): the data dir is backed up, the database is not (use pg_dump)')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
The databases are taken first through SQLite's online backup (writers do not wait), then git
repositories (refs, then objects), blobs, secrets and token files with their modes, and the
configuration when it lives in the data dir. The file is mode 0600: it holds the secrets.
A progress line goes to stderr when stderr is a terminal.

Exit codes: 0 written; 2 a bad flag, a missing data dir, or --out exists without --force;
3 reading or writing failed.

Examples:
  $ mkt backup create marketplace --data-dir /var/lib/mkt --out /backup/mkt.tar
  $ mkt backup create monitor --out monitor.tar --json
  $ MKT_DATABASE_URL=postgres://mkt@db/mkt mkt backup create marketplace --data-dir /srv/mkt-shared --out shared.tar`,
    )
    .action(async (svc: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, service: svc, ...opts } as Parameters<typeof import('./create.js').createRun>[0], async () => (await import('./create.js')).createRun);
    });

  backup
    .command('verify')
    .description("check every member of a backup against its manifest, and each database's integrity")
    .argument('<file>', 'the backup file')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Exit codes: 0 the backup is whole; 1 it is damaged (one line says where); 2 no such file.

Examples:
  $ mkt backup verify /backup/tickets.tar
  $ mkt backup verify /backup/tickets.tar --json`,
    )
    .action(async (file: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, file, ...opts }, async () => (await import('./verify.js')).verifyRun);
    });

  backup
    .command('restore')
    .description('restore a backup into a new data dir (verified first; nothing half-written on failure)')
    .addArgument(service())
    .requiredOption('--from <file>', 'the backup file')
    .requiredOption('--data-dir <dir>', 'the directory to restore into: missing or empty, unless --force')
    .option('--force', 'replace the content of a non-empty --data-dir')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
The backup is checked whole first, then extracted into a directory beside the target and renamed
into place: a failed restore leaves the target as it was. Start the service on the result with
\`mkt serve <service> --data-dir DIR\`.

Exit codes: 0 restored; 1 the backup is damaged; 2 a bad flag, a non-empty target without
--force (nothing touched), or a backup of another service; 3 reading or writing failed.

Examples:
  $ mkt backup restore tickets --from /backup/tickets.tar --data-dir /var/lib/mkt-tickets.new
  $ mkt backup restore marketplace --from mkt.tar --data-dir /var/lib/mkt --force`,
    )
    .action(async (svc: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, service: svc, ...opts } as Parameters<typeof import('./restore.js').restoreRun>[0], async () => (await import('./restore.js')).restoreRun);
    });
}
