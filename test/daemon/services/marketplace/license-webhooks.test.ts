// Webhook delivery of license events (docs/license-events.md), to a real receiver on 127.0.0.1
// that verifies Stripe-style signatures in constant time: signed JSON with the event id, retried
// after a 500 with backoff, in order per key (a later event waits for the earlier one, other keys
// do not), redirects not followed, a hung receiver cut at the timeout, given up after the give-up
// age (logged by host only, never the secret), surviving a restart mid-retry on one SQLite file,
// and a replayed delivery told apart by its id and its signed time.
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { SqlLicenseAuditStore, newWebhookSecret, recordLicenseEvent } from '../../../../src/store/license-events-sql.js';
import { SqliteDatabase } from '../../../../src/store/sql-sqlite.js';
import type { SqlDatabase } from '../../../../src/store/sql.js';
import type { LicenseEventInput } from '../../../../src/store/license-events.js';
import { WebhookDelivery, retryDelayMs, signatureHeader, type WebhookDeliveryOptions } from '../../../../daemon/services/marketplace/license/webhooks.js';
import { systemClock } from '../../../../src/util/clock.js';
import { describeEngines } from '../../../helpers/engines.js';
import { captureLog } from '../../../helpers/log-capture.js';
import { startReceiver, verifyDelivery, type Receiver } from '../../../helpers/webhook-receiver.js';
import { tempDir } from '../../../helpers/tmp.js';
import { waitFor } from '../../../helpers/wait.js';
import { startLicenseServer } from '../../../helpers/license-server.js';
import { adminCli } from '../../../helpers/admin-cli.js';
import { freshDatabaseUrl } from '../../../helpers/pg.js';
import { PgDatabase } from '../../../../src/store/sql-pg.js';

const T0 = Date.UTC(2026, 10, 1, 10, 0, 0);
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

function ev(type: LicenseEventInput['type'], key_id: string, extra: Partial<LicenseEventInput> = {}): LicenseEventInput {
  return { type, key_id, item_id: 'font-pro', at_ms: T0, ...extra };
}

interface Rig {
  audit: SqlLicenseAuditStore;
  receiver: Receiver;
  secret: string;
  delivery: WebhookDelivery;
  log(): string;
}

async function rig(db: SqlDatabase, over: Partial<WebhookDeliveryOptions> = {}): Promise<Rig> {
  const audit = await SqlLicenseAuditStore.open(db);
  const secret = newWebhookSecret();
  const receiver = await startReceiver(() => secret);
  cleanup.push(() => receiver.close());
  await audit.addWebhook({ id: 'wh_test', url: receiver.url, events: ['license.*'], secret, created_at: '2026-11-01T00:00:00.000Z' });
  const { logger, text } = captureLog();
  const delivery = new WebhookDelivery({ audit, clock: systemClock, logger, pollMs: 20, retryBaseMs: 50, retryCapMs: 400, ...over });
  cleanup.push(() => delivery.stop());
  return { audit, receiver, secret, delivery, log: text };
}

describe('webhook signing', () => {
  it('signs "t.body" with HMAC-SHA256 (Stripe scheme) and the backoff doubles from its base up to its cap', () => {
    // Computed apart from node: printf '1700000000.{}' | openssl dgst -sha256 -hmac whsec_test
    expect(signatureHeader('whsec_test', 1_700_000_000, '{}')).toBe('t=1700000000,v1=35495024f4ef3f94e5a93e22221544c4b75e9a42300cd965ab81cb85cd994e91');
    expect(retryDelayMs(1, 10_000, 3_600_000)).toBe(10_000);
    expect(retryDelayMs(2, 10_000, 3_600_000)).toBe(20_000);
    expect(retryDelayMs(5, 10_000, 3_600_000)).toBe(160_000);
    expect(retryDelayMs(40, 10_000, 3_600_000)).toBe(3_600_000);
  });
});

