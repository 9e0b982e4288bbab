// `mkt admin item create`, `mkt admin key issue|list|revoke|suspend|reinstate|entitlements|events`,
// `mkt admin signing-key rotate`:
// license administration on the marketplace stores (--data-dir or --database-url). Flags and help
// only; runners load on use.
import { Option, type Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { runVerb, type ParsedVerb } from '../../src/cli/flags.js';
import { adminTarget } from './flags.js';

export function registerLicenseAdmin(admin: Command, f: Factory, runF?: ParsedVerb): void {
  const item = admin
    .command('item')
    .description('marketplace items (license template, activation maximum, offline verification)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ mkt admin item create font-pro --name "Font Pro" --max-activations 3\n  $ mkt admin item create ci-tool --name "CI Tool" --max-activations 5 --activation floating --lease 15m',
    );
  item
    .command('create')
    .description('create an item')
    .argument('<id>', 'item id (letters, digits, `.`, `_`, `-`)')
    .requiredOption('--name <name>', 'display name, used in the license text')
    .option('--license-template <file>', 'license text template: {{item_name}} {{licensee}} {{year}} {{key_prefix}}')
    .option('--max-activations <n>', 'default activation maximum of keys issued later (default: unlimited)')
    .addOption(new Option('--verification <on|off>', 'offline verification with signed tokens (license_verify)').choices(['on', 'off']).default('off'))
    .addOption(
      new Option('--activation <policy>', 'node-locked: an activation holds its slot until deactivated; floating: --max-activations seats held as leases (CI fleets)')
        .choices(['node-locked', 'floating'])
        .default('node-locked'),
    )
    .option('--lease <duration>', "a floating seat's lease without a heartbeat: 30s, 15m, 2h (at least 1s)")
    .option('--max-deactivations <n>', 'deactivation budget of its keys: at most N node-locked deactivations per --per window')
    .option('--per <duration>', 'the budget\'s sliding window: 24h, 30d')
    .option('--json', 'print machine-readable JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt admin item create font-pro --name "Font Pro" --license-template LICENSE.tmpl --max-activations 3
  $ mkt admin --data-dir /var/lib/mkt item create cli-tool --name "CLI Tool" --verification on
  $ mkt admin item create ci-tool --name "CI Tool" --max-activations 5 --activation floating --lease 15m --verification on
  $ mkt admin item create desk-app --name "Desk App" --max-activations 2 --max-deactivations 3 --per 30d`,
    )
    .action(async (id: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), id, ...opts } as Parameters<typeof import('./license/item-create.js').itemCreateRun>[0], async () => (await import('./license/item-create.js')).itemCreateRun);
    });

  const key = admin
    .command('key')
    .description('license keys: issue (shown once), list, revoke, suspend, reinstate, entitlements, events')
    .addHelpText('after', '\nExamples:\n  $ mkt admin key issue font-pro --count 10 > keys.txt\n  $ mkt admin key list font-pro');
  key
    .command('issue')
    .description('issue license keys for an item and print them (they are shown only this once)')
    .argument('<item>', 'item id')
    .option('--count <k>', 'how many keys', '1')
    .option('--max-activations <n>', "activation maximum (`unlimited` for none; default: the item's)")
    .option('--expires <date>', 'expiry: YYYY-MM-DD (start of that day, UTC) or an RFC 3339 time (default: never); a past one is accepted with a warning, the keys born expired')
    .option('--licensee <name>', 'who the keys are for (shown in the license text)')
    .option('--entitlements <names>', 'named features of the keys, comma-separated (a-z, 0-9, `.`, `_`, `-`): export-pdf,sso')
    .option('--max-deactivations <n>', "the keys' own deactivation budget (default: the item's): at most N per --per window")
    .option('--per <duration>', "the budget's sliding window: 24h, 30d")
    .option('--json', 'print machine-readable JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt admin key issue font-pro --licensee "ACME Corp" --max-activations 5
  $ mkt admin key issue font-pro --count 100 --expires 2027-01-01 > keys.txt
  $ mkt admin key issue font-pro --entitlements export-pdf,sso --max-deactivations 2 --per 30d`,
    )
    .action(async (itemId: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), itemId, ...opts } as Parameters<typeof import('./license/key-issue.js').keyIssueRun>[0], async () => (await import('./license/key-issue.js')).keyIssueRun);
    });
  key
    .command('list')
    .description("list an item's keys (prefix only: keys are stored as keyed hashes)")
    .argument('<item>', 'item id')
    .option('--json', 'print machine-readable JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt admin key list font-pro
  $ mkt admin key list font-pro --json | jq '.[] | select(.revoked_at == null) | .id'`,
    )
    .action(async (itemId: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), itemId, ...opts }, async () => (await import('./license/key-list.js')).keyListRun);
    });
  key
    .command('revoke')
    .description('revoke a key: it stops validating at once; `-` reads the key from stdin')
    .argument('<key>', 'the key id (lk_...) from `key list`, the key itself, or `-`')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt admin key revoke lk_3f9a0c2d7e1b4a5c6d7e
  $ echo "$LEAKED_KEY" | mkt admin key revoke -`,
    )
    .action(async (keyOrId: string, _opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), key: keyOrId }, async () => (await import('./license/key-revoke.js')).keyRevokeRun);
    });

  key
    .command('events')
    .description("a key's audit trail: activations, leases, deactivations, suspensions, refusals (kept 400 days)")
    .argument('<key>', 'the key id (lk_...) from `key list`, the key itself, or `-`')
    .option('--since <when>', 'only events since a look-back (90m, 24h, 30d) or an RFC 3339 time')
    .option('--json', 'print machine-readable JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt admin key events lk_3f9a0c2d7e1b4a5c6d7e --since 24h
  $ echo "$KEY" | mkt admin key events - --json | jq '.[] | select(.type == "license.activated")'`,
    )
    .action(async (keyOrId: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), key: keyOrId, ...opts }, async () => (await import('./license/key-events.js')).keyEventsRun);
    });

  key
    .command('suspend')
    .description('suspend a key: it answers SUSPENDED (deactivation still works) and keeps its activations until reinstated; `-` reads the key from stdin')
    .argument('<key>', 'the key id (lk_...) from `key list`, the key itself, or `-`')
    .option('--json', 'print machine-readable JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt admin key suspend lk_3f9a0c2d7e1b4a5c6d7e
  $ echo "$CUSTOMER_KEY" | mkt admin key suspend - --json`,
    )
    .action(async (keyOrId: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), key: keyOrId, ...opts }, async () => (await import('./license/key-standing.js')).keySuspendRun);
    });
  key
    .command('reinstate')
    .description('lift a suspension: the key validates again with the activations it kept (a revoked key stays revoked)')
    .argument('<key>', 'the key id (lk_...) from `key list`, the key itself, or `-`')
    .option('--json', 'print machine-readable JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt admin key reinstate lk_3f9a0c2d7e1b4a5c6d7e
  $ echo "$CUSTOMER_KEY" | mkt admin key reinstate - --json`,
    )
    .action(async (keyOrId: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), key: keyOrId, ...opts }, async () => (await import('./license/key-standing.js')).keyReinstateRun);
    });
  key
    .command('entitlements')
    .description("add or remove a key's entitlements (named features) and print the list it has then")
    .argument('<key>', 'the key id (lk_...) from `key list`, the key itself, or `-`')
    .option('--add <names>', 'entitlements to add, comma-separated')
    .option('--remove <names>', 'entitlements to remove, comma-separated (wins over --add)')
    .option('--json', 'print machine-readable JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt admin key entitlements lk_3f9a0c2d7e1b4a5c6d7e --add export-pdf,sso
  $ mkt admin key entitlements lk_3f9a0c2d7e1b4a5c6d7e --remove sso --json
  $ mkt admin key entitlements lk_3f9a0c2d7e1b4a5c6d7e`,
    )
    .action(async (keyOrId: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), key: keyOrId, ...opts }, async () => (await import('./license/key-entitlements.js')).keyEntitlementsRun);
    });

  admin
    .command('signing-key')
    .description('the Ed25519 keys that sign offline license tokens')
    .addHelpText('after', '\nExamples:\n  $ mkt admin signing-key rotate\n  $ mkt admin --data-dir /var/lib/mkt signing-key rotate --json')
    .command('rotate')
    .description('start signing with a new key; tokens of the old one verify until they expire (7 days)')
    .option('--json', 'print machine-readable JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt admin signing-key rotate
  $ mkt admin --data-dir /var/lib/mkt signing-key rotate --json`,
    )
    .action(async (opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), ...opts }, async () => (await import('./license/signing-key-rotate.js')).signingKeyRotateRun);
    });
}
