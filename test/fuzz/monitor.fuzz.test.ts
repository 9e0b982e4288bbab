// Fuzzes the health monitor from its own /openapi.json (issue 11): no 5xx, a JSON error body on
// every 4xx, the monitor alive afterwards, and the check history of its targets unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startMonitor, type MonitorNode } from '../helpers/monitor-node.js';
import { healthServer, type HealthServer } from '../helpers/monitor-fixtures.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { operationsOf, type OpenApiDoc } from './openapi-requests.js';
import { fuzz, printReport, settingsFromEnv, type FuzzReport } from './run.js';
import { itKeepsTheContract } from './contract.js';

const TOKEN = 'fuzz-monitor-token-0123456789';
const settings = settingsFromEnv(2_000);

let dir: { path: string; remove(): void };
let health: HealthServer;
let mon: MonitorNode;
let report: FuzzReport;
/** GET /api/status before the run: the targets' check history that no request may change. */
let before: unknown;

beforeAll(async () => {
  dir = tempDir('mkt-fuzz-monitor-');
  health = await healthServer();
  // Checks every hour: the history written at start-up stays still during the run. The limit
  // is raised so requests reach the routes instead of the shared rate limiter's 429.
  const yaml = [
    `token: ${TOKEN}`,
    'rate_limit:\n  requests: 1000000\n  window: 60s',
    'mesh:\n  interval: 1h\n  peers: []',
    'targets:',
    `  api:\n    url: ${health.url}\n    interval: 1h`,
    `  gone:\n    url: ${health.origin}/nothing\n    interval: 1h`,
  ].join('\n');
  mon = await startMonitor(dir.path, yaml);
  await waitFor(async () => {
    const t = (await mon.get('/api/status', TOKEN)).body?.targets;
    return t?.api?.latest && t?.gone?.latest;
  }, 'the first check of each target');
  before = (await mon.get('/api/status', TOKEN)).body;
  const res = await mon.get('/openapi.json', TOKEN);
  expect(res.status).toBe(200);
  const doc = res.body as OpenApiDoc;
  report = await fuzz(
    'monitor',
    mon.url,
    {
      doc,
      ops: operationsOf(doc),
      hints: { target: fc.constantFrom('api', 'gone', 'nothing') },
      credentials: [{ label: 'valid', headers: { authorization: `Bearer ${TOKEN}` } }],
    },
    settings,
    [TOKEN],
  );
  printReport(report, mon.logs);
  // The whole run happens here; the limit only catches a hang, as the other fuzz files' limits do.
}, 3_600_000);

afterAll(async () => {
  await mon?.stop();
  await health?.close();
  dir?.remove();
});

describe('monitor fuzz (seed printed above; replay with MKT_FUZZ_SEED and MKT_FUZZ_ONLY)', () => {
  itKeepsTheContract(settings, () => report);

  it('is still alive, and /openapi.json still needs the token', async () => {
    expect((await mon.get('/api/health', null)).status).toBe(200);
    expect((await mon.get('/openapi.json', TOKEN)).status).toBe(200);
    expect((await mon.get('/openapi.json', null)).status).toBe(401);
  });

  it('leaves the check history written before the run unchanged', async () => {
    expect((await mon.get('/api/status', TOKEN)).body).toEqual(before);
  });
});