describeEngines('license webhook delivery', (open) => {
  it('POSTs signed JSON the receiver verifies; a replay is told apart by its id, and a stale one by its signed time', async () => {
    const r = await rig(await open());
    await recordLicenseEvent(r.audit.sql, ev('license.activated', 'lk_a', { machine_id: 'm1', data: { seats: 1 } }));
    r.delivery.start();
    await waitFor(async () => r.receiver.accepted.length === 1, 'the delivery');
    const got = r.receiver.accepted[0]!;
    expect(got).toMatchObject({ type: 'license.activated', created_at: '2026-11-01T10:00:00.000Z', data: { key_id: 'lk_a', item_id: 'font-pro', machine_id: 'm1', code: null, count: 1, seats: 1 } });
    expect(got.id).toMatch(/^evt_/);
    expect(got.raw.headers['mkt-event-id']).toBe(got.id);
    expect(got.raw.headers['mkt-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    await waitFor(async () => (await r.audit.pendingDeliveries()) === 0, 'the outbox row to go');
    // The same bytes again: the signature holds, the id was seen.
    expect(await r.receiver.replay(got.raw)).toBe(200);
    expect(r.receiver.log.at(-1)).toBe('replayed');
    // Later than the tolerance: refused for its time, whatever the id.
    r.receiver.skewSeconds = 600;
    expect(await r.receiver.replay(got.raw)).toBe(400);
    expect(r.receiver.log.at(-1)).toBe('stale');
    // A body changed under the signature, or another secret, does not verify.
    expect(verifyDelivery(r.secret, got.raw.body.replace('lk_a', 'lk_b'), got.raw.headers, Math.floor(Date.now() / 1000), new Set())).toMatchObject({ ok: false, reason: 'bad signature' });
    expect(verifyDelivery(newWebhookSecret(), got.raw.body, got.raw.headers, Math.floor(Date.now() / 1000), new Set())).toMatchObject({ ok: false, reason: 'bad signature' });
    expect(r.receiver.accepted).toHaveLength(1);
  });

  it('retries after a 500 with backoff, and keeps one key in order while another key goes ahead', async () => {
    const r = await rig(await open());
    r.receiver.failNext(2);
    for (const [type, key] of [
      ['license.activated', 'lk_a'],
      ['license.suspended', 'lk_a'],
      ['license.reinstated', 'lk_a'],
    ] as const) {
      await recordLicenseEvent(r.audit.sql, ev(type, key));
    }
    r.delivery.start();
    await waitFor(async () => r.receiver.accepted.length === 3, 'three deliveries');
    expect(r.receiver.log.slice(0, 2)).toEqual(['answered 500', 'answered 500']);
    expect(r.receiver.accepted.map((d) => d.type)).toEqual(['license.activated', 'license.suspended', 'license.reinstated']);
    // Now lk_a's head fails for a while; lk_b's events pass it, lk_a's next waits behind it.
    r.receiver.accepted.length = 0;
    r.receiver.failNext(1, 503);
    await recordLicenseEvent(r.audit.sql, ev('license.revoked', 'lk_a'));
    await waitFor(async () => r.receiver.log.at(-1) === 'answered 503', 'the failure');
    await recordLicenseEvent(r.audit.sql, ev('license.activated', 'lk_b'));
    await recordLicenseEvent(r.audit.sql, ev('license.deactivated', 'lk_a'));
    await waitFor(async () => r.receiver.accepted.length === 3, 'three more deliveries');
    const order = r.receiver.accepted.map((d) => `${String(d.data.key_id)} ${d.type}`);
    expect(order.filter((o) => o.startsWith('lk_a'))).toEqual(['lk_a license.revoked', 'lk_a license.deactivated']);
    expect(order).toContain('lk_b license.activated');
    expect(r.log()).not.toContain(r.secret);
  });

  it('does not follow a redirect, cuts a hung receiver at the timeout, and gives up after the give-up age, logging the host only', async () => {
    const r = await rig(await open(), { sendTimeoutMs: 300, giveUpAfterMs: 1500 });
    r.receiver.redirectNext(1);
    r.receiver.hangNext(1);
    await recordLicenseEvent(r.audit.sql, ev('license.activated', 'lk_a'));
    r.delivery.start();
    await waitFor(async () => r.receiver.accepted.length === 1, 'the delivery after a redirect and a hang');
    // The receiver hangs first, then redirects (its scripted order).
    expect(r.receiver.log).toEqual(['hung', 'redirected', 'accepted']);
    expect(r.receiver.elsewhere).toBe(0);
    // Always 500: tried with backoff until the row is older than the give-up age, then dropped.
    r.receiver.failNext(1_000);
    await recordLicenseEvent(r.audit.sql, ev('license.revoked', 'lk_a'));
    await waitFor(async () => (await r.audit.pendingDeliveries()) === 0, 'giving up', 15_000);
    expect(r.receiver.log.filter((l) => l === 'answered 500').length).toBeGreaterThanOrEqual(3);
    await waitFor(async () => r.log().includes('license webhook delivery given up'), 'the give-up line');
    const line = r.log().split('\n').find((l) => l.includes('given up'))!;
    expect(JSON.parse(line)).toMatchObject({ host: new URL(r.receiver.url).host, webhook_id: 'wh_test', last_error: 'HTTP 500' });
    expect(r.log()).not.toContain('/hooks/mkt');
    expect(r.log()).not.toContain(r.secret);
  });
});

describe('license webhook delivery across a restart', () => {
  it('a row failing when the server stops is delivered by the next one on the same SQLite file; a crashed claim is sent again', async () => {
    const dir = tempDir('mkt-webhooks-');
    cleanup.push(() => dir.remove());
    const file = join(dir.path, 'marketplace.db');
    let db = new SqliteDatabase(file);
    const first = await rig(db);
    first.receiver.failNext(1_000);
    await recordLicenseEvent(db, ev('license.activated', 'lk_a'));
    await recordLicenseEvent(db, ev('license.suspended', 'lk_a'));
    first.delivery.start();
    await waitFor(async () => first.receiver.log.length >= 2, 'two failed attempts');
    await first.delivery.stop();
    await db.close();
    // A claim its instance never finished (it died mid-send) lapses and is taken again.
    db = new SqliteDatabase(file);
    cleanup.push(() => db.close());
    const audit = await SqlLicenseAuditStore.open(db);
    await db.run('UPDATE license_webhook_outbox SET claimed_until_ms = 1, next_attempt_ms = 0');
    expect(await audit.pendingDeliveries()).toBe(2);
    first.receiver.failNext(0);
    const { logger } = captureLog();
    const second = new WebhookDelivery({ audit, clock: systemClock, logger, pollMs: 20, retryBaseMs: 50 });
    cleanup.push(() => second.stop());
    second.start();
    await waitFor(async () => first.receiver.accepted.length === 2, 'both events after the restart');
    expect(first.receiver.accepted.map((d) => d.type)).toEqual(['license.activated', 'license.suspended']);
    await waitFor(async () => (await audit.pendingDeliveries()) === 0, 'an empty outbox');
  });
});

describe('license webhook delivery across a server restart', () => {
  it('the marketplace server retrying a revocation stops; the next server on the same data dir delivers it', async () => {
    const dir = tempDir('mkt-webhooks-server-');
    cleanup.push(() => dir.remove());
    let secret = '';
    const receiver = await startReceiver(() => secret);
    cleanup.push(() => receiver.close());
    receiver.failNext(1_000);
    const flags = { licenseWebhookPollMs: 20, licenseWebhookRetryBaseMs: 50 };
    const first = await startLicenseServer({ dataDir: dir.path, databaseUrl: undefined, startJobs: true, flags });
    const mkt = adminCli(dir.path, dir.path);
    const added = await mkt(['webhook', 'add', receiver.url, '--events', 'license.revoked']);
    expect(added.code, added.err).toBe(0);
    secret = added.out.trim();
    await first.admin.createItem({ id: 'font-pro', name: 'Font Pro', licenseTemplate: null, maxActivations: 3, verification: false });
    const [k] = await first.admin.issueKeys({ itemId: 'font-pro', count: 1, expiresAt: null, licensee: null });
    await first.admin.revoke(k!.id);
    await waitFor(async () => receiver.log.filter((l) => l === 'answered 500').length >= 2, 'two failed attempts');
    await first.close();
    const tries = receiver.log.length;
    receiver.failNext(0);
    const second = await startLicenseServer({ dataDir: dir.path, databaseUrl: undefined, startJobs: true, flags });
    cleanup.push(() => second.close());
    await waitFor(async () => receiver.accepted.length === 1, 'the revocation after the restart');
    expect(receiver.log.length).toBeGreaterThan(tries);
    expect(receiver.accepted[0]).toMatchObject({ type: 'license.revoked', data: { key_id: k!.id } });
    expect(first.log() + second.log()).not.toContain(secret);
  });
});

describe('license webhook delivery from three instances on one PostgreSQL database', () => {
  it('each event is sent once, and each key\'s events arrive in order, while the instances race for the outbox', async () => {
    const url = await freshDatabaseUrl();
    const dbs = await Promise.all([PgDatabase.open(url), PgDatabase.open(url), PgDatabase.open(url)]);
    cleanup.push(async () => {
      for (const d of dbs) await d.close();
    });
    const r = await rig(dbs[0]!);
    // One key's head fails now and then: its later events must wait, on every instance.
    r.receiver.failNext(3);
    const keys = ['lk_a', 'lk_b', 'lk_c', 'lk_d', 'lk_e'];
    const types = ['license.activated', 'license.suspended', 'license.reinstated', 'license.revoked', 'license.deactivated'] as const;
    for (let i = 0; i < 40; i++) await recordLicenseEvent(dbs[i % 3]!, ev(types[i % types.length]!, keys[i % keys.length]!, { at_ms: T0 + i, data: { n: i } }));
    const { logger } = captureLog();
    const loops = await Promise.all(
      dbs.map(async (d) => new WebhookDelivery({ audit: await SqlLicenseAuditStore.open(d), clock: systemClock, logger, pollMs: 10, retryBaseMs: 30, retryCapMs: 200 })),
    );
    for (const l of loops) cleanup.push(() => l.stop());
    for (const l of loops) l.start();
    await waitFor(async () => r.receiver.accepted.length === 40, 'forty deliveries', 20_000);
    await waitFor(async () => (await r.audit.pendingDeliveries()) === 0, 'an empty outbox');
    const ns = r.receiver.accepted.map((d) => Number(d.data.n));
    expect([...ns].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    // Replays (the same id twice) would have been logged by the receiver.
    expect(r.receiver.log.filter((l) => l === 'replayed')).toEqual([]);
    for (const k of keys) {
      const mine = r.receiver.accepted.filter((d) => d.data.key_id === k).map((d) => Number(d.data.n));
      expect(mine).toEqual([...mine].sort((a, b) => a - b));
    }
  });
});
