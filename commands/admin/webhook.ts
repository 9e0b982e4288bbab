// `mkt admin webhook add|list|rm`: the webhooks license events are POSTed to, signed with a
// per-webhook secret (docs/license-events.md). Flags and help only; runners load on use.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { runVerb, type ParsedVerb } from '../../src/cli/flags.js';
import { addListVerb, adminTarget } from './flags.js';

export function registerWebhookAdmin(admin: Command, f: Factory, runF?: ParsedVerb): void {
  const webhook = admin
    .command('webhook')
    .description('webhooks told of license events (signed, retried for a day, in order per key)')
    .addHelpText('after', "\nExamples:\n  $ mkt admin webhook add https://vendor.example/hooks/mkt --events 'license.*'\n  $ mkt admin webhook list");
  webhook
    .command('add')
    .description('add a webhook and print its signing secret (shown only this once)')
    .argument('<url>', 'an http:// or https:// URL that answers 2xx to each delivery')
    .requiredOption('--events <patterns>', 'event types or prefixes, comma-separated: license.revoked, license.lease_*, license.*')
    .option('--json', 'print machine-readable JSON (with the secret)')
    .addHelpText(
      'after',
      `
Each delivery is a POST of {"id": "evt_...", "type", "created_at", "data": {...}} with the headers
Mkt-Event-Id and Mkt-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>"> keyed with
the secret (Stripe's scheme). Check the signature, refuse a t more than five minutes off, and drop
an event id seen before: deliveries are at least once.

Examples:
  $ mkt admin webhook add https://vendor.example/hooks/mkt --events 'license.*' > whsec.txt
  $ mkt admin webhook add https://ops.example/mkt --events license.revoked,license.suspended`,
    )
    .action(async (url: string, opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), url, ...opts } as Parameters<typeof import('./webhook/add.js').webhookAddRun>[0], async () => (await import('./webhook/add.js')).webhookAddRun);
    });
  addListVerb(webhook, f, runF, { description: 'list webhooks (their secrets are never shown again)', examples: ['mkt admin webhook list', "mkt admin webhook list --json | jq -r '.[].id'"] }, async () => (await import('./webhook/list.js')).webhookListRun);
  webhook
    .command('rm')
    .description('remove a webhook; deliveries it still had waiting are dropped')
    .argument('<id>', 'the webhook id (wh_...) from `webhook list`')
    .addHelpText('after', '\nExamples:\n  $ mkt admin webhook rm wh_3f9a0c2d7e1b4a5c6d7e\n  $ mkt admin webhook list --json | jq -r \'.[].id\' | xargs -n1 mkt admin webhook rm')
    .action(async (id: string, _opts: Record<string, unknown>, cmd: Command) => {
      await runVerb(runF, { factory: f, ...adminTarget(cmd), id }, async () => (await import('./webhook/rm.js')).webhookRmRun);
    });
}
