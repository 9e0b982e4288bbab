// Attacks on ping URLs (issue 31 "Attacks"): guessed keys (404 alike, then 429 for every key from
// the guessing address), a 100 MiB body (413 before it is read, the server unharmed), and the key
// kept out of every log line and every view but the target's own status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';
import { startMonitor, type MonitorNode } from '../../helpers/monitor-node.js';

const CONFIG_KEY = 'cfgKey_0123456789abcdefXYZ';
const GUARDED_KEY = 'guardKey-0123456789abcdef';
/** The longest key the configuration takes. */
const LONG_KEY = 'L'.repeat(120) + '_1234567';
const TOTAL = 100 * 1024 * 1024;

const dirs = [tempDir(), tempDir()];
let mon: MonitorNode;
let guarded: MonitorNode;
/** The generated key of `generated` (read from its status). */
let generatedKey: string;

async function hit(m: MonitorNode, path: string, init: RequestInit = {}): Promise<{ status: number; body: { ok?: boolean; error?: string }; headers: Headers }> {
  const res = await fetch(m.url + path, init);
  return { status: res.status, body: (await res.json()) as { ok?: boolean; error?: string }, headers: res.headers };
}

/**
 * POSTs `TOTAL` zero bytes to `url` as fast as the server takes them (with or without a
 * content-length), stopping when the answer comes. Returns the answer and how much was sent by then.
 */
function hugePost(url: string, withLength: boolean): Promise<{ status: number; body: string; sent: number }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
    if (withLength) headers['content-length'] = String(TOTAL);
    const req = request(url, { method: 'POST', headers });
    const chunk = Buffer.alloc(64 * 1024);
    let sent = 0;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const at = sent;
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body, sent: at });
      });
    });
    // The server may close the connection once it has answered; only an error before that counts.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const pump = (): void => {
      while (sent < TOTAL && !answered && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered && !req.destroyed) req.end();
    };
    pump();
  });
}

beforeAll(async () => {
  mon = await startMonitor(
    dirs[0]!.path,
    `name: attacked\ntoken: mon-token\nrate_limit: { requests: 1000000 }\ndashboard: true\nmesh:\n  interval: 1h\n  peers: []\ntargets:\n` +
      `  configured:\n    label: Configured key\n    heartbeat: { period: 1h, grace: 1h, ping_key: ${CONFIG_KEY} }\n    interval: 1h\n` +
      `  generated:\n    label: Generated key\n    heartbeat: { period: 1h, grace: 1h }\n    interval: 1h\n` +
      `  long:\n    heartbeat: { period: 1h, grace: 1h, ping_key: ${LONG_KEY} }\n    interval: 1h\n`,
  );
  guarded = await startMonitor(dirs[1]!.path, `name: guarded\ntoken: mon-token\ntargets:\n  job:\n    heartbeat: { period: 1h, grace: 1h, ping_key: ${GUARDED_KEY} }\n    interval: 1h\n`);
  generatedKey = /\/ping\/([A-Za-z0-9_-]+)$/.exec((await mon.get('/api/status/generated')).body.ping_url as string)![1]!;
}, 60_000);

afterAll(async () => {
  await mon?.stop();
  await guarded?.stop();
  for (const d of dirs) d.remove();
});

describe('guessed keys (issue 31 "a guessed or brute-forced key")', () => {
  it('a key of any length that is not a target\'s is the same 404 as any other', async () => {
    const answers = await Promise.all(['/ping/short', '/ping/' + 'a'.repeat(16), '/ping/' + 'z'.repeat(300), '/ping/' + CONFIG_KEY.slice(0, -1), '/ping/' + CONFIG_KEY + 'x', '/ping/' + CONFIG_KEY.toUpperCase() + '/fail'].map((p) => hit(mon, p)));
    for (const a of answers) expect({ status: a.status, body: a.body }).toEqual({ status: 404, body: answers[0]!.body });
    expect(answers[0]!.body.error).toMatch(/no heartbeat target has this ping URL/);
    // The keys still work (six misses are far below the guard's limit), the longest one too.
    expect((await hit(mon, `/ping/${CONFIG_KEY}`)).status).toBe(200);
    expect(LONG_KEY).toHaveLength(128);
    expect(await hit(mon, `/ping/${LONG_KEY}/0`)).toMatchObject({ status: 200, body: { ok: true, target: 'long', signal: '0' } });
  });

  it('30 unknown-key pings from one address are 404, then every ping from it is 429 with retry-after, a valid key too (no oracle)', async () => {
    const statuses: number[] = [];
    let retry: string | null = null;
    for (let i = 0; i < 40; i++) {
      const r = await hit(guarded, `/ping/guess${String(i).padStart(12, '0')}`);
      statuses.push(r.status);
      if (r.status === 429) {
        retry ??= r.headers.get('retry-after');
        expect(r.body.error).toMatch(/too many pings with unknown keys/);
      }
    }
    expect(statuses).toEqual([...Array<number>(30).fill(404), ...Array<number>(10).fill(429)]);
    expect(Number(retry)).toBeGreaterThanOrEqual(1);
    expect(Number(retry)).toBeLessThanOrEqual(60);
    const valid = await hit(guarded, `/ping/${GUARDED_KEY}`);
    expect(valid.status).toBe(429);
    expect(valid.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await hit(guarded, `/ping/${GUARDED_KEY}/start`, { method: 'POST', body: 'log' })).status).toBe(429);
    // Refused, so not recorded.
    const s = await guarded.get('/api/status/job');
    expect(s.body.heartbeat.last_ping_at).toBeUndefined();
    expect(s.body.heartbeat.last_start_at).toBeUndefined();
    // The API (token-protected) is not the ping guard's business.
    expect((await guarded.get('/api/health', null)).status).toBe(200);
  });
});

