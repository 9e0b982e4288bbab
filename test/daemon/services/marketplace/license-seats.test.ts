// Issue 33 "Licenses for CI fleets", the domain on both engines: floating seats (50 verifies from
// 50 machines on a 5-seat key give exactly 5; a lapsed lease frees its seat with no job running;
// heartbeats keep one; retry_after), suspension, entitlements (validate, verify, token claims),
// the deactivation budget's window edges, refused heartbeats (another key's machine, after
// suspension or revocation), the audit events of each change; and three instances on one
// PostgreSQL database whose clocks are a minute apart agree, because the database's clock decides.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeJwt } from 'jose';
import { SqlLicenseStore, DB_NOW } from '../../../../src/store/license-sql.js';
import { SqlLicenseAuditStore } from '../../../../src/store/license-events-sql.js';
import type { SqlDatabase } from '../../../../src/store/sql.js';
import { PgDatabase } from '../../../../src/store/sql-pg.js';
import { SigningKeyring } from '../../../../src/crypto/signing.js';
import { loadKeyHashSecret } from '../../../../src/crypto/license-key.js';
import { Licenses } from '../../../../daemon/services/marketplace/license/licenses.js';
import { LicenseAdmin, LicenseSettingError, type ItemRules } from '../../../../daemon/services/marketplace/license/admin.js';
import { ManualClock } from '../../../../src/util/clock.js';
import { describeEngines } from '../../../helpers/engines.js';
import { freshDatabaseUrl } from '../../../helpers/pg.js';
import { tempDir } from '../../../helpers/tmp.js';

