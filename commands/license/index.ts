// `mkt license validate|status|deactivate|verify|check|run|text`: the license-key client, made for
// CI jobs. The key comes from --key-file, MKT_LICENSE_KEY or stdin — never from argv.
// Exit codes: 0 valid, 1 invalid (code on stderr), 2 usage, 3 unreachable or server error.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { collect, jsonOption, runVerb, serverOption, type ParsedVerb } from '../../src/cli/flags.js';

const KEY_FILE = 'read the license key from FILE (`-` = stdin); else $MKT_LICENSE_KEY, else stdin';
const MACHINE = 'machine id, or `auto` for a stable fingerprint derived from this machine id';
const PUBLIC_KEY = "the vendor's public keys to trust (JWKS, JWK or PEM file); else $MKT_LICENSE_PUBLIC_KEYS (a path or inline JWKS)";

function keyed(cmd: Command): Command {
  return cmd.option('--key-file <file>', KEY_FILE).addOption(serverOption('marketplace')).addOption(jsonOption());
}

export function register(program: Command, f: Factory, runF?: ParsedVerb): void {
  const license = program
    .command('license')
    .description('validate, activate, deactivate and verify marketplace license keys (CI-friendly exit codes)')
    .addHelpText(
      'after',
      `
Exit codes: 0 valid, 1 invalid (the reason code on stderr), 2 usage error, 3 server unreachable or error.

Examples:
  $ MKT_LICENSE_KEY=$LICENSE mkt license validate --machine auto --activate
  $ mkt license verify --key-file ~/.config/font-pro.key && mkt license check --public-key keys.jwks`,
    );

  keyed(license.command('validate').description('check that the key is valid; with --machine, for that machine'))
    .option('--machine <id>', MACHINE)
    .option('--machine-name <name>', 'a label for the activation (host name)')
    .option('--activate', 'activate the machine if it is not yet (idempotent)')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt license validate --key-file license.key
  $ echo "$LICENSE_KEY" | mkt license validate --machine auto --activate --json`,
    )
    .action(async (opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, ...opts }, async () => (await import('./validate.js')).validateRun);
    });

  keyed(license.command('status').description('show the key status and activations without activating'))
    .addHelpText(
      'after',
      `
Examples:
  $ MKT_LICENSE_KEY=$LICENSE mkt license status
  $ mkt license status --key-file license.key --json | jq .license.remaining_activations`,
    )
    .action(async (opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, ...opts }, async () => (await import('./status.js')).statusRun);
    });

  keyed(license.command('deactivate').description("free one machine's activation slot"))
    .requiredOption('--machine <id>', MACHINE)
    .addHelpText(
      'after',
      `
Examples:
  $ mkt license deactivate --machine auto --key-file license.key
  $ MKT_LICENSE_KEY=$LICENSE mkt license deactivate --machine ci-runner-7`,
    )
    .action(async (opts: Record<string, unknown> & { machine: string }) => {
      await runVerb(runF, { factory: f, ...opts }, async () => (await import('./deactivate.js')).deactivateRun);
    });

  keyed(license.command('verify').description("get a signed token for this machine (7 days; a floating key's ends with its lease) and store it for offline checks"))
    .option('--machine <id>', MACHINE, 'auto')
    .addHelpText(
      'after',
      `
Examples:
  $ MKT_LICENSE_KEY=$LICENSE mkt license verify
  $ mkt license verify --key-file license.key --server https://market.example.com --json`,
    )
    .action(async (opts: Record<string, unknown> & { machine: string }) => {
      await runVerb(runF, { factory: f, ...opts }, async () => (await import('./verify.js')).verifyRun);
    });

  license
    .command('check')
    .description("verify the stored token offline against the vendor's pinned public keys: signature, issuer, item, this machine, expiry (no network)")
    .option('--item <id>', 'the item the token must license (an app names its own; needed when several are stored)')
    .option('--machine <id>', MACHINE, 'auto')
    .option('--public-key <file>', PUBLIC_KEY)
    .option('--issuer <name>', 'the `iss` the token must carry; else $MKT_LICENSE_ISSUER, else mkt-marketplace')
    .option('--entitlement <name>', 'a feature the license must carry, else ENTITLEMENT_MISSING (exit 1); repeatable', collect)
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
The cached token is never trusted on its own: without a pinned key the check exits 2.

Examples:
  $ mkt license check --item font-pro --public-key /opt/font-pro/license-keys.jwks
  $ MKT_LICENSE_PUBLIC_KEYS=/opt/font-pro/license-keys.jwks mkt license check --item font-pro --json
  $ mkt license check --item font-pro --entitlement export-pdf --entitlement sso`,
    )
    .action(async (opts: Record<string, unknown> & { machine: string }) => {
      await runVerb(runF, { factory: f, ...opts }, async () => (await import('./check.js')).checkRun);
    });

  license
    .command('run')
    .description('run a command while this job holds one seat of the key: wait for a free seat, renew it, release it at the end')
    .argument('<command...>', 'the command and its arguments, after `--` (run without a shell)')
    .option('--machine <id>', 'the seat holder\'s machine id (default: a new `run-HOST-RANDOM` per run, so each job is its own holder); `auto` = this machine\'s fingerprint')
    .option('--wait <duration>', 'how long to wait for a free seat when all are taken (30s, 10m, 1h; 0 = do not wait)', '10m')
    .option('--key-file <file>', KEY_FILE)
    .addOption(serverOption('marketplace'))
    .addHelpText(
      'after',
      `
The seat is taken with validate+activate; on a floating key a full key is asked again as seats
free, up to --wait (one line on stderr says so), and the seat is renewed in the background at a
third of its lease. The command runs without a shell (write \`sh -c '...'\` for pipes); SIGINT,
SIGTERM and SIGHUP are passed on to it; the seat is released when it ends, however it ends, and
mkt exits with its status (128 + N when signal N killed it, 127 when it cannot be found). A
killed mkt strands nothing: the lease lapses. On a node-locked key the machine is activated and
stays activated. Exit 1 when no seat was had (the code on stderr), 2 usage, 3 server unreachable.

Examples:
  $ MKT_LICENSE_KEY=$LICENSE mkt license run -- make test
  $ mkt license run --key-file ci.key --wait 30m -- sh -c 'npm ci && npm test'
  $ mkt license run --machine ci-runner-7 --wait 0 -- ./render --all`,
    )
    .action(async (command: string[], opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, command, ...opts }, async () => (await import('./run.js')).runRun);
    });

  license
    .command('text')
    .description("print an item's rendered license text (personalised when a key is given)")
    .argument('<item>', 'item id')
    .option('--key-file <file>', 'a license key for the item, to fill in licensee and key prefix (else $MKT_LICENSE_KEY)')
    .addOption(serverOption('marketplace'))
    .addHelpText(
      'after',
      `
Examples:
  $ mkt license text font-pro > LICENSE.txt
  $ MKT_LICENSE_KEY=$LICENSE mkt license text font-pro --server https://market.example.com`,
    )
    .action(async (item: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, item, ...opts }, async () => (await import('./text.js')).textRun);
    });
}