describe('a 100 MiB ping body (issue 31 "a 100 MiB ping body (bounded)")', () => {
  it.each([
    ['with a content-length', true],
    ['chunked, without one', false],
  ])('%s: 413 before the body is read, nothing recorded, the server answers after', async (_name, withLength) => {
    const before = (await mon.get('/api/status/configured')).body;
    const r = await hugePost(`${mon.url}/ping/${CONFIG_KEY}/fail`, withLength);
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body).error).toMatch(/over 100 KiB/);
    // Answered long before 100 MiB went out: the server never held the body.
    expect(r.sent).toBeLessThan(TOTAL / 4);
    const after = (await mon.get('/api/status/configured')).body;
    expect(after.heartbeat.last_ping_at).toBe(before.heartbeat.last_ping_at);
    // Signal snapshots only: the target's own state turns may record meanwhile (a flake seen in CI).
    const signals = (st: { recent: { details?: { signal?: string } }[] }): number => st.recent.filter((x) => x.details?.signal !== undefined).length;
    expect(signals(after)).toBe(signals(before));
    expect(after.recent.some((s: { details?: { signal?: string } }) => s.details?.signal === 'fail')).toBe(false);
    expect(await hit(mon, '/api/health')).toMatchObject({ status: 200, body: { status: 'operational' } });
    // A ping just under the limit is still taken.
    expect((await hit(mon, `/ping/${CONFIG_KEY}`, { method: 'POST', body: Buffer.alloc(100 * 1024, 'y') })).status).toBe(200);
  });
});

describe('the key stays secret (issue 31 "The key never appears in a log line")', () => {
  it('is shown only as ping_url in the target\'s own status: not in /api/status, /metrics, the dashboard, the report, /api/peer/status', async () => {
    expect((await mon.get('/api/status/configured')).body.ping_url).toBe(`${mon.url}/ping/${CONFIG_KEY}`);
    expect((await mon.get('/api/status/generated')).body.ping_url).toBe(`${mon.url}/ping/${generatedKey}`);
    expect(generatedKey.length).toBeGreaterThanOrEqual(16);
    // The peer summary lists a target once it has a check: wait for both first turns.
    await waitFor(async () => (await mon.get('/api/status/generated')).body.latest && (await mon.get('/api/status/configured')).body.latest, 'the first turn of each target');
    const views = [
      await mon.get('/api/status'),
      await mon.get('/metrics'),
      await mon.get('/', null),
      await mon.get('/api/peer/status'),
      await mon.get('/api/report/configured'),
      await mon.get('/api/report/generated'),
      await mon.get('/api/trends/configured'),
      await mon.get('/api/badge/generated/status.svg'),
    ];
    for (const v of views) {
      expect(v.status).toBe(200);
      const text = typeof v.body === 'string' ? v.body : JSON.stringify(v.body);
      expect(text).not.toContain(CONFIG_KEY);
      expect(text).not.toContain(generatedKey);
    }
    // The views do show the targets (the check above is not vacuous).
    expect(views[0]!.body.targets.configured).toBeDefined();
    expect(views[2]!.body as string).toContain('Generated key');
    expect(JSON.stringify(views[3]!.body)).toContain('generated');
  });

  it('never appears in a log line: pings, logs, 404s, 413s, 429s and a reload', async () => {
    for (const key of [CONFIG_KEY, generatedKey]) {
      for (const signal of ['', '/start', '/0', '/3', '/fail', '/abc', '/256', '/x/y']) {
        await hit(mon, `/ping/${key}${signal}`).catch(() => undefined);
        await fetch(`${mon.url}/ping/${key}${signal}`, { method: 'POST', body: `log line ${signal}\n` });
      }
      await hugePost(`${mon.url}/ping/${key}`, true);
      await hugePost(`${mon.url}/ping/${key}/start`, false);
    }
    await hit(mon, `/ping/${LONG_KEY}/start`);
    await mon.service.runtime.reload!();
    await guarded.service.runtime.reload!();
    expect((await hit(guarded, `/ping/${GUARDED_KEY}`)).status).toBe(429);
    // The log is not empty and names the target instead.
    const logs = [...mon.logs, ...guarded.logs];
    expect(mon.logs.some((l) => l.includes('"target":"configured"') && l.includes('ping'))).toBe(true);
    expect(logs.some((l) => l.includes('"status":413'))).toBe(true);
    expect(logs.some((l) => l.includes('"status":429'))).toBe(true);
    for (const key of [CONFIG_KEY, generatedKey, GUARDED_KEY, LONG_KEY]) expect(logs.filter((l) => l.includes(key))).toEqual([]);
  });
});

describe('a ping key in the configuration (issue 31 "at least 16 URL-safe characters")', () => {
  it('shorter than 16 characters: check-config and serve exit 2 naming the line', async () => {
    const bad = join(dirs[0]!.path, 'short-key.yaml');
    writeFileSync(bad, 'token: t\ntargets:\n  job:\n    heartbeat:\n      period: 1d\n      ping_key: tooShort123\n');
    const check = fakeIO();
    expect(await run(['monitor', 'check-config', bad], check)).toBe(2);
    expect(check.err()).toContain(`${bad}:6: targets.job.heartbeat.ping_key must be 16-128 URL-safe characters`);
    // The rejected key is not echoed back.
    expect(check.err()).not.toContain('tooShort123');
    const serve = fakeIO({ env: { MKT_LOG_LEVEL: 'silent' } });
    expect(await run(['serve', 'monitor', '--port', '0', '--data-dir', dirs[0]!.path, '--config', bad], serve)).toBe(2);
    expect(serve.err()).toContain(`${bad}:6:`);
    expect(serve.out()).not.toContain('listening on');
  });
});
