// `mkt tickets create|list|show|update|comment|delete|log|node`: the ticket tracker client. Flags and help only;
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
/** HISTORY_LIMIT of src/schemas/tickets.ts (a test keeps the two equal). */
const HISTORY_LIMIT = { default: 50, max: 500 };

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
    .description('create, list, show, update, comment on and delete tickets on a ticket tracker node')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt tickets create "Printer on fire" --priority urgent --channel phone
  $ mkt tickets list --status open --search printer
  $ mkt tickets update 3f2a9c1e --status solved
  $ mkt tickets comment 3f2a9c1e "Replaced the toner"
  $ mkt tickets log 3f2a9c1e`,
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
    .description('show one ticket by id or short id, with its comments')
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
    .command('comment')
    .description('add a comment to a ticket and print it')
    .argument('<id>', 'ticket id, or its first 8 characters')
    .argument('<text>', 'the comment; `-` reads it from stdin')
    .option('--author <name>', "who wrote it (default: the server's node id)")
    .addOption(serverOption('tickets'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  $ mkt tickets comment 3f2a9c1e "Called back, the VPN works again" --author bo
  $ journalctl -u vpn --since today | mkt tickets comment 3f2a9c1e - --json`,
    )
    .action(async (id: string, text: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, id, text, ...opts }, async () => (await import('./comment.js')).commentRun);
    });

  tickets
    .command('delete')
    .description('delete a ticket on every node (asks first on a terminal)')
    .argument('<id>', 'ticket id, or its first 8 characters')
    .option('--yes', 'delete without asking (needed when stdin is not a terminal)')
    .addOption(serverOption('tickets'))
    .addHelpText(
      'after',
      `
A delete is final: it reaches every peer with the next sync, and no older copy brings the
ticket back.

Examples:
  $ mkt tickets delete 3f2a9c1e                      # Delete ticket 3f2a9c1e "Printer on fire"? [y/N]
  $ mkt tickets delete 3f2a9c1e --yes                # in scripts`,
    )
    .action(async (id: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, id, ...opts }, async () => (await import('./delete.js')).deleteRun);
    });

  tickets
    .command('log')
    .description("a ticket's history, newest first: every change, comment and the delete")
    .argument('<id>', 'ticket id, or its first 8 characters')
    .option('--limit <n>', `changes per page, 1 to ${HISTORY_LIMIT.max} (server default: ${HISTORY_LIMIT.default})`)
    .option('--all', 'every change, following next_cursor to the end')
    .addOption(serverOption('tickets'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  $ mkt tickets log 3f2a9c1e
  $ mkt tickets log 3f2a9c1e --all | awk -F'\t' '$3 == "status"'
  $ mkt tickets log 3f2a9c1e --all --json | jq '.[] | select(.lost)'`,
    )
    .action(async (id: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, id, ...opts }, async () => (await import('./log.js')).logRun);
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
