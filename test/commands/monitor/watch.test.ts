// `mkt monitor watch` on a terminal (issue 30, item 11): the live view has column headings, and
// NO_COLOR set to anything but the empty string (no-color.org) leaves out every colour.
import { vi } from 'vitest';

// ink's chalk takes its colour level from the process's own stdout, a pipe under the test runner:
// force it, so that a run without NO_COLOR does show colours and the NO_COLOR runs prove something.
// ink also holds every frame back until exit when it believes it runs in CI (is-in-ci reads CI and
// CONTINUOUS_INTEGRATION when ink loads), and CI runs this suite with CI=true: this test stands in
// for a person at a terminal, so it says it is not CI before `watch` loads ink.
vi.hoisted(() => {
  process.env.FORCE_COLOR = '1';
  process.env.CI = 'false';
  process.env.CONTINUOUS_INTEGRATION = 'false';
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { healthServer, type HealthServer } from '../../helpers/monitor-fixtures.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';

const dir = tempDir();
let up: HealthServer;
let mon: MonitorNode;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  up = await healthServer();
  mon = await startMonitor(dir.path, `name: watch\ntoken: mon-token\nrate_limit: { requests: 100000 }\ntargets:\n  api:\n    url: ${up.url}\n    interval: 1s\n    timeout: 10s\n`);
  env = { XDG_CONFIG_HOME: dir.path, MKT_CREDENTIAL_STORE: 'file', MKT_MONITOR_URL: mon.url, MKT_MONITOR_TOKEN: 'mon-token' };
  await waitFor(async () => (await mon.get('/api/status/api')).body.latest, 'the first check');
});
afterAll(async () => {
  await mon.stop();
  await up.close();
  dir.remove();
});

/** A colour or weight escape (SGR): ink's cursor movements are other escapes and stay. */
// eslint-disable-next-line no-control-regex -- the escape character is what this finds
const SGR = /\u001b\[(?:1|2|22|3\d|39|9\d)m/;
/** Every escape sequence, to read the text a terminal would show. */
// eslint-disable-next-line no-control-regex -- the escape character is what this finds
const ESCAPES = /\u001b\[[0-9;?]*[A-Za-z]/g;

/** Runs `mkt monitor watch` on a fake terminal until the row of `api` is drawn, then presses q. */
async function watchOnTerminal(extraEnv: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  const io = fakeIO({ env: { ...env, ...extraEnv }, tty: true });
  const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => stdin, ref: () => stdin, unref: () => stdin });
  io.stdin = stdin;
  const done = run(['monitor', 'watch', '--interval', '0.5'], io);
  // Any status will do (a loaded machine may see the target degraded): the row is what is drawn.
  await waitFor(async () => /^\s*api\s+[a-z_]+\s/m.test(io.out().replace(ESCAPES, '')), 'the row of api', 90_000);
  stdin.write('q');
  return { code: await done, out: io.out() };
}

describe('mkt monitor watch on a terminal', () => {
  it('draws column headings above the rows', async () => {
    const r = await watchOnTerminal({ NO_COLOR: '1' });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/TARGET\s+STATUS\s+UPTIME 24H\s+P50\s+NOTE/);
  });

  it('colours the status, unless NO_COLOR is set to a non-empty value', async () => {
    expect((await watchOnTerminal({})).out).toMatch(SGR);
    // no-color.org: an empty NO_COLOR does not count as set.
    expect((await watchOnTerminal({ NO_COLOR: '' })).out).toMatch(SGR);
    const plain = await watchOnTerminal({ NO_COLOR: '1' });
    expect(plain.out).not.toMatch(SGR);
  });
});