interface Rig {
  licenses: Licenses;
  admin: LicenseAdmin;
  store: SqlLicenseStore;
  audit: SqlLicenseAuditStore;
  clock: ManualClock;
  db: SqlDatabase;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The license domain and admin on a database; `dataDir` holds the key-hash secret (instances share it). */
async function rig(db: SqlDatabase, opts: { clock?: ManualClock; dataDir?: string } = {}): Promise<Rig> {
  let dataDir = opts.dataDir;
  if (!dataDir) {
    const dir = tempDir('mkt-seats-');
    cleanups.push(() => dir.remove());
    dataDir = dir.path;
  }
  const clock = opts.clock ?? new ManualClock(Date.now());
  const store = await SqlLicenseStore.open(db);
  const keyring = await SigningKeyring.open({ store, now: () => clock.now(), keepMs: 7 * 86_400_000, pollMs: 3_600_000 });
  cleanups.push(() => keyring.close());
  const licenses = new Licenses({ store, clock, hashSecret: loadKeyHashSecret(dataDir, {}), keyring, issuer: 'mkt-marketplace' });
  const admin = new LicenseAdmin({ store, dataDir, env: {}, now: () => clock.now() });
  return { licenses, admin, store, audit: await SqlLicenseAuditStore.open(db), clock, db };
}

async function item(r: Rig, id: string, max: number | null, rules: ItemRules = {}): Promise<void> {
  await r.admin.createItem({ id, name: id, licenseTemplate: null, maxActivations: max, verification: true, ...rules });
}

async function issue(r: Rig, itemId: string, more: Partial<Parameters<LicenseAdmin['issueKeys']>[0]> = {}): Promise<{ id: string; key: string }> {
  const [k] = await r.admin.issueKeys({ itemId, count: 1, expiresAt: null, licensee: null, ...more });
  return k!;
}

async function eventTypes(r: Rig, keyId: string): Promise<string[]> {
  return (await r.audit.events(keyId)).map((e) => e.type);
}

/** Polls `fn` until it returns true, for at most `ms`. */
async function until(fn: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

describeEngines('floating seats, entitlements, suspension, budget', (open) => {
  it('50 concurrent verifies from 50 machines on a 5-seat floating key give exactly 5; the others get retry_after; each seat an activated event', async () => {
    const r = await rig(await open());
    await item(r, 'ci', 5, { activation: 'floating', leaseSeconds: 60 });
    const k = await issue(r, 'ci');
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => r.licenses.verify(k.key, `runner-${i}`)));
    const won = answers.filter((a) => a.valid);
    expect(won).toHaveLength(5);
    const refused = answers.filter((a) => !a.valid);
    expect(refused.map((a) => a.code)).toEqual(Array(45).fill('TOO_MANY_ACTIVATIONS'));
    for (const a of refused) {
      expect(a.retry_after).toBeGreaterThanOrEqual(59);
      expect(a.retry_after).toBeLessThanOrEqual(60);
    }
    for (const a of won) {
      const claims = decodeJwt(a.token!);
      // The token ends with the lease, not after 7 days.
      expect(claims.exp! - claims.iat!).toBeLessThanOrEqual(60);
      expect(a.expires_in).toBe(claims.exp! - claims.iat!);
      expect(Math.abs(claims.exp! * 1000 - Date.parse(a.lease_expires_at!))).toBeLessThan(1000);
    }
    expect((await r.licenses.status(k.key)).license).toMatchObject({ activation_count: 5, remaining_activations: 0, activation_policy: 'floating', lease_seconds: 60 });
    const types = await eventTypes(r, k.id);
    expect(types.filter((t) => t === 'license.activated')).toHaveLength(5);
    expect(types.filter((t) => t === 'license.verification_refused')).toHaveLength(1); // aggregated per code and hour
    const refusal = (await r.audit.events(k.id)).find((e) => e.type === 'license.verification_refused')!;
    expect(refusal).toMatchObject({ code: 'TOO_MANY_ACTIVATIONS', count: 45 });
  });

  it('a lapsed lease (1 s) frees its seat with no job running; a re-verify of a live lease renews it without taking a second seat', async () => {
    const r = await rig(await open());
    await item(r, 'short', 1, { activation: 'floating', leaseSeconds: 1 });
    const k = await issue(r, 'short');
    const first = await r.licenses.validate({ key: k.key, machine_id: 'a', activate: true });
    expect(first).toMatchObject({ valid: true, activated: true, code: 'VALID', retry_after: null });
    expect(Date.parse(first.lease_expires_at!)).toBeGreaterThan(Date.now() - 5_000);
    const again = await r.licenses.validate({ key: k.key, machine_id: 'a', activate: true });
    // A second validate may land after the 1 s lease lapsed on a loaded machine: then it is a seat taken again.
    expect(again.valid).toBe(true);
    const full = await r.licenses.validate({ key: k.key, machine_id: 'b', activate: true });
    if (!full.valid) expect(full).toMatchObject({ code: 'TOO_MANY_ACTIVATIONS', retry_after: 1, lease_expires_at: null });
    // Nothing runs in between: the database's clock alone frees the seat.
    await until(async () => (await r.licenses.status(k.key)).license!.activation_count === 0, 5_000);
    expect(await r.licenses.validate({ key: k.key, machine_id: 'a' })).toMatchObject({ valid: false, code: 'MACHINE_NOT_ACTIVATED' });
    expect(await r.licenses.validate({ key: k.key, machine_id: 'b', activate: true })).toMatchObject({ valid: true, activated: true });
    // The lapsed lease of `a` was tidied when `b` took the seat: an expiry event at its lease's end.
    const events = await r.audit.events(k.id);
    expect(events.some((e) => e.type === 'license.lease_expired' && e.machine_id === 'a')).toBe(true);
  });

  it('heartbeats keep a seat past its first lease; once they stop, the seat frees; releasing it is RELEASED and never spends the budget', async () => {
    const r = await rig(await open());
    await item(r, 'hb', 1, { activation: 'floating', leaseSeconds: 2, maxDeactivations: 1, deactivationWindowSeconds: 3600 });
    const k = await issue(r, 'hb');
    const taken = await r.licenses.verify(k.key, 'a');
    expect(taken.valid).toBe(true);
    const firstEnd = Date.parse(taken.lease_expires_at!);
    let last = firstEnd;
    // Heartbeat every 300 ms until well past the first lease's end.
    while (Date.now() < firstEnd + 1_500) {
      const hb = await r.licenses.heartbeat(k.key, 'a');
      expect(hb).toMatchObject({ success: true, code: 'RENEWED' });
      last = Date.parse(hb.lease_expires_at!);
      expect((await r.licenses.verify(k.key, 'b')).code).toBe('TOO_MANY_ACTIVATIONS');
      await new Promise((res) => setTimeout(res, 300));
    }
    expect(last).toBeGreaterThan(firstEnd + 1_000);
    // Renewals are one aggregated event per machine and hour (two if the loop crossed an hour), with a count.
    const renewed = (await r.audit.events(k.id)).filter((e) => e.type === 'license.lease_renewed');
    expect(renewed.length).toBeLessThanOrEqual(2);
    expect(renewed.reduce((n, e) => n + e.count, 0)).toBeGreaterThan(3);
    await until(async () => (await r.licenses.verify(k.key, 'b')).valid, 5_000);
    expect(await r.licenses.heartbeat(k.key, 'a')).toMatchObject({ success: false, code: 'MACHINE_NOT_ACTIVATED', lease_expires_at: null });
    // Release: twice within a budget of 1 per hour, neither counted.
    for (let i = 0; i < 2; i++) {
      expect(await r.licenses.deactivate(k.key, 'b')).toMatchObject({ success: true, code: 'RELEASED', retry_after: null, next_allowed_at: null });
      expect((await r.licenses.verify(k.key, 'b')).valid).toBe(true);
    }
    expect(await r.licenses.deactivate(k.key, 'nobody')).toMatchObject({ success: false, code: 'MACHINE_NOT_ACTIVATED' });
    expect(await eventTypes(r, k.id)).toContain('license.released');
  });

  it('heartbeat refusals: another key\'s machine, a never-seated machine, after suspension and after revocation; none renews', async () => {
    const r = await rig(await open());
    await item(r, 'f', 3, { activation: 'floating', leaseSeconds: 600 });
    const a = await issue(r, 'f');
    const b = await issue(r, 'f');
    const seat = await r.licenses.verify(a.key, 'm1');
    expect(seat.valid).toBe(true);
    // A forged heartbeat: key b for the machine seated on key a.
    expect(await r.licenses.heartbeat(b.key, 'm1')).toMatchObject({ success: false, code: 'MACHINE_NOT_ACTIVATED', lease_expires_at: null });
    expect(await r.licenses.heartbeat(a.key, 'm2')).toMatchObject({ success: false, code: 'MACHINE_NOT_ACTIVATED' });
    expect((await r.licenses.validate({ key: b.key })).license!.activation_count).toBe(0);
    await r.admin.suspend(a.id);
    const leaseOf = async () => (await r.db.value<number>('SELECT lease_expires_ms FROM license_activations WHERE key_id = ? AND machine_id = ?', [a.id, 'm1']))!;
    const before = Number(await leaseOf());
    expect(await r.licenses.heartbeat(a.key, 'm1')).toMatchObject({ success: false, code: 'SUSPENDED', lease_expires_at: null });
    expect(Number(await leaseOf())).toBe(before);
    await r.admin.revoke(a.id);
    expect(await r.licenses.heartbeat(a.key, 'm1')).toMatchObject({ success: false, code: 'REVOKED' });
    expect(Number(await leaseOf())).toBe(before);
    // The store's renewal refuses by itself too (a suspension committed after the lookup).
    expect(await r.store.renewLease(a.id, 'm1', 600)).toBeUndefined();
    expect(await r.licenses.heartbeat('garbage', 'm1')).toMatchObject({ success: false, code: 'MALFORMED_KEY' });
  });

  it('a floating key found before renews without a lookup; each later change is still told: suspension, reinstatement, expiry, revocation, a lapsed lease', async () => {
    const r = await rig(await open());
    await item(r, 'known', 2, { activation: 'floating', leaseSeconds: 600 });
    const k = await issue(r, 'known', { expiresAt: new Date(r.clock.now() + 3_600_000).toISOString() });
    expect((await r.licenses.verify(k.key, 'm1')).valid).toBe(true);
    // The store's rows (transactions' included) share SqlLicenseStore's base class: count their key lookups.
    const findKeys = vi.spyOn(Object.getPrototypeOf(SqlLicenseStore.prototype) as { findKeys: SqlLicenseStore['findKeys'] }, 'findKeys');
    try {
      expect(await r.licenses.heartbeat(k.key, 'm1')).toMatchObject({ success: true, code: 'RENEWED' });
      const lookups = findKeys.mock.calls.length;
      for (let i = 0; i < 3; i++) expect(await r.licenses.heartbeat(k.key, 'm1')).toMatchObject({ success: true, code: 'RENEWED' });
      expect(findKeys.mock.calls.length).toBe(lookups);
    } finally {
      findKeys.mockRestore();
    }
    const leaseOf = async () => Number(await r.db.value<number>('SELECT lease_expires_ms FROM license_activations WHERE key_id = ? AND machine_id = ?', [k.id, 'm1']));
    await r.admin.suspend(k.id);
    const held = await leaseOf();
    expect(await r.licenses.heartbeat(k.key, 'm1')).toMatchObject({ success: false, code: 'SUSPENDED', lease_expires_at: null });
    expect(await leaseOf()).toBe(held);
    await r.admin.reinstate(k.id);
    expect(await r.licenses.heartbeat(k.key, 'm1')).toMatchObject({ success: true, code: 'RENEWED' });
    // A machine whose lease was released: no renewal brings it back.
    expect((await r.licenses.verify(k.key, 'm2')).valid).toBe(true);
    expect((await r.licenses.deactivate(k.key, 'm2')).code).toBe('RELEASED');
    expect(await r.licenses.heartbeat(k.key, 'm2')).toMatchObject({ success: false, code: 'MACHINE_NOT_ACTIVATED' });
    // Past the key's expiry (the process's clock, as every answer's standing): EXPIRED, the lease left as it was.
    r.clock.advance(3_600_000);
    const before = await leaseOf();
    expect(await r.licenses.heartbeat(k.key, 'm1')).toMatchObject({ success: false, code: 'EXPIRED' });
    expect(await leaseOf()).toBe(before);
    r.clock.advance(-3_600_000);
    await r.admin.revoke(k.id);
    expect(await r.licenses.heartbeat(k.key, 'm1')).toMatchObject({ success: false, code: 'REVOKED' });
    expect(await leaseOf()).toBe(before);
  });

  it('a node-locked key: heartbeat answers RENEWED with no lease for an activated machine; verify tokens keep 7 days', async () => {
    const r = await rig(await open());
    await item(r, 'n', 2);
    const k = await issue(r, 'n');
    const v = await r.licenses.verify(k.key, 'fp');
    expect(v).toMatchObject({ valid: true, expires_in: 604_800, lease_expires_at: null, retry_after: null, entitlements: [] });
    expect(await r.licenses.heartbeat(k.key, 'fp')).toEqual({ success: true, message: expect.any(String), code: 'RENEWED', lease_expires_at: null });
    expect(await r.licenses.heartbeat(k.key, 'other')).toMatchObject({ success: false, code: 'MACHINE_NOT_ACTIVATED' });
  });

  it('suspension: SUSPENDED for status, validate, verify and heartbeat; deactivation works; activations kept and back on reinstate; revoke wins', async () => {
    const r = await rig(await open());
    await item(r, 'app', 3);
    const k = await issue(r, 'app');
    for (const m of ['m1', 'm2']) expect((await r.licenses.validate({ key: k.key, machine_id: m, activate: true })).valid).toBe(true);
    expect(await r.admin.suspend(k.key)).toEqual({ id: k.id, outcome: 'changed' });
    expect(await r.admin.suspend(k.id)).toEqual({ id: k.id, outcome: 'unchanged' });
    const status = await r.licenses.status(k.key);
    expect(status).toMatchObject({ valid: false, code: 'SUSPENDED', license: { activation_count: 2 } });
    expect(status.license!.suspended_at).toBe(new Date(r.clock.now()).toISOString());
    expect(await r.licenses.validate({ key: k.key, machine_id: 'm1' })).toMatchObject({ valid: false, code: 'SUSPENDED' });
    expect(await r.licenses.validate({ key: k.key, machine_id: 'm3', activate: true })).toMatchObject({ valid: false, code: 'SUSPENDED', activated: false });
    expect(await r.licenses.verify(k.key, 'm1')).toMatchObject({ valid: false, code: 'SUSPENDED', token: null });
    expect(await r.licenses.heartbeat(k.key, 'm1')).toMatchObject({ success: false, code: 'SUSPENDED' });
    expect(await r.licenses.deactivate(k.key, 'm2')).toMatchObject({ success: true, code: 'DEACTIVATED' });
    expect(await r.admin.reinstate(k.key)).toEqual({ id: k.id, outcome: 'changed' });
    expect(await r.admin.reinstate(k.key)).toEqual({ id: k.id, outcome: 'unchanged' });
    expect(await r.licenses.validate({ key: k.key, machine_id: 'm1' })).toMatchObject({ valid: true, code: 'VALID', license: { activation_count: 1, suspended_at: null } });
    await r.admin.suspend(k.key);
    expect(await r.admin.revoke(k.key)).toBe(k.id);
    expect((await r.licenses.status(k.key)).code).toBe('REVOKED');
    expect(await r.admin.reinstate(k.key)).toEqual({ id: k.id, outcome: 'revoked' });
    expect(await r.admin.suspend(k.key)).toEqual({ id: k.id, outcome: 'revoked' });
    expect((await r.licenses.status(k.key)).code).toBe('REVOKED');
    expect(await r.admin.suspend('lk_00000000000000000000')).toBeUndefined();
    const types = await eventTypes(r, k.id);
    for (const t of ['license.activated', 'license.suspended', 'license.deactivated', 'license.reinstated', 'license.revoked', 'license.verification_refused']) expect(types).toContain(t);
    expect(types.filter((t) => t === 'license.revoked')).toHaveLength(1);
  });

  it('entitlements: stored sorted and unique, asked for by validate (ENTITLEMENT_MISSING names the missing), in the verify answer and the token claims; changed later', async () => {
    const r = await rig(await open());
    await item(r, 'font', null);
    const k = await issue(r, 'font', { entitlements: ['sso', 'export-pdf', 'sso'] });
    expect((await r.licenses.status(k.key)).license!.entitlements).toEqual(['export-pdf', 'sso']);
    expect(await r.licenses.validate({ key: k.key, entitlements: ['sso'] })).toMatchObject({ valid: true, code: 'VALID' });
    const missing = await r.licenses.validate({ key: k.key, machine_id: 'x', activate: true, entitlements: ['sso', 'audit-log', 'api'] });
    expect(missing).toMatchObject({ valid: false, code: 'ENTITLEMENT_MISSING', error: 'the license key lacks the entitlements: api, audit-log', activated: false });
    // Refused before any activation was taken.
    expect((await r.licenses.status(k.key)).license!.activation_count).toBe(0);
    const v = await r.licenses.verify(k.key, 'fp');
    expect(v.entitlements).toEqual(['export-pdf', 'sso']);
    expect(decodeJwt(v.token!).entitlements).toEqual(['export-pdf', 'sso']);
    expect(await r.admin.changeEntitlements(k.key, { add: ['api'], remove: ['sso'] })).toEqual({ id: k.id, entitlements: ['api', 'export-pdf'], added: ['api'], removed: ['sso'] });
    // The same second: the token is signed again for the new claims, not reused.
    expect(decodeJwt((await r.licenses.verify(k.key, 'fp')).token!).entitlements).toEqual(['api', 'export-pdf']);
    expect(await r.licenses.validate({ key: k.key, entitlements: ['sso'] })).toMatchObject({ code: 'ENTITLEMENT_MISSING', error: 'the license key lacks the entitlement: sso' });
    expect(await r.admin.changeEntitlements(k.id, { add: ['api'] })).toMatchObject({ added: [], removed: [] });
    await expect(r.admin.changeEntitlements(k.id, { add: ['Bad Name'] })).rejects.toThrow(LicenseSettingError);
    const changes = (await r.audit.events(k.id)).filter((e) => e.type === 'license.entitlements_changed');
    expect(changes).toHaveLength(1);
    expect(changes[0]!.data).toEqual({ added: ['api'], removed: ['sso'], entitlements: ['api', 'export-pdf'] });
  });

  it('the deactivation budget: the (N+1)th in the window is DEACTIVATION_LIMIT with retry_after and next_allowed_at; the window slides by the database clock; a key budget overrides the item', async () => {
    const r = await rig(await open());
    await item(r, 'b', 10, { maxDeactivations: 2, deactivationWindowSeconds: 3600 });
    const k = await issue(r, 'b');
    const activate = (m: string) => r.licenses.validate({ key: k.key, machine_id: m, activate: true });
    for (const m of ['a', 'b', 'c', 'd']) await activate(m);
    expect(await r.licenses.deactivate(k.key, 'a')).toMatchObject({ success: true, code: 'DEACTIVATED' });
    expect(await r.licenses.deactivate(k.key, 'b')).toMatchObject({ success: true });
    // Not activated: answered as before, the budget untouched.
    expect(await r.licenses.deactivate(k.key, 'zz')).toMatchObject({ success: false, code: 'MACHINE_NOT_ACTIVATED' });
    const limited = await r.licenses.deactivate(k.key, 'c');
    expect(limited).toMatchObject({ success: false, code: 'DEACTIVATION_LIMIT' });
    expect(limited.retry_after).toBeGreaterThanOrEqual(3590);
    expect(limited.retry_after).toBeLessThanOrEqual(3600);
    const first = (await r.db.all<{ at_ms: number }>('SELECT at_ms FROM license_deactivations WHERE key_id = ? ORDER BY at_ms', [k.id])).map((x) => Number(x.at_ms));
    expect(first).toHaveLength(2);
    expect(limited.next_allowed_at).toBe(new Date(first[0]! + 3_600_000).toISOString());
    expect(await r.licenses.validate({ key: k.key, machine_id: 'c' })).toMatchObject({ valid: true });

    // The edges, placed against the database's clock: one a minute inside the window, one a minute outside.
    const now = Number(await r.db.value<number>(`SELECT ${DB_NOW[r.db.engine]}`));
    await r.db.run('DELETE FROM license_deactivations WHERE key_id = ?', [k.id]);
    const inside = now - 3_600_000 + 60_000;
    await r.db.run('INSERT INTO license_deactivations (key_id, at_ms) VALUES (?, ?), (?, ?)', [k.id, inside, k.id, now - 3_600_000 - 60_000]);
    const w = await r.store.transaction(async (tx) => (await tx.lockKey(k.id), tx.deactivationWindow(k.id, 3600)));
    expect(w).toMatchObject({ count: 1, earliest_ms: inside });
    // The one outside can never count again: it is gone.
    expect(Number(await r.db.value('SELECT count(*) FROM license_deactivations WHERE key_id = ?', [k.id]))).toBe(1);
    expect(await r.licenses.deactivate(k.key, 'c')).toMatchObject({ success: true });
    const edge = await r.licenses.deactivate(k.key, 'd');
    expect(edge).toMatchObject({ success: false, code: 'DEACTIVATION_LIMIT', next_allowed_at: new Date(inside + 3_600_000).toISOString() });
    expect(edge.retry_after).toBeGreaterThanOrEqual(59);
    expect(edge.retry_after).toBeLessThanOrEqual(60);
    // Once the earliest is a whole window old, it has left the window: one more fits.
    await r.db.run('UPDATE license_deactivations SET at_ms = at_ms - 60000 WHERE key_id = ? AND at_ms = ?', [k.id, inside]);
    expect(await r.licenses.deactivate(k.key, 'd')).toMatchObject({ success: true });

    // A key's own budget (1 per 2 s) replaces the item's; real time slides the window.
    const own = await issue(r, 'b', { maxDeactivations: 1, deactivationWindowSeconds: 2 });
    for (const m of ['x', 'y']) await r.licenses.validate({ key: own.key, machine_id: m, activate: true });
    expect(await r.licenses.deactivate(own.key, 'x')).toMatchObject({ success: true });
    const next = await r.licenses.deactivate(own.key, 'y');
    expect(next).toMatchObject({ code: 'DEACTIVATION_LIMIT' });
    expect(next.retry_after).toBeGreaterThanOrEqual(1);
    expect(next.retry_after).toBeLessThanOrEqual(2);
    await until(async () => (await r.licenses.deactivate(own.key, 'y')).success, 5_000);
  });

  it('50 concurrent deactivation attempts against a budget of 3 deactivate exactly 3', async () => {
    const r = await rig(await open());
    await item(r, 'race', null, { maxDeactivations: 3, deactivationWindowSeconds: 3600 });
    const k = await issue(r, 'race');
    for (let i = 0; i < 50; i++) await r.licenses.validate({ key: k.key, machine_id: `m${i}`, activate: true });
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => r.licenses.deactivate(k.key, `m${i}`)));
    expect(answers.filter((a) => a.success)).toHaveLength(3);
    expect(answers.filter((a) => a.code === 'DEACTIVATION_LIMIT')).toHaveLength(47);
    expect((await r.licenses.status(k.key)).license!.activation_count).toBe(47);
  });

  it('item and key settings are checked: floating needs a lease, a lease needs floating, a budget needs both numbers', async () => {
    const r = await rig(await open());
    await expect(item(r, 'x', 1, { activation: 'floating' })).rejects.toThrow(/needs --lease/);
    await expect(item(r, 'x', 1, { leaseSeconds: 60 })).rejects.toThrow(/for floating items/);
    await expect(item(r, 'x', 1, { maxDeactivations: 2 })).rejects.toThrow(/both --max-deactivations and --per/);
    await expect(item(r, 'x', 1, { activation: 'floating', leaseSeconds: 0 })).rejects.toThrow(LicenseSettingError);
    await item(r, 'ok', 1, { activation: 'floating', leaseSeconds: 1 });
    expect(await r.store.getItem('ok')).toMatchObject({ activation_policy: 'floating', lease_seconds: 1, max_deactivations: null, deactivation_window_seconds: null });
  });
});

