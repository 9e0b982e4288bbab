// The dashboard's accessibility in Debian chromium: an automated WCAG 2.1 AA audit (axe-core) in
// light and dark with no serious or critical finding (the audit's script is injected with the CSP
// bypassed for the audit only), and updates in place (no <meta refresh>, WCAG 2.2.1): a state
// change reaches the open page without a reload, read out by its live region, under its own CSP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser } from 'playwright-core';
import { waitFor } from '../../helpers/wait.js';
import type { HealthServer } from '../../helpers/monitor-fixtures.js';
import type { MonitorNode } from '../../helpers/monitor-node.js';
import { billingIncident, dashboardRig, type DashboardRig } from '../../helpers/dashboard-rig.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
let up: HealthServer;
let mon: MonitorNode;
let browser: Browser;
let rig: DashboardRig | undefined;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

beforeAll(async () => {
  rig = await dashboardRig({ name: 'a11y', ready: billingIncident });
  ({ up, mon, browser } = rig);
});

afterAll(async () => {
  await rig?.close();
});

describe('dashboard accessibility', () => {
  for (const colorScheme of ['light', 'dark'] as const) {
    it(`passes axe-core's WCAG 2.1 A and AA rules with no serious or critical finding (${colorScheme})`, async () => {
      const context = await browser.newContext({ colorScheme, bypassCSP: true, viewport: { width: 1200, height: 800 } });
      try {
        const page = await context.newPage();
        expect((await page.goto(mon.url + '/'))?.status()).toBe(200);
        await page.addScriptTag({ content: AXE });
        const violations = (await page.evaluate(async () => {
          const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: unknown[] }> } }).axe;
          const r = await axe.run((globalThis as unknown as { document: unknown }).document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
          return r.violations;
        })) as AxeViolation[];
        const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        expect(bad.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')})`)).toEqual([]);
      } finally {
        await context.close();
      }
    });
  }

  it('updates in place without a reload, announcing the new headline, under its own CSP', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => errors.push(`page: ${e.message}`));
    let loads = 0;
    page.on('load', () => loads++);
    // The page's own 30 s timer runs on a clock the test moves; its fetches are real.
    await page.clock.install();
    await page.goto(mon.url + '/');
    const headline = async (): Promise<string> => (await page.locator('main h1').textContent()) ?? '';
    const before = await headline();
    expect(await page.locator('#live').getAttribute('aria-live')).toBe('polite');
    up.mode = 'failing';
    await waitFor(async () => (await mon.get('/api/status')).body.targets.shop.current_incident, 'an incident on shop');
    // The server caches the page for a few seconds: move the page's clock until it shows the change.
    await waitFor(async () => {
      await page.clock.runFor(30_000);
      return (await page.locator('article[data-target="shop"]').getAttribute('data-status')) === 'down' && (await headline()) !== before;
    }, 'the open page showing shop down');
    expect(loads).toBe(1);
    expect(await page.locator('#live').textContent()).toBe(await headline());
    expect(errors).toEqual([]);
    await page.close();
  });
});
