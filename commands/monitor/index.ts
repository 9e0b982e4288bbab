// `mkt monitor status|trends|report|mesh|watch|check-config`: the health monitor client. Flags and
// help only; each verb is loaded when it runs.
import { Option, type Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { jsonOption, runVerb, serverOption, type ParsedVerb } from '../../src/cli/flags.js';

export function register(program: Command, f: Factory, runF?: ParsedVerb): void {
  const monitor = program
    .command('monitor')
    .description('read a health monitor: status, trends, mesh, a live view; check a config file offline')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt monitor status --fail-on down
  $ mkt monitor trends api --hours 48 --bucket 120
  $ mkt monitor check-config /etc/mkt/monitor.yaml`,
    );

  monitor
    .command('status')
    .description('every target with status, uptime and latency; or one target with each of its checks')
    .argument('[target]', 'a target name')
    .addOption(new Option('--fail-on <level>', 'exit 1 when a target is at or below this level (no data counts as down; a monitor with no targets fails too)').choices(['degraded', 'down']))
    .addOption(serverOption('monitor'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  $ mkt monitor status
  $ mkt monitor status api
  $ mkt monitor status api --json
  $ mkt monitor status --fail-on degraded || page-oncall`,
    )
    .action(async (target: string | undefined, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, target, ...opts }, async () => (await import('./status.js')).statusRun);
    });

  monitor
    .command('trends')
    .description('latency per time bucket for one target, with a sparkline')
    .argument('<target>', 'a target name')
    .option('--hours <n>', 'window in hours (default 24)')
    .option('--bucket <minutes>', 'bucket width in minutes (default 60)')
    .addOption(serverOption('monitor'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  $ mkt monitor trends api
  $ mkt monitor trends api --hours 168 --bucket 360 --json`,
    )
    .action(async (target: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, target, ...opts }, async () => (await import('./trends.js')).trendsRun);
    });

  monitor
    .command('report')
    .description('SLA report over a period: uptime, downtime, incidents, latency percentiles, maintenance excluded')
    .argument('[targets...]', 'target names (default: every target)')
    .option('--from <when>', 'start: a date (2026-10-01, midnight UTC) or an RFC 3339 time (default: 30 days before --to)')
    .option('--to <when>', 'end, exclusive (default and at most: now)')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'csv', 'json']).default('table'))
    .addOption(serverOption('monitor'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Accounting (docs/monitor.md, "SLA reports"): degraded counts as up; checks inside a maintenance
window count neither up nor down; hours without a check are "no data"; time before a target's
first check is not watched (no data), so downtime counts watched time only (the "watched" line).

Examples:
  $ mkt monitor report api --from 2026-10-01 --to 2026-11-01
  $ mkt monitor report --from 2026-10-01 --to 2026-11-01 --format csv > october.csv
  $ mkt monitor report api --format json | jq .uptime`,
    )
    .action(async (targets: string[], opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, targets, ...opts }, async () => (await import('./report.js')).reportRun);
    });

  monitor
    .command('mesh')
    .description('every instance of the monitor mesh and what it sees')
    .addOption(serverOption('monitor'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
A monitor without a \`mesh:\` section in its configuration has no mesh: exit 1, saying so.

Examples:
  $ mkt monitor mesh
  $ mkt monitor mesh --json | jq '.instances | keys'`,
    )
    .action(async (opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, ...opts }, async () => (await import('./mesh.js')).meshRun);
    });

  monitor
    .command('watch')
    .description('a live view of every target that refreshes itself (q or Ctrl-C to leave)')
    .option('--interval <seconds>', 'seconds between refreshes', '5')
    .addOption(serverOption('monitor'))
    .addOption(new Option('--json', 'print JSON lines: one status object per refresh'))
    .addHelpText(
      'after',
      `
Colours: green operational, yellow degraded, red down; NO_COLOR=1 (any non-empty value) turns them
off. Without a terminal it prints one snapshot, as \`mkt monitor status\` does.

Examples:
  $ mkt monitor watch
  $ mkt monitor watch --interval 2 --server https://status.example.com
  $ mkt monitor watch --json | jq -c '.targets | map_values(.latest.status)'`,
    )
    .action(async (opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, ...opts }, async () => (await import('./watch.js')).watchRun);
    });

  monitor
    .command('check-config')
    .description('validate a monitor configuration file offline; errors carry line numbers')
    .argument('<file>', 'the YAML file')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  $ mkt monitor check-config monitor.yaml
  $ mkt monitor check-config /etc/mkt/monitor.yaml && sudo systemctl reload mkt-monitor`,
    )
    .action(async (file: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, file, ...opts }, async () => (await import('./check-config.js')).checkConfigRun);
    });
}
