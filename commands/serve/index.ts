// `mkt serve <service>`: the daemon face. Declares the shared server flags; the work is in run.ts.
import { Argument, Command, Option } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { collect, runVerb, type ParsedVerb } from '../../src/cli/flags.js';
import { SERVICES } from '../../src/config/services.js';

export function register(program: Command, f: Factory, runF?: ParsedVerb): void {
  program
    .command('serve')
    .description('run a service as a daemon (marketplace, monitor, tickets, or all)')
    .addArgument(new Argument('<service>', 'the service to run; all runs each on its default port').choices([...SERVICES, 'all']))
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on; 0 picks a free one (default: the service default)')
    .option('--data-dir <dir>', 'data directory (default: $MKT_DATA_DIR or ./.mkt-data)')
    .option('--config <file>', 'configuration file (default: $MKT_CONFIG)')
    .option('--token <token>', 'shared API token (tickets; prefer MKT_TICKETS_TOKEN: argv is visible to other users)')
    .option('--peer <url>', 'peer node URL (tickets; repeatable)', collect)
    .addOption(new Option('--sync-interval <seconds>', 'seconds between peer sync rounds (tickets; default: the config, else 30)'))
    .option('--tombstone-max-age <duration>', 'longest a deleted ticket\'s tombstone is kept when a peer has not received it: 90d, 12h, 30m or seconds (tickets; default: the config\'s tombstone_max_age, else 90d)')
    .option('--headers-timeout <seconds>', 'seconds a client may take to send the headers of a request (default: 15)')
    .option('--request-timeout <seconds>', 'seconds a client may take to send a JSON or text body; 408 after that (default: 60)')
    .option('--idle-timeout <seconds>', 'seconds without a byte before a connection with a request in progress is closed (default: 60)')
    .option('--keep-alive-timeout <seconds>', 'seconds an idle keep-alive connection waits for its next request (default: 72)')
    .option('--public-url <url>', 'address clients reach the marketplace at; signed blob and checkout URLs use it (default: $MKT_PUBLIC_URL; required off loopback)')
    .option('--database-url <url>', 'PostgreSQL for the marketplace and monitor stores, shared by several instances (default: $MKT_DATABASE_URL, else SQLite in the data dir; prefer the variable: argv is visible to other users)')
    .addOption(new Option('--payments <provider>', 'sync payment provider (marketplace; default: $MKT_SYNC_PAYMENTS, else local, which off loopback must be chosen explicitly)').choices(['local', 'stripe']))
    .addHelpText(
      'after',
      `
Examples:
  $ mkt serve tickets --port 7072 --data-dir /var/lib/mkt
  $ mkt serve tickets --port 0 --peer http://10.0.0.2:7072 --peer http://10.0.0.3:7072
  $ mkt serve tickets --peer http://10.0.0.2:7072 --tombstone-max-age 30d
  $ mkt serve marketplace --idle-timeout 120 --keep-alive-timeout 5
  $ mkt serve marketplace --host 0.0.0.0 --public-url https://market.example.com --payments stripe
  $ MKT_DATABASE_URL=postgres://mkt@db.internal/mkt mkt serve marketplace --data-dir /srv/mkt-shared
  $ mkt serve all

Exit codes: 0 after a clean stop (SIGTERM/SIGINT); 2 a bad flag, option or configuration;
3 the server cannot start (port in use, database unreachable), said in one line with a hint.`,
    )
    .action(async (service: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, service, ...opts } as Parameters<typeof import('./run.js').serveRun>[0], async () => (await import('./run.js')).serveRun);
    });
}
