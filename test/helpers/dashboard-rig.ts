// The monitor the dashboard's browser tests look at: `shop` (up) and `billing` (down, so an
// incident opens) checked every 100 ms by a real monitor with the dashboard on, and Debian
// chromium launched by playwright-core. Each test file adds its own config and waits for its own
// state before the browser starts.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { tempDir } from './tmp.js';
import { waitFor } from './wait.js';
import { healthServer, type HealthServer } from './monitor-fixtures.js';
import { startMonitor, type MonitorNode } from './monitor-node.js';

export const CHROMIUM = '/usr/bin/chromium';

export interface DashboardRig {
  up: HealthServer;
  down: HealthServer;
  mon: MonitorNode;
  browser: Browser;
  /** billing's open incident, or undefined/null while it has none. */
  incident(): Promise<unknown>;
  close(): Promise<void>;
}

export interface DashboardRigOptions {
  /** The monitor's `name`. */
  name: string;
  /** YAML lines under `shop:` (indented four spaces), e.g. its routes. */
  shopExtra?: string;
  /** YAML after the targets, e.g. maintenance windows. */
  tail?: string;
  /** Waits for the state the tests need (the rig's `incident` helps), before the browser starts. */
  ready(rig: Omit<DashboardRig, 'browser' | 'close'>): Promise<void>;
}

export async function dashboardRig(opts: DashboardRigOptions): Promise<DashboardRig> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/ensure-test-tools.sh (npm test does)`);
  const dir = tempDir();
  const up = await healthServer();
  const down = await healthServer();
  down.mode = 'failing';
  let mon: MonitorNode | undefined;
  let browser: Browser | undefined;
  const close = async (): Promise<void> => {
    await browser?.close();
    await mon?.stop();
    await up.close();
    await down.close();
    dir.remove();
  };
  try {
    // billing's timeout is set: the default follows its 100 ms interval, and on a loaded machine a
    // check timed out, so an incident's cause read "timed out after 100 ms", not HTTP 500.
    mon = await startMonitor(
      dir.path,
      `name: ${opts.name}\ntoken: mon-token\nrate_limit: { requests: 100000 }\ndashboard: true\n` +
        `targets:\n  shop:\n    label: "Shop <front>"\n    url: ${up.url}\n    interval: 100ms\n    timeout: 2s\n${opts.shopExtra ?? ''}` +
        `  billing:\n    label: Billing\n    url: ${down.url}\n    interval: 100ms\n    timeout: 2s\n${opts.tail ?? ''}`,
    );
    const m = mon;
    const incident = async (): Promise<unknown> => (await m.get('/api/status')).body.targets.billing.current_incident;
    await opts.ready({ up, down, mon: m, incident });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    return { up, down, mon: m, browser, incident, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Waits for billing's incident to open. */
export async function billingIncident(rig: Pick<DashboardRig, 'incident'>): Promise<void> {
  await waitFor(rig.incident, 'an incident on billing');
}
