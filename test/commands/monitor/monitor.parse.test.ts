// Parse-level tests of `mkt monitor` (gh's runF): each flag reaches its verb's options
// (StatusOptions, ReportOptions, ...) under its name, defaults and choices hold, usage errors exit 2.
import { describe, expect, it } from 'vitest';
import type { checkConfigRun } from '../../../commands/monitor/check-config.js';
import type { meshRun } from '../../../commands/monitor/mesh.js';
import type { reportRun } from '../../../commands/monitor/report.js';
import type { statusRun } from '../../../commands/monitor/status.js';
import type { trendsRun } from '../../../commands/monitor/trends.js';
import type { watchRun } from '../../../commands/monitor/watch.js';
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

  it('watch: --interval defaults to 5', async () => {
    await cli.verb<typeof watchRun>('monitor watch', [], { interval: '5' });
    await cli.verb<typeof watchRun>('monitor watch', ['--interval', '2', '--server', 'u', '--json'], { interval: '2', server: 'u', json: true });
  });

  it('check-config: <file>, --json', async () => {
    await cli.verb<typeof checkConfigRun>('monitor check-config', ['monitor.yaml', '--json'], { file: 'monitor.yaml', json: true });
    await cli.usage(['monitor', 'check-config'], /missing required argument 'file'/);
    await cli.usage(['monitor', 'check-config', 'f', '--server', 'u'], /unknown option '--server'/);
  });

  it('every verb of mkt monitor has its parse case', () => {
    expect(cli.covered()).toEqual(leafPaths('monitor'));
  });
});
