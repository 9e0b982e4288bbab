// The dashboard page in a real browser (Debian chromium driven by playwright-core): it loads
// from a running monitor without a token, shows each target as the API reports it (90-day bar,
// latency chart, incidents, maintenance windows), raises no console or page errors under its
// CSP, works in light and dark, and leaves screenshots under test-output/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';
import { billingIncident, dashboardRig, type DashboardRig } from '../../helpers/dashboard-rig.js';
import { get, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { DASHBOARD_TTL_MS, acceptsGzip } from '../../../daemon/services/monitor/routes.js';

const outDir = join(import.meta.dirname, '../../../test-output');
let mon: MonitorNode;
let browser: Browser;
let rig: DashboardRig | undefined;

/** `YYYY-MM-DDTHH:MM` in UTC, as a maintenance window's `from`/`to` takes it. */
function minute(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16);
}

beforeAll(async () => {
  // 10:00 UTC two days ahead: the two-hour window never crosses midnight (the notice would show the day).
  const soon = Math.floor(Date.now() / 86_400_000) * 86_400_000 + 2 * 86_400_000 + 10 * 3_600_000;
  rig = await dashboardRig({
    name: 'dash',
    shopExtra: `    routes:\n      - { path: /v1/items, status: 200 }\n      - { path: /admin, status: 200 }\n`,
    tail:
      `maintenance:\n` +
      `  - name: patching\n    title: Kernel patching\n    targets: [shop]\n    timezone: UTC\n    from: 2020-01-01T00:00\n    to: 2099-01-01T00:00\n` +
      `  - name: db-upgrade\n    title: Database upgrade\n    targets: [billing]\n    timezone: UTC\n    from: ${minute(soon)}\n    to: ${minute(soon + 2 * 3_600_000)}\n`,
    // One incident that opened and resolved, then one that stays open: billing lists both.
    async ready(r) {
      await billingIncident(r);
      r.down.mode = 'operational';
      await waitFor(async () => !(await r.incident()), 'the incident on billing resolved');
      r.down.mode = 'failing';
      await waitFor(r.incident, 'a second incident on billing');
    },
  });
  ({ mon, browser } = rig);
});

afterAll(async () => {
  await rig?.close();
});

