// A real monitor's history features over HTTP: uptime over 24 h to 365 d in every status, the
// SLA report route and its errors, maintenance shown in the status and counted apart, badges
// public or behind the token as configured (public ones outside the rate limit), and figures
// that survive a restart on the same data directory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { healthServer, type HealthServer } from '../../helpers/monitor-fixtures.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';

const dir = tempDir();
let up: HealthServer;
let mon: MonitorNode;

// The timeout is explicit: by default it is the interval (100 ms), which a loaded machine's first
// check can miss, and every figure below expects a target that is up.
const config = (url: string, badges: string): string =>
  `name: hist\ntoken: mon-token\nrate_limit: { requests: 40 }\nbadges: ${badges}\nmaintenance:\n  - name: upgrade\n    title: Database upgrade\n    targets: [db]\n    from: 2020-01-01T00:00\n    to: 2099-01-01T00:00\ntargets:\n  api:\n    label: Public API\n    url: ${url}\n    interval: 100ms\n    timeout: 2s\n  db:\n    url: ${url}\n    interval: 100ms\n    timeout: 2s\n`;

beforeAll(async () => {
  up = await healthServer();
  mon = await startMonitor(dir.path, config(up.url, 'public'));
  await waitFor(async () => (await mon.get('/api/status/db')).body.recent?.length >= 3 && (await mon.get('/api/status/api')).body.recent?.length >= 3, 'three checks each');
});

afterAll(async () => {
  await mon?.stop();
  await up?.close();
  dir.remove();
});

describe('monitor history over HTTP', () => {
  it('every status carries uptime over 24 h, 7 d, 30 d, 90 d and 365 d; maintenance is shown and counted apart', async () => {
    const api = (await mon.get('/api/status/api')).body;
    for (const w of ['24h', '7d', '30d', '90d', '365d']) expect(api[`uptime_${w}`], w).toBe(100);
    expect(api.maintenance).toBeUndefined();
    const db = (await mon.get('/api/status/db')).body;
    expect(db.maintenance).toMatchObject({ name: 'upgrade', title: 'Database upgrade', start: '2020-01-01T00:00:00.000Z', end: '2099-01-01T00:00:00.000Z' });
    expect(db.recent[0].maintenance).toBe(true);
    // Every check of db is in maintenance: no uptime at all, rather than a perfect one.
    expect(db.uptime_24h).toBeNull();
    expect(db.latency_24h).toBeUndefined();
  });

  it('serves the SLA report, and 400, 404 and 401 with readable errors', async () => {
    const r = await mon.get('/api/report/api?from=' + encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString()));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ target: 'api', label: 'Public API', uptime: 100, downtime_minutes: 0, incident_count: 0, incidents: [] });
    expect(r.body.checks.counted).toBeGreaterThan(0);
    expect(r.body.latency.count).toBeGreaterThan(0);
    const db = (await mon.get('/api/report/db')).body;
    expect(db.checks.counted).toBe(0);
    expect(db.checks.maintenance).toBeGreaterThan(0);
    expect(db.uptime).toBeNull();
    expect(db.maintenance_windows).toHaveLength(1);
    expect(await mon.get('/api/report/api?from=last-week')).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^from must be a date/) } });
    expect(await mon.get('/api/report/api?from=2020-01-01&to=2026-01-01')).toMatchObject({ status: 400, body: { error: expect.stringMatching(/at most 400 days/) } });
    expect(await mon.get('/api/report/ghost')).toMatchObject({ status: 404, body: { error: 'unknown target: ghost' } });
    expect((await mon.get('/api/report/api', null)).status).toBe(401);
  });

  it('public badges need no token and stay outside the rate limit; SVG, escaped, cacheable', async () => {
    for (let i = 0; i < 45; i++) {
      const b = await mon.get(`/api/badge/api/uptime.svg?window=${['24h', '30d', '365d'][i % 3]}`, null);
      expect(b.status).toBe(200);
    }
    const s = await mon.get('/api/badge/api/status.svg?label=' + encodeURIComponent('<b>api</b>'), null);
    expect(s.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(s.headers.get('cache-control')).toBe('public, max-age=60');
    expect(s.body).toContain('aria-label="&#60;b&#62;api&#60;/b&#62;: operational"');
    expect((await mon.get('/api/badge/db/status.svg', null)).body).toContain('>maintenance<');
    expect(await mon.get('/api/badge/api/uptime.svg?window=2y', null)).toMatchObject({ status: 400 });
    expect((await mon.get('/api/badge/ghost/status.svg', null)).status).toBe(404);
    // The API's own allowance is untouched by the 45 badges above.
    expect((await mon.get('/api/status/api')).status).toBe(200);
  });

  it('keeps its figures across a restart; with badges: token the badges need the token', async () => {
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const before = (await mon.get(`/api/report/api?from=${yesterday}`)).body.checks.counted as number;
    await mon.stop();
    mon = await startMonitor(dir.path, config(up.url, 'token'));
    const after = (await mon.get(`/api/report/api?from=${yesterday}`)).body.checks.counted as number;
    expect(after).toBeGreaterThanOrEqual(before);
    expect((await mon.get('/api/status/api')).body.uptime_365d).toBe(100);
    expect((await mon.get('/api/badge/api/status.svg', null)).status).toBe(401);
    const b = await mon.get('/api/badge/api/status.svg');
    expect(b.status).toBe(200);
    expect(b.headers.get('cache-control')).toBe('private, no-store');
  });
});
