// `mkt monitor status|detail|trends|report|mesh|alerts|silence|watch|check-config|ping-url|ping|run`: the health
// monitor client. Flags and help only; each verb is loaded when it runs.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { jsonOption, runVerb, serverOption, type ParsedVerb } from '../../src/cli/flags.js';

/** `--exit-code N`: a shell's exit status, 0-255. */
function exitStatus(raw: string): number {
  if (!/^\d{1,3}$/.test(raw) || Number(raw) > 255) throw new InvalidArgumentError('must be an integer from 0 to 255');
  return Number(raw);
}

const PING_URL_HELP = 'the ping URL (from `mkt monitor ping-url`), instead of asking the server (else MKT_MONITOR_PING_URL)';

export function register(program: Command, f: Factory, runF?: ParsedVerb): void {
  const monitor = program
    .command('monitor')
    .description('read a health monitor: status, trends, mesh, a live view; heartbeats: ping, wrap a job; check a config file offline')
    .addHelpText(
      'after',
      `
Examples:
  $ mkt monitor status --fail-on down
  $ mkt monitor trends api --hours 48 --bucket 120
  $ mkt monitor run nightly-backup -- /usr/local/bin/backup.sh
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
    .command('detail')
    .description("one target's latest snapshots with their errors and response times, and the log of its latest run")
    .argument('<target>', 'a target name')
    .addOption(serverOption('monitor'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
A heartbeat target's run log is what \`mkt monitor run\` (or a POST to its ping URL) sent with the
run's last signal; the monitor keeps its last 10 KiB. The ping URL is shown with its key hidden:
\`mkt monitor ping-url TARGET\` prints it.

Examples:
  $ mkt monitor detail nightly-backup
  $ mkt monitor detail api --json | jq '.recent[] | select(.error) | .error'`,
    )
    .action(async (target: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, target, ...opts }, async () => (await import('./detail-verb.js')).detailRun);
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
    .command('alerts')
    .description('each alert channel (name, type) with its last send: when, for which target, ok or why it failed')
    .addOption(serverOption('monitor'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Channels are the \`alerts:\` entries of the monitor's configuration; their URLs and secrets are
never shown. A channel that failed shows the error of its last attempt, after its retries.

Examples:
  $ mkt monitor alerts
  $ mkt monitor alerts --json | jq '.channels[] | select(.last.ok == false) | .name'`,
    )
    .action(async (opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, ...opts }, async () => (await import('./alerts.js')).alertsRun);
    });

  const silence = monitor
    .command('silence')
    .description("hold a monitor's alerts for a while (a deploy, planned work): checks and incidents go on, no alert is sent")
    .addHelpText(
      'after',
      `
A silence covers one target or every target (--all) and ends by itself; the monitor keeps it in
its store (it survives restarts, and holds on every instance of a cluster). At most 1000 are active.

Examples:
  $ mkt monitor silence add api --for 2h --reason "deploy 4.2"
  $ mkt monitor silence list
  $ mkt monitor silence rm sil_k3xq7hd2m4ab`,
    );
  silence
    .command('add')
    .description('silence one target, or every target with --all, for a duration (1m to 30d)')
    .argument('[target]', 'the target to silence (or --all)')
    .option('--all', 'silence every target')
    .requiredOption('--for <duration>', 'how long: 90m, 2h, 1d (or seconds); 1m to 30d')
    .requiredOption('--reason <text>', 'why: shown in lists, on the dashboard and on the incident (1-200 characters)')
    .addOption(serverOption('monitor'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Prints the silence (its id is what \`silence rm\` takes). An unknown target exits 1; a bad
duration or reason exits 2.

Examples:
  $ mkt monitor silence add api --for 2h --reason "deploy 4.2"
  $ ID=$(mkt monitor silence add --all --for 30m --reason "network work" --json | jq -r .id)`,
    )
    .action(async (target: string | undefined, opts: { for: string; reason: string }) => {
      await runVerb(runF, { factory: f, target, ...opts }, async () => (await import('./silence.js')).silenceAddRun);
    });
  silence
    .command('list')
    .description('the active silences: id, target, until when, why')
    .addOption(serverOption('monitor'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  $ mkt monitor silence list
  $ mkt monitor silence list --json | jq -r '.silences[] | select(.all) | .id'`,
    )
    .action(async (opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, ...opts }, async () => (await import('./silence.js')).silenceListRun);
    });
  silence
    .command('rm')
    .description('end a silence now (alerts are sent again)')
    .argument('<id>', 'the silence id (sil_...)')
    .addOption(serverOption('monitor'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
A silence that is not active (unknown, removed, expired) exits 1.

Examples:
  $ mkt monitor silence rm sil_k3xq7hd2m4ab
  $ mkt monitor silence list --json | jq -r '.silences[].id' | xargs -n1 mkt monitor silence rm`,
    )
    .action(async (id: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, id, ...opts }, async () => (await import('./silence.js')).silenceRmRun);
    });

  monitor
    .command('ping-url')
    .description("print a heartbeat target's ping URL (asks the server, with the API token)")
    .argument('<target>', 'a heartbeat target (one with a `heartbeat:` section)')
    .addOption(serverOption('monitor'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
The URL holds the target's ping key, a secret: anyone who has it can signal the target. Other
views (\`status\`, \`detail\`) show it with the key hidden. A target that is not a heartbeat
target exits 1.

Examples:
  $ mkt monitor ping-url nightly-backup
  $ echo "MKT_MONITOR_PING_URL=$(mkt monitor ping-url nightly-backup)" | sudo tee /etc/mkt/backup.env`,
    )
    .action(async (target: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, target, ...opts }, async () => (await import('./ping-url.js')).pingUrlRun);
    });

  monitor
    .command('ping')
    .description('send one heartbeat signal for a target: success (default), start, fail or an exit status')
    .argument('<target>', 'a heartbeat target')
    .addOption(new Option('--start', 'a run began').conflicts(['fail', 'exitCode']))
    .addOption(new Option('--fail', 'the run failed').conflicts(['exitCode']))
    .addOption(new Option('--exit-code <n>', 'the run ended with this status: 0 is success, 1-255 failure').argParser(exitStatus))
    .option('--log <file>', "the run's log, sent with the signal: a file, or - for stdin; of a log over 100 KiB only its last 100 KiB is sent")
    .addOption(new Option('--ping-url <url>', PING_URL_HELP).conflicts(['server']))
    .addOption(serverOption('monitor'))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Without --ping-url (or MKT_MONITOR_PING_URL), the ping URL is read from the target's status on the
server, with the API token; the ping itself needs no token. Each request gets 3 s and up to two
quick retries. Exit 0 when the monitor took the signal, 1 for a key it does not know, 3 when it
cannot be reached. Prints nothing on success (a line on stderr on a terminal), the answer with --json.

Examples:
  $ mkt monitor ping nightly-backup --start
  $ backup.sh > backup.log 2>&1; mkt monitor ping nightly-backup --exit-code $? --log backup.log
  $ tail -n 200 /var/log/backup.log | mkt monitor ping nightly-backup --fail --log -`,
    )
    .action(async (target: string, opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, target, ...opts }, async () => (await import('./ping.js')).pingRun);
    });

  monitor
    .command('run')
    .description("run a command for a heartbeat target: signal start, run it, signal its exit status with its output's last 10 KiB")
    .argument('<target>', 'a heartbeat target')
    .argument('<command...>', 'the command and its arguments, after `--` (run without a shell)')
    .addOption(new Option('--ping-url <url>', PING_URL_HELP).conflicts(['server']))
    .addOption(serverOption('monitor'))
    .addHelpText(
      'after',
      `
The command runs without a shell (write \`sh -c '...'\` for pipes), in this directory and
environment; its output is passed on as it comes, and mkt exits with its status (128 + N when
signal N killed it, 127 when it cannot be found). SIGINT, SIGTERM and SIGHUP are passed on to it.
The monitor never stops or fails the command: each request gets 3 s and up to two quick retries,
at most 5 s before the command starts and 5 s after it ends; then one warning line on stderr.

Examples:
  $ mkt monitor run nightly-backup -- /usr/local/bin/backup.sh --full
  $ MKT_MONITOR_PING_URL=https://status.example.com/ping/KEY mkt monitor run nightly-backup -- restic backup /srv
  $ mkt monitor run queue-drain --server https://status.example.com -- sh -c 'drain-queue | logger'`,
    )
    .action(async (target: string, command: string[], opts: Record<string, unknown>) => {
      await runVerb(runF, { factory: f, target, command, ...opts }, async () => (await import('./run.js')).runRun);
    });

  monitor
    .command('check-config')
    .description('validate a monitor configuration file offline; errors carry line numbers (exit 2 when there are any)')
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