describe('dashboard', () => {
  it('shows every target with the status the API reports, without a token, self-contained', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    const external: string[] = [];
    const errors: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(mon.url)) external.push(r.url());
    });
    // A CSP violation (a script, an inline handler, an external asset) shows up here.
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => errors.push(`page: ${e.message}`));
    const res = await page.goto(mon.url + '/');
    expect(res?.status()).toBe(200);
    const api = (await mon.get('/api/status')).body.targets;
    const cards = await page.$$eval('article.target', (els) => els.map((e) => ({ name: e.getAttribute('data-target'), status: e.getAttribute('data-status'), title: e.querySelector('h2')?.textContent })));
    expect(cards.map((c) => c.name).sort()).toEqual(Object.keys(api).sort());
    for (const c of cards) expect(c.status).toBe(api[c.name!].latest.status);
    expect(cards.find((c) => c.name === 'shop')!.title).toBe('Shop <front>'); // escaped, not markup
    expect(await page.title()).toMatch(/1 of 2 targets down/);

    // The 90-day bar: 90 cells per target, today last, with its uptime (empty: no counted checks).
    const today = new Date().toISOString().slice(0, 10);
    for (const name of ['shop', 'billing']) {
      const days = page.locator(`article[data-target="${name}"] .days [data-date]`);
      expect(await days.count()).toBe(90);
      expect(await days.last().getAttribute('data-date')).toBe(today);
      expect(await days.last().getAttribute('data-uptime')).not.toBeNull();
      expect(await days.last().getAttribute('title')).toMatch(new RegExp(`^${today}: `));
    }
    // billing fails most checks today; shop's checks today all ran in maintenance
    expect(Number(await page.locator('article[data-target="billing"] .days [data-date]').last().getAttribute('data-uptime'))).toBeLessThan(95);
    expect(await page.locator('article[data-target="billing"] .days [data-date]').last().getAttribute('class')).toBe('low');
    expect(await page.locator('article[data-target="shop"] .days [data-date]').last().getAttribute('class')).toBe('maint');
    expect(await page.locator('article[data-target="shop"] .days [data-date]').last().getAttribute('title')).toBe(`${today}: maintenance only`);

    // The latency chart, with its description for screen readers.
    for (const name of ['shop', 'billing']) {
      const chart = page.locator(`article[data-target="${name}"] svg.latency-chart`);
      expect(await chart.count()).toBe(1);
      expect(await chart.getAttribute('aria-label')).toMatch(/^response time, last 24 hours/);
    }
    // billing answered between its incidents: this hour's mean is the latest point; shop's checks
    // all ran in maintenance, which counts no latency
    expect(await page.locator('article[data-target="billing"] svg.latency-chart circle.latest').count()).toBe(1);
    expect(await page.locator('article[data-target="shop"] svg.latency-chart').getAttribute('aria-label')).toBe('response time, last 24 hours: no data');

    // billing: the open incident up top, and both incidents listed, the resolved one with its duration.
    expect(await page.locator('article[data-target="billing"] .incident').textContent()).toMatch(/Incident since/);
    const incidents = page.locator('article[data-target="billing"] .incidents li');
    expect(await incidents.count()).toBe(api.billing.incidents.length);
    expect(await incidents.first().getAttribute('data-incident-id')).toBe(String(api.billing.current_incident.id));
    expect(await incidents.first().textContent()).toMatch(/ongoing/);
    expect(await incidents.nth(1).textContent()).toMatch(/ · (under 1 s|\d+ s|\d+ min) · HTTP 500$/);

    // shop: under maintenance, blue, with the window's title and end; billing: the next window announced.
    expect(api.shop.maintenance.title).toBe('Kernel patching');
    expect(await page.locator('article[data-target="shop"] .maintenance-notice.active').textContent()).toBe('Under maintenance: Kernel patching until 2099-01-01 00:00 UTC');
    expect(await page.locator('article[data-target="shop"]').getAttribute('class')).toBe('target maintenance');
    expect(await page.locator('article[data-target="billing"] .maintenance-notice.upcoming').textContent()).toMatch(/^Scheduled maintenance: Database upgrade, \d{4}-\d\d-\d\d \d\d:00–\d\d:00 UTC$/);
    expect(await page.locator('.maintenance-summary').textContent()).toBe('1 target under maintenance · 1 with maintenance scheduled in the next 7 days');
    expect(await page.locator('article[data-target="shop"] dl.uptime dd').count()).toBe(4);

    // Route results as the API reports them; times as clock time and age, exact value in datetime.
    expect(api.shop.route_status.find((r: { path: string }) => r.path === '/admin').ok).toBe(false);
    expect(await page.locator('article[data-target="shop"] dd.bad').textContent()).toBe('failing: /admin');
    expect(await page.locator('article[data-target="shop"] footer').textContent()).toMatch(/^checked \d+ s ago, \d\d:\d\d:\d\d UTC · in maintenance$/);
    expect(await page.locator('article[data-target="shop"] footer time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect(external).toEqual([]);
    mkdirSync(outDir, { recursive: true });
    await page.screenshot({ path: join(outDir, 'dashboard.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    // evaluated in the page (this file is compiled without DOM types)
    const bg = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(bg).toBe('rgb(15, 18, 24)');
    await page.screenshot({ path: join(outDir, 'dashboard-dark.png'), fullPage: true });
    expect(statSync(join(outDir, 'dashboard.png')).size).toBeGreaterThan(1000);
    expect(statSync(join(outDir, 'dashboard-dark.png')).size).toBeGreaterThan(1000);
    expect(errors).toEqual([]);
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

  it('is sent gzipped to clients that take it, plain to the others, the same page either way', async () => {
    const raw = (encoding: string): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> =>
      new Promise((resolve, reject) => {
        get(mon.url + '/', { headers: { 'accept-encoding': encoding } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        }).on('error', reject);
      });
    const zipped = await raw('br, gzip;q=0.8');
    const plain = await raw('identity');
    const refused = await raw('gzip;q=0');
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toMatch(/accept-encoding/i);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(gunzipSync(zipped.body).toString()).toBe(plain.body.toString());
    expect(zipped.body.length).toBeLessThan(plain.body.length / 3);
    expect(acceptsGzip('deflate, GZIP')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('gzip; q=0.0')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });

  it('is not served when the dashboard option is off', async () => {
    const other = tempDir();
    const m = await startMonitor(other.path, 'token: t\n');
    expect((await fetch(m.url + '/')).status).toBe(404);
    await m.stop();
    other.remove();
  });
});