describe('three instances on PostgreSQL with clocks skewed by a minute agree', () => {
  it('they race for 3 seats and hold exactly 3; a 10 s lease lapses by real time, not a minute early or late as each instance clock would have it', async () => {
    const url = await freshDatabaseUrl();
    const dir = tempDir('mkt-seats-pg-');
    cleanups.push(() => dir.remove());
    const base = Date.now();
    const rigs: Rig[] = [];
    for (const skew of [-60_000, 0, 60_000]) {
      const db = await PgDatabase.open(url);
      cleanups.push(() => db.close());
      rigs.push(await rig(db, { clock: new ManualClock(base + skew), dataDir: dir.path }));
    }
    // 10 s: long enough that a loaded machine checks the seats before they lapse, far below the minute of skew.
    await item(rigs[0]!, 'fleet', 3, { activation: 'floating', leaseSeconds: 10 });
    const k = await issue(rigs[0]!, 'fleet');
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => rigs[i % 3]!.licenses.verify(k.key, `job-${i}`)));
    expect(answers.filter((a) => a.valid)).toHaveLength(3);
    const start = Date.now();
    for (const x of rigs) expect((await x.licenses.status(k.key)).license!.activation_count).toBe(3);
    // The instance a minute ahead does not see the leases as lapsed; the one behind does not keep them longer.
    for (const x of rigs) expect((await x.licenses.verify(k.key, 'late')).code).toBe('TOO_MANY_ACTIVATIONS');
    for (const a of answers.filter((x) => x.valid)) {
      // Tokens are stamped with the database's time, not the instance's.
      // (An instance's own clock would be a minute off; 20 s allows a loaded machine's delays.)
      expect(Math.abs(decodeJwt(a.token!).iat! * 1000 - start)).toBeLessThan(20_000);
    }
    // No clock moves; real time alone lapses the leases.
    // By the clock of the instance a minute behind they would lapse only after 70 s.
    await until(async () => (await rigs[2]!.licenses.status(k.key)).license!.activation_count === 0, 45_000);
    const lapsedAfter = Date.now() - start;
    expect(lapsedAfter).toBeLessThan(45_000);
    const again = await Promise.all(Array.from({ length: 9 }, (_, i) => rigs[i % 3]!.licenses.verify(k.key, `next-${i}`)));
    expect(again.filter((a) => a.valid)).toHaveLength(3);
  });
});
