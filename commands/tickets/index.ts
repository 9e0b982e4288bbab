// `mkt tickets create|list|show|update|node`: the ticket tracker client. Flags and help only;
// each verb is loaded when it runs.
import { Option, type Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { choiceOption, collect, jsonOption, runVerb, serverOption, type ParsedVerb } from '../../src/cli/flags.js';
import { CHANNELS, PRIORITIES, STATUSES, parseChannel, parsePriority, parseStatus } from '../../src/schemas/ticket-values.js';

// The lists the server validates with (a leaf without TypeBox, so `mkt tickets --help` loads no
// schema), parsed as the server parses them ("On Hold" is on_hold); completion offers them too.
const STATUS = (): Option => choiceOption('--status <status>', 'ticket status', STATUSES, parseStatus);
const PRIORITY = (): Option => choiceOption('--priority <priority>', 'ticket priority', PRIORITIES, parsePriority);
const CHANNEL = (): Option => choiceOption('--channel <channel>', 'how the ticket came in', CHANNELS, parseChannel);
/** LIST_LIMIT of src/schemas/tickets.ts (a test keeps the two equal). */
const LIST_LIMIT = { default: 100, max: 1000 };

function fieldOptions(cmd: Command): Command {
  return cmd
    .option('--description <text>', 'longer description; `-` reads it from stdin')
    .addOption(STATUS())
    .addOption(PRIORITY())
    .addOption(CHANNEL())
    .option('--source <source>', 'where the ticket came from (a mailbox, form or integration)')
    .option('--requester <who>', 'who asked ("" clears it)')
    .option('--assignee <who>', 'who works on it ("" unassigns)')
    .option('--tag <tag>', 'a tag (repeatable; on update, replaces all tags)', collect);
}

export function register(program: Command, f: Factory, runF?: ParsedVerb): void {
  const tickets = program
    .command('tickets')
    .description('create, list, show and update tickets on a ticket tracker node')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt tickets create "Printer on fire" --priority urgent --channel phone
  $ mkt tickets list --status open --search printer
  $ mkt tickets update 3f2a9c1e --status solved`,
    );

  fieldOptions(tickets.command('create').description('create a ticket and print it').argument('<title>', 'one-line summary'))
    .addOption(serverOption('tickets'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  $ mkt tickets create "VPN drops every hour" --priority high --requester ana@example.com
  $ journalctl -u app | mkt tickets create "App crash" --description - --tag crash --json`,
    )
    .action(async (title: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, title, ...opts }, async () => (await import('./create.js')).createRun);
    });

  tickets
    .command('list')
    .description('list tickets, newest change first, filtered and searched')
    .addOption(STATUS())
    .addOption(PRIORITY())
    .addOption(CHANNEL())
    .option('--source <source>', 'only tickets from this source')
    .option('--assignee <who>', 'only tickets assigned to WHO; `none` (or "") for unassigned ones, `*` for assigned ones')
    .option('--requester <who>', 'only tickets requested by WHO; `none` (or "") for those without a requester, `*` for those with one')
    .option('--search <words>', 'whole words that must all appear in the title or description (word* for a prefix of 3 or more characters)')
    .option('--limit <n>', `tickets per page, 1 to ${LIST_LIMIT.max} (server default: ${LIST_LIMIT.default})`)
    .option('--cursor <cursor>', 'start after the page whose next_cursor this is')
    .option('--all', 'print every page, following next_cursor to the end')
    .addOption(serverOption('tickets'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  $ mkt tickets list --status open --priority urgent
  $ mkt tickets list --assignee bo --status open
  $ mkt tickets list --assignee none                 # unassigned tickets
  $ mkt tickets list --search "vpn timeout" --json | jq '.data[].id'
  $ mkt tickets list --limit 20 --json | jq -r .next_cursor
  $ mkt tickets list --limit 20 --cursor "$next_cursor"
  $ mkt tickets list --status open --all | cut -f1
  $ mkt tickets list --all --limit 1000 --json > tickets.json`,
    )
    .action(async (opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, ...opts }, async () => (await import('./list.js')).listRun);
    });

  tickets
    .command('show')
    .description('show one ticket by id or short id')
    .argument('<id>', 'ticket id, or its first 8 characters')
    .addOption(serverOption('tickets'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  $ mkt tickets show 3f2a9c1e
  $ mkt tickets show 3f2a9c1e-7d41-4b0e-9a55-0c6e2d8f1a23 --json`,
    )
    .action(async (id: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, id, ...opts }, async () => (await import('./show.js')).showRun);
    });

  fieldOptions(tickets.command('update').description('change a ticket and print it').argument('<id>', 'ticket id, or its first 8 characters'))
    .option('--title <title>', 'new one-line summary')
    .addOption(new Option('--add-tag <tag>', 'add a tag, keeping the others (repeatable)').argParser(collect).conflicts('tag'))
    .addOption(new Option('--remove-tag <tag>', 'remove a tag, keeping the others (repeatable)').argParser(collect).conflicts('tag'))
    .addOption(serverOption('tickets'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  $ mkt tickets update 3f2a9c1e --status pending --assignee bo
  $ mkt tickets update 3f2a9c1e --tag network --tag vpn --json
  $ mkt tickets update 3f2a9c1e --add-tag urgent --remove-tag triage
  $ mkt tickets update 3f2a9c1e --assignee ""        # unassign`,
    )
    .action(async (id: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, id, ...opts }, async () => (await import('./update.js')).updateRun);
    });

  tickets
    .command('node')
    .description("print the node id of the server (and check the token works)")
    .addOption(serverOption('tickets'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  $ mkt tickets node
  $ mkt tickets node --server http://10.0.0.2:7072 --json`,
    )
    .action(async (opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, ...opts }, async () => (await import('./node.js')).nodeRun);
    });
}
