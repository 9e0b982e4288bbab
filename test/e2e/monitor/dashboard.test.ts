// The dashboard page in a real browser (Debian chromium driven by playwright-core): it loads
// from a running monitor without a token, shows each target as the API reports it, works in
// light and dark, and leaves a screenshot under test-output/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { healthServer, type HealthServer } from '../../helpers/monitor-fixtures.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';
import { DASHBOARD_TTL_MS } from '../../../daemon/services/monitor/routes.js';

const CHROMIUM = '/usr/bin/chromium';
const outDir = join(import.meta.dirname, '../../../test-output');
const dir = tempDir();
let up: HealthServer;
let down: HealthServer;
let mon: MonitorNode;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/ensure-test-tools.sh (npm test does)`);
  up = await healthServer();
  down = await healthServer();
  down.mode = 'failing';
  mon = await startMonitor(dir.path, `name: dash\ntoken: mon-token\nrate_limit: { requests: 100000 }\ndashboard: true\ntargets:\n  shop:\n    label: "Shop <front>"\n    url: ${up.url}\n    interval: 100ms\n    timeout: 2s\n    routes:\n      - { path: /v1/items, status: 200 }\n      - { path: /admin, status: 200 }\n  billing:\n    label: Billing\n    url: ${down.url}\n    interval: 100ms\n`);
  await waitFor(async () => (await mon.get('/api/status')).body.targets.billing.current_incident, 'an incident on billing');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
});

afterAll(async () => {
  await browser?.close();
  await mon?.stop();
  await up?.close();
  await down?.close();
  dir.remove();
});

describe('dashboard', () => {
  it('shows every target with the status the API reports, without a token, self-contained', async () => {
    const page = await browser.newPage();
    const external: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(mon.url)) external.push(r.url());
    });
    const res = await page.goto(mon.url + '/');
    expect(res?.status()).toBe(200);
    const api = (await mon.get('/api/status')).body.targets;
    const cards = await page.$$eval('article.target', (els) => els.map((e) => ({ name: e.getAttribute('data-target'), status: e.getAttribute('data-status'), title: e.querySelector('h2')?.textContent })));
    expect(cards.map((c) => c.name).sort()).toEqual(Object.keys(api).sort());
    for (const c of cards) expect(c.status).toBe(api[c.name!].latest.status);
    expect(cards.find((c) => c.name === 'shop')!.title).toBe('Shop <front>'); // escaped, not markup
    expect(await page.title()).toMatch(/1 of 2 targets down/);
    expect(await page.locator('article[data-target="billing"] .incident').textContent()).toMatch(/Incident since/);
    expect(await page.locator('article[data-target="shop"] svg.spark path').count()).toBe(1);
    // Route results as the API reports them; times as clock time and age, exact value in datetime.
    expect(api.shop.route_status.find((r: { path: string }) => r.path === '/admin').ok).toBe(false);
    expect(await page.locator('article[data-target="shop"] dd.bad').textContent()).toBe('failing: /admin');
    expect(await page.locator('article[data-target="shop"] footer').textContent()).toMatch(/^checked \d+ s ago, \d\d:\d\d:\d\d UTC$/);
    expect(await page.locator('article[data-target="shop"] footer time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect(external).toEqual([]);
    mkdirSync(outDir, { recursive: true });
    await page.screenshot({ path: join(outDir, 'dashboard-light.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    // evaluated in the page (this file is compiled without DOM types)
    const bg = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(bg).toBe('rgb(15, 18, 24)');
    await page.screenshot({ path: join(outDir, 'dashboard-dark.png'), fullPage: true });
    expect(statSync(join(outDir, 'dashboard-dark.png')).size).toBeGreaterThan(1000);
    await page.close();
  });

  it('one rendering serves every request for a few seconds (public and unlimited, so it must be cheap)', async () => {
    await new Promise((r) => setTimeout(r, DASHBOARD_TTL_MS + 50)); // whatever earlier tests rendered has expired
    const first = await (await fetch(mon.url + '/')).text();
    await new Promise((r) => setTimeout(r, 300)); // three more checks of each target meanwhile
    const burst = await Promise.all(Array.from({ length: 20 }, async () => (await fetch(mon.url + '/')).text()));
    for (const b of burst) expect(b).toBe(first);
    expect(first).toMatch(/updated <time datetime="/);
  });

  it('is not served when the dashboard option is off', async () => {
    const other = tempDir();
    const m = await startMonitor(other.path, 'token: t\n');
    expect((await fetch(m.url + '/')).status).toBe(404);
    await m.stop();
    other.remove();
  });
});
