// Parse-level tests of `mkt monitor` (gh's runF): each flag reaches its verb's options
// (StatusOptions, ReportOptions, ...) under its name, defaults and choices hold, usage errors exit 2.
import { describe, expect, it } from 'vitest';
import type { checkConfigRun } from '../../../commands/monitor/check-config.js';
import type { detailRun } from '../../../commands/monitor/detail-verb.js';
import type { pingRun } from '../../../commands/monitor/ping.js';
import type { pingUrlRun } from '../../../commands/monitor/ping-url.js';
import type { runRun } from '../../../commands/monitor/run.js';
import type { meshRun } from '../../../commands/monitor/mesh.js';
import type { alertsRun } from '../../../commands/monitor/alerts.js';
import type { reportRun } from '../../../commands/monitor/report.js';
import type { statusRun } from '../../../commands/monitor/status.js';
import type { trendsRun } from '../../../commands/monitor/trends.js';
import type { watchRun } from '../../../commands/monitor/watch.js';
import type { silenceAddRun, silenceListRun, silenceRmRun } from '../../../commands/monitor/silence.js';
import { leafPaths, parseSuite } from '../../helpers/parse-cli.js';

const cli = parseSuite('monitor');

describe('mkt monitor: parsing', () => {
  it('status: [target], --fail-on from its choices', async () => {
    await cli.verb<typeof statusRun>('monitor status', [], { target: undefined });
    await cli.verb<typeof statusRun>('monitor status', ['api', '--fail-on', 'degraded', '--server', 'u', '--json'], { target: 'api', failOn: 'degraded', server: 'u', json: true });
    await cli.verb<typeof statusRun>('monitor status', ['--fail-on', 'down'], { target: undefined, failOn: 'down' });
    await cli.usage(['monitor', 'status', '--fail-on', 'up'], /argument 'up' is invalid\. Allowed choices are degraded, down\./);
  });

  it('trends: <target>, --hours, --bucket', async () => {
    await cli.verb<typeof trendsRun>('monitor trends', ['api', '--hours', '168', '--bucket', '360', '--server', 'u', '--json'], { target: 'api', hours: '168', bucket: '360', server: 'u', json: true });
    await cli.usage(['monitor', 'trends'], /missing required argument 'target'/);
  });

  it('report: [targets...], --from, --to, --format (default table, choices)', async () => {
    await cli.verb<typeof reportRun>('monitor report', [], { targets: [], format: 'table' });
    await cli.verb<typeof reportRun>('monitor report', ['api', 'db', '--from', '2026-10-01', '--to', '2026-11-01', '--format', 'csv', '--server', 'u', '--json'], {
      targets: ['api', 'db'],
      from: '2026-10-01',
      to: '2026-11-01',
      format: 'csv',
      server: 'u',
      json: true,
    });
    await cli.usage(['monitor', 'report', '--format', 'xml'], /argument 'xml' is invalid\. Allowed choices are table, csv, json\./);
  });

  it('mesh: --server and --json', async () => {
    await cli.verb<typeof meshRun>('monitor mesh', ['--server', 'u', '--json'], { server: 'u', json: true });
  });

  it('alerts: --server and --json', async () => {
    await cli.verb<typeof alertsRun>('monitor alerts', ['--server', 'u', '--json'], { server: 'u', json: true });
  });

  it('watch: --interval defaults to 5', async () => {
    await cli.verb<typeof watchRun>('monitor watch', [], { interval: '5' });
    await cli.verb<typeof watchRun>('monitor watch', ['--interval', '2', '--server', 'u', '--json'], { interval: '2', server: 'u', json: true });
  });

  it('check-config: <file>, --json', async () => {
    await cli.verb<typeof checkConfigRun>('monitor check-config', ['monitor.yaml', '--json'], { file: 'monitor.yaml', json: true });
    await cli.usage(['monitor', 'check-config'], /missing required argument 'file'/);
    await cli.usage(['monitor', 'check-config', 'f', '--server', 'u'], /unknown option '--server'/);
  });

  it('detail: <target>, --server, --json', async () => {
    await cli.verb<typeof detailRun>('monitor detail', ['backup', '--server', 'u', '--json'], { target: 'backup', server: 'u', json: true });
    await cli.usage(['monitor', 'detail'], /missing required argument 'target'/);
  });

  it('ping-url: <target>, --server, --json', async () => {
    await cli.verb<typeof pingUrlRun>('monitor ping-url', ['backup'], { target: 'backup' });
    await cli.verb<typeof pingUrlRun>('monitor ping-url', ['backup', '--server', 'u', '--json'], { target: 'backup', server: 'u', json: true });
    await cli.usage(['monitor', 'ping-url'], /missing required argument 'target'/);
  });

  it('ping: one of --start, --fail, --exit-code 0-255; --log; --ping-url or --server', async () => {
    await cli.verb<typeof pingRun>('monitor ping', ['backup'], { target: 'backup' });
    await cli.verb<typeof pingRun>('monitor ping', ['backup', '--start'], { target: 'backup', start: true });
    await cli.verb<typeof pingRun>('monitor ping', ['backup', '--fail', '--log', '-'], { target: 'backup', fail: true, log: '-' });
    await cli.verb<typeof pingRun>('monitor ping', ['backup', '--exit-code', '0'], { target: 'backup', exitCode: 0 });
    await cli.verb<typeof pingRun>('monitor ping', ['backup', '--exit-code', '255', '--log', 'run.log', '--ping-url', 'http://h/ping/k', '--json'], { target: 'backup', exitCode: 255, log: 'run.log', pingUrl: 'http://h/ping/k', json: true });
    await cli.verb<typeof pingRun>('monitor ping', ['backup', '--server', 'u'], { target: 'backup', server: 'u' });
    await cli.usage(['monitor', 'ping', 'backup', '--start', '--fail'], /option '--start' cannot be used with option '--fail'/);
    await cli.usage(['monitor', 'ping', 'backup', '--fail', '--exit-code', '1'], /option '--fail' cannot be used with option '--exit-code <n>'/);
    await cli.usage(['monitor', 'ping', 'backup', '--exit-code', '3', '--start'], /option '--start' cannot be used with option '--exit-code <n>'/);
    for (const bad of ['256', '-1', '1.5', 'x', '']) await cli.usage(['monitor', 'ping', 'backup', '--exit-code', bad], /--exit-code <n>' argument '.*' is invalid\. must be an integer from 0 to 255/);
    await cli.usage(['monitor', 'ping', 'backup', '--ping-url', 'http://h/ping/k', '--server', 'u'], /option '--ping-url <url>' cannot be used with option '--server <url>'/);
    await cli.usage(['monitor', 'ping'], /missing required argument 'target'/);
  });

  it('run: <target> -- <command...> (its own flags stay its own), --ping-url or --server', async () => {
    await cli.verb<typeof runRun>('monitor run', ['backup', '--', 'tar', '-czf', 'x.tgz', '--json', '/srv'], { target: 'backup', command: ['tar', '-czf', 'x.tgz', '--json', '/srv'] });
    await cli.verb<typeof runRun>('monitor run', ['backup', '--ping-url', 'http://h/ping/k', '--', 'true'], { target: 'backup', command: ['true'], pingUrl: 'http://h/ping/k' });
    await cli.verb<typeof runRun>('monitor run', ['backup', '--server', 'u', '--', 'sh', '-c', 'exit 3'], { target: 'backup', command: ['sh', '-c', 'exit 3'], server: 'u' });
    await cli.usage(['monitor', 'run', 'backup'], /missing required argument 'command'/);
    await cli.usage(['monitor', 'run', 'backup', '--ping-url', 'http://h/ping/k', '--server', 'u', '--', 'true'], /option '--ping-url <url>' cannot be used with option '--server <url>'/);
    await cli.usage(['monitor', 'run', 'backup', '--json', '--', 'true'], /unknown option '--json'/);
  });

  it('silence add [target] --all --for --reason, list, rm <id>', async () => {
    await cli.verb<typeof silenceAddRun>('monitor silence add', ['api', '--for', '2h', '--reason', 'deploy', '--server', 'u', '--json'], { target: 'api', for: '2h', reason: 'deploy', server: 'u', json: true });
    await cli.verb<typeof silenceAddRun>('monitor silence add', ['--all', '--for', '30m', '--reason', 'network work'], { target: undefined, all: true, for: '30m', reason: 'network work' });
    await cli.usage(['monitor', 'silence', 'add', 'api', '--reason', 'r'], /required option '--for <duration>' not specified/);
    await cli.usage(['monitor', 'silence', 'add', 'api', '--for', '1h'], /required option '--reason <text>' not specified/);
    await cli.verb<typeof silenceListRun>('monitor silence list', ['--json'], { json: true });
    await cli.verb<typeof silenceRmRun>('monitor silence rm', ['sil_k3xq7hd2m4ab', '--server', 'u'], { id: 'sil_k3xq7hd2m4ab', server: 'u' });
    await cli.usage(['monitor', 'silence', 'rm'], /missing required argument 'id'/);
  });

  it('every verb of mkt monitor has its parse case', () => {
    expect(cli.covered()).toEqual(leafPaths('monitor'));
  });
});
