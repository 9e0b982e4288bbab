// The license-key domain, free of HTTP: key lookup (check part, keyed hash, constant-time
// compare), standing (revoked, suspended, expired), entitlements, activations (the maximum is
// decided here, in a transaction that locks the key, so instances sharing a database never exceed
// it; a key without one takes no lock), floating seats (leases counted by the database's clock
// under the same lock), the deactivation budget, offline tokens, license text, and the audit
// events of each change (recorded in the transaction that makes it).
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { FoundKey, Lease, LicenseRows, LicenseStore, StoredKey } from '../../../../src/store/license.js';
import type { LicenseEventInput } from '../../../../src/store/license-events.js';
import { WriteGroups } from './write-groups.js';
import { displayPrefix, hashLicenseKey, parseLicenseKey } from '../../../../src/crypto/license-key.js';
import { fingerprintHash, type SigningKeyring } from '../../../../src/crypto/signing.js';
import {
  TOKEN_LIFETIME_SECONDS,
  type DeactivateKeyResponse,
  type KeyStatusLicense,
  type KeyStatusResponse,
  type LicenseCode,
  type LicenseHeartbeatResponse,
  type LicenseTokenClaims,
  type LicenseVerifyResponse,
  type ValidateKeyRequest,
  type ValidateKeyResponse,
} from '../../../../src/schemas/license.js';
import type { Clock } from '../../../../src/util/clock.js';
import { formatTimestamp } from '../../../../src/util/time.js';

const MESSAGES: Record<LicenseCode, string | null> = {
  VALID: null,
  MALFORMED_KEY: 'the license key is malformed (check for a typo)',
  NOT_FOUND: 'license key not found',
  REVOKED: 'the license key has been revoked',
  EXPIRED: 'the license key has expired',
  TOO_MANY_ACTIVATIONS: 'the license key has reached its activation maximum',
  MACHINE_NOT_ACTIVATED: 'the machine is not activated for this license key',
  VERIFICATION_DISABLED: 'offline verification is not enabled for this item',
  SUSPENDED: 'the license key is suspended',
  ENTITLEMENT_MISSING: 'the license key lacks a required entitlement',
  DEACTIVATION_LIMIT: 'the license key has used up its deactivations for now',
};

/** What a floating key's machine without a live lease is told: how to get one. */
const NO_LEASE = 'the machine holds no live lease on this license key; take a seat again (validate with activate, or verify)';
/** Key proofs kept (see `Licenses.proofs`): a fleet's keys, and a few thousand more. */
const PROOFS_KEPT = 10_000;

export type ActivationResult =
  | { kind: 'created'; count: number }
  | { kind: 'existing'; count: number }
  | { kind: 'full'; count: number };

/** A floating seat: taken (or taken again after it lapsed), renewed, or refused with when one frees. */
export type SeatResult =
  | { kind: 'created' | 'existing'; count: number; lease: Lease }
  | { kind: 'full'; count: number; retryAfter: number };

/** A renewed lease with its end as RFC 3339 text. */
type RenewedLease = Lease & { lease_expires_at: string };

/**
 * What a heartbeat needs of a floating key that never changes once the key is issued: its id, its
 * item (and so the item's lease), its expiry. No statement updates them (keys and items are never
 * rewritten, only revoked, suspended or given entitlements), so they are kept with the key's proof.
 * What can change (revocation, suspension, the machine's lease) the renewal itself checks.
 */
interface KnownKey {
  id: string;
  item_id: string;
  lease_seconds: number;
  /** The key's expiry (ms), null for none. */
  expires_ms: number | null;
}

/** A presented key's prefix and keyed hash, and, once a heartbeat found it floating, its KnownKey. */
interface Proof {
  prefix: string;
  hash: string;
  known?: KnownKey;
}

function knownKey(key: StoredKey): KnownKey {
  return { id: key.id, item_id: key.item_id, lease_seconds: key.lease_seconds ?? 1, expires_ms: key.expires_at === null ? null : Date.parse(key.expires_at) };
}

/** A key lookup: the key (for a request about a machine, a FoundKey), or a failure code. */
export type Lookup<K extends StoredKey = StoredKey> = { ok: true; key: K } | { ok: false; code: 'MALFORMED_KEY' | 'NOT_FOUND' };

export interface LicenseDeps {
  store: LicenseStore;
  clock: Clock;
  hashSecret: Buffer;
  keyring: SigningKeyring;
  issuer: string;
}

/** Two hex hashes compared in constant time. */
export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

export function summary(key: StoredKey): KeyStatusLicense {
  const max = key.max_activations;
  const floating = key.activation_policy === 'floating';
  return {
    item_id: key.item_id,
    activation_count: key.activation_count,
    created_at: key.created_at,
    max_activations: max,
    remaining_activations: max === null ? null : Math.max(0, max - key.activation_count),
    expires_at: key.expires_at,
    activation_policy: key.activation_policy,
    lease_seconds: floating ? key.lease_seconds : null,
    entitlements: key.entitlements,
    suspended_at: key.suspended_at,
  };
}

export function isFailureGuess(code: LicenseCode | string | undefined): boolean {
  return code === 'MALFORMED_KEY' || code === 'NOT_FOUND';
}

/** The deactivation budget that applies to a key: its own, else its item's; undefined for none. */
export function deactivationBudget(key: StoredKey): { max: number; windowSeconds: number } | undefined {
  if (key.max_deactivations !== null && key.deactivation_window_seconds !== null) return { max: key.max_deactivations, windowSeconds: key.deactivation_window_seconds };
  if (key.item_max_deactivations !== null && key.item_deactivation_window_seconds !== null) return { max: key.item_max_deactivations, windowSeconds: key.item_deactivation_window_seconds };
  return undefined;
}

/** Whole seconds until `untilMs`, at least 1 (a Retry-After of 0 invites a busy loop). */
/**
 * A VALID answer to a verify, as one literal: spread from a shared part (`{ ...valid, token }`)
 * it cost each verify 5 µs in V8's object copy and the serializer's slower reads (bench/README.md,
 * "One line at the answer, issue 37").
 */
function verified(key: StoredKey, expiresIn: number, token: string, leaseExpiresAt: string | null): LicenseVerifyResponse {
  return { valid: true, error: null, code: 'VALID', retry_after: null, entitlements: key.entitlements, expires_in: expiresIn, token, lease_expires_at: leaseExpiresAt };
}

function secondsUntil(untilMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((untilMs - nowMs) / 1000));
}

/** Who asked for what a refusal event records: the machine, when there was one. */
type Refusal = { key: StoredKey; code: LicenseCode; machineId?: string };

export class Licenses {
  private readonly groups: WriteGroups;

  constructor(private readonly d: LicenseDeps) {
    this.groups = new WriteGroups(d.store);
  }

  private event(key: Pick<StoredKey, 'id' | 'item_id'>, type: LicenseEventInput['type'], atMs: number, more: Partial<LicenseEventInput> = {}): LicenseEventInput {
    return { type, key_id: key.id, item_id: key.item_id, at_ms: atMs, ...more };
  }

  /**
   * Records a refused request about an existing key (aggregated per code and hour by the trail).
   * It changes no key, so it needs no transaction of the change's.
   */
  private async refused(r: Refusal, rows: LicenseRows = this.d.store): Promise<void> {
    await rows.recordEvent(this.event(r.key, 'license.verification_refused', this.d.clock.now(), { code: r.code, machine_id: r.machineId ?? null }));
  }

  /**
   * Node-locked: activates the machine unless the key is at its maximum (a machine activated
   * already keeps its slot). The key's lock makes count, check and insert one step for every
   * instance (on SQLite the write transaction alone does). The transaction is shared with this
   * turn's other license writes where the store groups them (SQLite, WriteGroups): a verify from
   * a new machine paid BEGIN IMMEDIATE and a WAL commit of its own, ~45 µs.
   */
  async activate(key: Pick<StoredKey, 'id' | 'item_id' | 'max_activations'>, machineId: string, machineName: string | null): Promise<ActivationResult> {
    const keyId = key.id;
    const nowMs = this.d.clock.now();
    const at = formatTimestamp(nowMs);
    const activated = this.event(key, 'license.activated', nowMs, { machine_id: machineId, data: machineName === null ? undefined : { machine_name: machineName } });
    if (key.max_activations === null) {
      // No maximum, no count to hold still: without the lock, activations of a much-used key do
      // not queue behind each other (the maximum is fixed at issue; the store checks it anyway).
      const count = await this.groups.run(async (tx) => {
        const n = await tx.addUnlimitedActivation(keyId, machineId, machineName, at);
        if (n !== undefined) await tx.recordEvent(activated);
        return n;
      });
      if (count !== undefined) return { kind: 'created', count };
    }
    return this.groups.run(async (tx) => {
      const state = await tx.lockKey(keyId);
      // Keys are never deleted; a missing one has no slot to give.
      if (!state) return { kind: 'full', count: 0 };
      const count = state.activation_count;
      if (state.max_activations !== null && count >= state.max_activations) {
        return (await tx.isActivated(keyId, machineId)) ? { kind: 'existing', count } : { kind: 'full', count };
      }
      // Below the maximum, the insert itself tells a new machine from one activated already.
      if (!(await tx.addActivation(keyId, machineId, machineName, at))) return { kind: 'existing', count };
      await tx.recordEvent(activated);
      return { kind: 'created', count: count + 1 };
    });
  }

  /**
   * Floating: renews the machine's live lease, or takes a seat if one is free by the database's
   * clock. A renewal needs no key lock; taking a seat counts the live leases under it (lapsed
   * ones tidied first, each an expiry event at its lease's end), so instances sharing a database
   * never hold more than the maximum. `live` says the lookup saw a live lease (worth renewing).
   */
  async takeSeat(key: Pick<StoredKey, 'id' | 'item_id' | 'lease_seconds' | 'activation_count'>, machineId: string, machineName: string | null, live: boolean): Promise<SeatResult> {
    const leaseSeconds = key.lease_seconds ?? 1;
    if (live) {
      const renewed = await this.renew(key, machineId, leaseSeconds);
      if (renewed) return { kind: 'existing', count: key.activation_count, lease: renewed };
    }
    const at = formatTimestamp(this.d.clock.now());
    return this.groups.run(async (tx): Promise<SeatResult> => {
      const state = await tx.lockKey(key.id);
      if (!state) return { kind: 'full', count: 0, retryAfter: 1 };
      for (const g of await tx.tidyLeases(key.id)) await tx.recordEvent(this.event(key, 'license.lease_expired', g.lease_expires_ms, { machine_id: g.machine_id }));
      const seats = await tx.seats(key.id, machineId);
      const max = state.max_activations;
      if (seats.mine_ms === null && max !== null && seats.live >= max) {
        return { kind: 'full', count: seats.live, retryAfter: secondsUntil(seats.earliest_ms ?? seats.now_ms, seats.now_ms) };
      }
      const lease = await tx.takeLease(key.id, machineId, machineName, at, leaseSeconds);
      const data = { lease_expires_at: formatTimestamp(lease.lease_expires_ms) };
      // The machine's row counted already: live, this renews it; lapsed since the tidy, it is taken again.
      if (seats.mine_ms !== null && seats.mine_ms > seats.now_ms) {
        await tx.recordEvent(this.event(key, 'license.lease_renewed', lease.now_ms, { machine_id: machineId, data }));
        return { kind: 'existing', count: seats.live, lease };
      }
      await tx.recordEvent(this.event(key, 'license.activated', lease.now_ms, { machine_id: machineId, data: machineName === null ? data : { ...data, machine_name: machineName } }));
      return { kind: 'created', count: seats.mine_ms === null ? seats.live + 1 : seats.live, lease };
    });
  }

  /** Extends a live lease (with its event); undefined when the machine holds none, or the key may not be used. */
  private renew(key: Pick<StoredKey, 'id' | 'item_id'>, machineId: string, leaseSeconds: number): Promise<Lease | undefined> {
    return this.groups.run((tx) => this.renewIn(tx, key, machineId, leaseSeconds));
  }

  private async renewIn(tx: LicenseRows, key: Pick<StoredKey, 'id' | 'item_id'>, machineId: string, leaseSeconds: number): Promise<RenewedLease | undefined> {
    const lease = await tx.renewLease(key.id, machineId, leaseSeconds);
    if (!lease) return undefined;
    // Formatted once: the event's data and a heartbeat's answer both carry it. Literals, not
    // this.event's spread: a fleet's every heartbeat comes here.
    const at = formatTimestamp(lease.lease_expires_ms);
    await tx.recordEvent({ type: 'license.lease_renewed', key_id: key.id, item_id: key.item_id, at_ms: lease.now_ms, machine_id: machineId, data: { lease_expires_at: at } });
    return { lease_expires_ms: lease.lease_expires_ms, now_ms: lease.now_ms, lease_expires_at: at };
  }

  lookup(raw: string): Promise<Lookup> {
    return this.find(raw, (prefix) => this.d.store.keysByPrefix(prefix));
  }

  /** The lookup of a request about one machine: the same read tells its item's settings and the machine's activation or lease. */
  lookupFor(raw: string, machineId: string, counted = true): Promise<Lookup<FoundKey>> {
    return this.find(raw, (prefix) => this.d.store.findKeys(prefix, machineId, counted));
  }

  private async find<K extends StoredKey>(raw: string, byPrefix: (prefix: string) => Promise<K[]>): Promise<Lookup<K>> {
    const proof = this.proof(raw);
    if (!proof) return { ok: false, code: 'MALFORMED_KEY' };
    return this.match(proof.hash, await byPrefix(proof.prefix));
  }

  /**
   * Proofs of the keys presented lately. Parsing a key and its keyed hash took ~7 µs of a
   * heartbeat's ~30 of its own (bench/README.md), and a fleet presents the same keys all day.
   * Bounded, and emptied when full, so keys made up by a client cannot grow it; it holds keys only
   * in this process's memory, where every request carrying one puts it anyway.
   */
  private readonly proofs = new Map<string, Proof>();

  /** The key's prefix and keyed hash; undefined for a malformed key. */
  private proof(raw: string): Proof | undefined {
    const known = this.proofs.get(raw);
    if (known) return known;
    const parsed = parseLicenseKey(raw);
    if (!parsed) return undefined;
    const proof = { prefix: parsed.prefix, hash: hashLicenseKey(this.d.hashSecret, parsed.key) };
    if (this.proofs.size >= PROOFS_KEPT) this.proofs.clear();
    this.proofs.set(raw, proof);
    return proof;
  }

  private match<K extends StoredKey>(hash: string, candidates: readonly K[]): Lookup<K> {
    let found: K | undefined;
    // Compare every candidate, in constant time each, without stopping at the first match.
    for (const c of candidates) if (hashesEqual(c.key_hash, hash)) found = c;
    if (!found) return { ok: false, code: 'NOT_FOUND' };
    return { ok: true, key: found };
  }

  /** REVOKED, SUSPENDED or EXPIRED (in that order) for a key that exists but may not be used; undefined when usable. */
  private standing(key: StoredKey): LicenseCode | undefined {
    if (key.revoked_at !== null) return 'REVOKED';
    if (key.suspended_at !== null) return 'SUSPENDED';
    if (key.expires_at !== null && Date.parse(key.expires_at) <= this.d.clock.now()) return 'EXPIRED';
    return undefined;
  }

  async status(raw: string): Promise<KeyStatusResponse> {
    const l = await this.lookup(raw);
    if (!l.ok) return { valid: false, error: MESSAGES[l.code], code: l.code, license: null };
    return this.statusOf(l.key);
  }

  /**
   * status's answer for a key found among the lookups the store keeps under an unchanged database
   * (SqlLicenseStore.keptKeysByPrefix), without waiting: a status's chain of awaits cost it more
   * than its lookup (bench/README.md, "get_note taken before fastify"). Undefined when the
   * lookup must be read, or the key is not found (a guess, whose slot in the failure window is a
   * write): status answers then.
   */
  keptStatus(raw: string): KeyStatusResponse | undefined {
    const proof = this.proof(raw);
    const kept = proof && this.d.store.keptKeysByPrefix(proof.prefix);
    if (!kept) return undefined;
    const l = this.match(proof.hash, kept);
    return l.ok ? this.statusOf(l.key) : undefined;
  }

  private statusOf(key: StoredKey): KeyStatusResponse {
    const bad = this.standing(key);
    return { valid: bad === undefined, error: bad ? MESSAGES[bad] : null, code: bad ?? 'VALID', license: summary(key) };
  }

  async validate(req: ValidateKeyRequest): Promise<ValidateKeyResponse> {
    const answer = (code: LicenseCode, key: StoredKey | null, more: { activated?: boolean; leaseMs?: number | null; retryAfter?: number; error?: string } = {}): ValidateKeyResponse => ({
      valid: code === 'VALID',
      error: more.error ?? MESSAGES[code],
      code,
      license: key ? summary(key) : null,
      activated: more.activated ?? false,
      lease_expires_at: more.leaseMs == null ? null : formatTimestamp(more.leaseMs),
      retry_after: more.retryAfter ?? null,
    });
    const refuse = async (code: LicenseCode, key: StoredKey, more: { retryAfter?: number; error?: string } = {}): Promise<ValidateKeyResponse> => {
      await this.refused({ key, code, machineId: req.machine_id });
      return answer(code, key, more);
    };
    const l = req.machine_id === undefined ? await this.lookup(req.key) : await this.lookupFor(req.key, req.machine_id);
    if (!l.ok) return answer(l.code, null);
    const bad = this.standing(l.key);
    if (bad) return refuse(bad, l.key);
    const missing = (req.entitlements ?? []).filter((n) => !l.key.entitlements.includes(n));
    if (missing.length > 0) return refuse('ENTITLEMENT_MISSING', l.key, { error: `the license key lacks the entitlement${missing.length === 1 ? '' : 's'}: ${[...new Set(missing)].sort().join(', ')}` });
    if (req.machine_id === undefined) return answer('VALID', l.key);
    const key = l.key as FoundKey;
    if (key.activation_policy === 'floating') {
      if (req.activate) {
        const r = await this.takeSeat(key, req.machine_id, req.machine_name ?? null, key.machine_lease_expires_ms !== null);
        const now = { ...key, activation_count: r.count };
        if (r.kind === 'full') return refuse('TOO_MANY_ACTIVATIONS', now, { retryAfter: r.retryAfter });
        return answer('VALID', now, { activated: r.kind === 'created', leaseMs: r.lease.lease_expires_ms });
      }
      return key.machine_lease_expires_ms !== null ? answer('VALID', key, { leaseMs: key.machine_lease_expires_ms }) : refuse('MACHINE_NOT_ACTIVATED', key);
    }
    // An active machine answers from the lookup: activating it again changes nothing.
    if (key.machine_activated) return answer('VALID', key);
    if (req.activate) {
      const r = await this.activate(key, req.machine_id, req.machine_name ?? null);
      const now = { ...key, activation_count: r.count };
      return r.kind === 'full' ? refuse('TOO_MANY_ACTIVATIONS', now) : answer('VALID', now, { activated: r.kind === 'created' });
    }
    return refuse('MACHINE_NOT_ACTIVATED', key);
  }

  /**
   * Frees one machine's slot: a floating seat is released (never counted against the budget); a
   * node-locked deactivation spends the key's deactivation budget, decided under the key's lock by
   * the database's clock. Unknown key or machine: `success: false`, never an exception. Works on
   * revoked and suspended keys too (uninstalling must always work).
   */
  async deactivate(raw: string, machineId: string): Promise<DeactivateKeyResponse> {
    const none = { retry_after: null, next_allowed_at: null };
    const l = await this.lookup(raw);
    if (!l.ok) return { success: false, message: MESSAGES[l.code]!, code: l.code, ...none };
    const key = l.key;
    if (key.activation_policy === 'floating') {
      const gone = await this.d.store.transaction(async (tx) => {
        const g = await tx.releaseLease(key.id, machineId);
        if (g?.live) await tx.recordEvent(this.event(key, 'license.released', g.now_ms, { machine_id: machineId }));
        else if (g) await tx.recordEvent(this.event(key, 'license.lease_expired', g.lease_expires_ms, { machine_id: machineId }));
        return g;
      });
      if (!gone?.live) return { success: false, message: NO_LEASE, code: 'MACHINE_NOT_ACTIVATED', ...none };
      return { success: true, message: 'seat released; it is free for another machine', code: 'RELEASED', ...none };
    }
    const budget = deactivationBudget(key);
    const r = await this.d.store.transaction(async (tx): Promise<{ kind: 'none' | 'done' } | { kind: 'limit'; nextMs: number; nowMs: number }> => {
      await tx.lockKey(key.id);
      if (budget) {
        if (!(await tx.isActivated(key.id, machineId))) return { kind: 'none' };
        const w = await tx.deactivationWindow(key.id, budget.windowSeconds);
        // The earliest counted one leaves the window at its time plus the window: then one fits.
        if (w.count >= budget.max) return { kind: 'limit', nextMs: (w.earliest_ms ?? w.now_ms) + budget.windowSeconds * 1000, nowMs: w.now_ms };
      }
      if (!(await tx.removeActivation(key.id, machineId))) return { kind: 'none' };
      if (budget) await tx.addDeactivation(key.id);
      await tx.recordEvent(this.event(key, 'license.deactivated', this.d.clock.now(), { machine_id: machineId }));
      return { kind: 'done' };
    });
    if (r.kind === 'none') return { success: false, message: MESSAGES.MACHINE_NOT_ACTIVATED!, code: 'MACHINE_NOT_ACTIVATED', ...none };
    if (r.kind === 'limit') {
      const retry = secondsUntil(r.nextMs, r.nowMs);
      return {
        success: false,
        message: `${MESSAGES.DEACTIVATION_LIMIT!} (at most ${budget!.max} per ${budget!.windowSeconds} s); the next one is allowed in ${retry} s`,
        code: 'DEACTIVATION_LIMIT',
        retry_after: retry,
        next_allowed_at: formatTimestamp(r.nextMs),
      };
    }
    return { success: true, message: 'machine deactivated; its activation slot is free', code: 'DEACTIVATED', ...none };
  }

  async verify(raw: string, fingerprint: string): Promise<LicenseVerifyResponse> {
    const fail = (code: LicenseCode, retryAfter: number | null = null): LicenseVerifyResponse => ({
      valid: false,
      error: MESSAGES[code],
      expires_in: null,
      token: null,
      code,
      lease_expires_at: null,
      retry_after: retryAfter,
      entitlements: null,
    });
    const refuse = async (key: StoredKey, code: LicenseCode, retryAfter: number | null = null): Promise<LicenseVerifyResponse> => {
      await this.refused({ key, code, machineId: fingerprint });
      return fail(code, retryAfter);
    };
    // The answer shows no count: the lookup need not count every seat of a floating key.
    const l = await this.lookupFor(raw, fingerprint, false);
    if (!l.ok) return fail(l.code);
    const key = l.key;
    if (!key.verification_enabled) return refuse(key, 'VERIFICATION_DISABLED');
    const bad = this.standing(key);
    if (bad) return refuse(key, bad);
    const fph = fingerprintHash(fingerprint);
    if (key.activation_policy === 'floating') {
      // Every verify of a floating key takes or renews the lease, and the token ends with it.
      const r = await this.takeSeat(key, fingerprint, null, key.machine_lease_expires_ms !== null);
      if (r.kind === 'full') return refuse(key, 'TOO_MANY_ACTIVATIONS', r.retryAfter);
      const iat = Math.floor(r.lease.now_ms / 1000);
      const exp = Math.min(iat + TOKEN_LIFETIME_SECONDS, Math.floor(r.lease.lease_expires_ms / 1000));
      return verified(key, exp - iat, await this.token(key, fph, iat, exp), formatTimestamp(r.lease.lease_expires_ms));
    }
    // Re-verifying an active machine (the common case, weekly in CI) needs no write lock.
    if (!key.machine_activated) {
      const r = await this.activate(key, fingerprint, null);
      if (r.kind === 'full') return refuse(key, 'TOO_MANY_ACTIVATIONS');
    }
    const iat = Math.floor(this.d.clock.now() / 1000);
    return verified(key, TOKEN_LIFETIME_SECONDS, await this.token(key, fph, iat, iat + TOKEN_LIFETIME_SECONDS), null);
  }

  /**
   * verify's answer for an activated machine of a node-locked key, made without waiting: its
   * lookup kept under an unchanged database (SqlLicenseStore.keptFindKeys) and its token signed
   * within the same second. Undefined for anything else (a lookup to read, a refusal to record, a
   * seat to take, a token to sign): verify answers then.
   */
  keptVerify(raw: string, fingerprint: string): LicenseVerifyResponse | undefined {
    const proof = this.proof(raw);
    const kept = proof && this.d.store.keptFindKeys(proof.prefix, fingerprint, false);
    if (!kept) return undefined;
    const l = this.match(proof.hash, kept);
    if (!l.ok) return undefined;
    const key = l.key;
    if (!key.verification_enabled || this.standing(key) !== undefined || key.activation_policy === 'floating' || !key.machine_activated) return undefined;
    const iat = Math.floor(this.d.clock.now() / 1000);
    const token = this.signedToken(key, fingerprintHash(fingerprint), iat, iat + TOKEN_LIFETIME_SECONDS);
    return token === undefined ? undefined : verified(key, TOKEN_LIFETIME_SECONDS, token, null);
  }

  /**
   * Renews a floating key's live lease (`RENEWED` with its new end). A node-locked machine that is
   * activated answers `RENEWED` with no lease; a machine without a live lease (lapsed, never
   * taken, or another key's) `MACHINE_NOT_ACTIVATED`; a revoked, suspended or expired key its
   * code, renewing nothing.
   */
  async heartbeat(raw: string, fingerprint: string): Promise<LicenseHeartbeatResponse> {
    const fail = (code: LicenseCode, message = MESSAGES[code]!): LicenseHeartbeatResponse => ({ success: false, message, code, lease_expires_at: null });
    const renewed = (lease: RenewedLease): LicenseHeartbeatResponse => ({ success: true, message: 'lease renewed', code: 'RENEWED', lease_expires_at: lease.lease_expires_at });
    const proof = this.proof(raw);
    if (!proof) return fail('MALFORMED_KEY');
    // The lookup, the renewal and its event in one transaction, grouped with this turn's others
    // where the store groups writes: on SQLite a read transaction of its own costs a heartbeat
    // as much as its statements do (the file locks taken and released).
    return this.groups.run(async (tx) => {
      // A floating key this process has found before: its renewal, which checks what may have
      // changed (revoked, suspended, the lease live), is the whole heartbeat. Any other outcome
      // is told by the lookup below.
      const known = proof.known;
      if (known && (known.expires_ms === null || known.expires_ms > this.d.clock.now())) {
        const lease = await this.renewIn(tx, known, fingerprint, known.lease_seconds);
        if (lease) return renewed(lease);
      }
      const l = this.match(proof.hash, await tx.findKeys(proof.prefix, fingerprint, false));
      if (!l.ok) return fail(l.code);
      const key = l.key;
      if (key.activation_policy === 'floating') proof.known ??= knownKey(key);
      const refuse = async (code: LicenseCode, message?: string): Promise<LicenseHeartbeatResponse> => {
        await this.refused({ key, code, machineId: fingerprint }, tx);
        return fail(code, message);
      };
      const bad = this.standing(key);
      if (bad) return refuse(bad);
      if (key.activation_policy !== 'floating') {
        if (!key.machine_activated) return refuse('MACHINE_NOT_ACTIVATED');
        return { success: true, message: 'the machine is activated (a node-locked key holds no lease)', code: 'RENEWED', lease_expires_at: null };
      }
      const lease = key.machine_lease_expires_ms === null ? undefined : await this.renewIn(tx, key, fingerprint, key.lease_seconds ?? 1);
      if (!lease) return refuse('MACHINE_NOT_ACTIVATED', NO_LEASE);
      return renewed(lease);
    });
  }

  /**
   * Ed25519 signatures are deterministic, so the same claims under the same key give the same
   * token: within one second (same `iat`) a repeated verify reuses it instead of signing again.
   */
  private readonly recent = new Map<string, { iat: number; exp: number; kid: string; entitlements: string; token: string }>();

  /** The token signed last for these claims, if it is still what token would sign (same second, key and entitlements). */
  private signedToken(key: StoredKey, fph: string, iat: number, exp: number): string | undefined {
    const hit = this.recent.get(`${key.id}\n${fph}`);
    return hit && hit.iat === iat && hit.exp === exp && hit.kid === this.d.keyring.currentKid() && hit.entitlements === key.entitlements.join(',') ? hit.token : undefined;
  }

  private async token(key: StoredKey, fph: string, iat: number, exp: number): Promise<string> {
    const hit = this.signedToken(key, fph, iat, exp);
    if (hit !== undefined) return hit;
    // The signing key's id is read before signing: a rotation while it signs leaves the memo
    // naming the older key, so the next verify signs again rather than reuse a token of the old.
    const kid = this.d.keyring.currentKid();
    const claims: LicenseTokenClaims & { [k: string]: unknown } = {
      iss: this.d.issuer,
      sub: key.id,
      license: key.id,
      item: key.item_id,
      fph,
      iat,
      exp,
      entitlements: key.entitlements,
    };
    const token = await this.d.keyring.signJwt(claims);
    if (this.recent.size >= 10_000) this.recent.clear();
    this.recent.set(`${key.id}\n${fph}`, { iat, exp, kid, entitlements: key.entitlements.join(','), token });
    return token;
  }

  /**
   * The item's license template with `{{item_name}}`, `{{licensee}}`, `{{year}}` and
   * `{{key_prefix}}` filled in; undefined when the item is missing or has no license. The
   * key, when one is presented for this item, personalises the text; `code` tells a failed
   * lookup, which counts towards the abuse limit like any other.
   */
  async licenseText(itemId: string, rawKey: string | undefined): Promise<{ text: string | undefined; code?: LicenseCode }> {
    const item = await this.d.store.getItem(itemId);
    if (!item || item.license_template === null) return { text: undefined };
    let key: StoredKey | undefined;
    let code: LicenseCode | undefined;
    if (rawKey !== undefined) {
      const l = await this.lookup(rawKey);
      if (!l.ok) code = l.code;
      else if (l.key.item_id === item.id) key = l.key;
    }
    const values: Record<string, string> = {
      item_name: item.name,
      item_id: item.id,
      licensee: key?.licensee ?? 'the licensee',
      year: String(new Date(key ? Date.parse(key.created_at) : this.d.clock.now()).getUTCFullYear()),
      key_prefix: key ? displayPrefix(key.key_prefix) : '(no key)',
    };
    return { text: item.license_template.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (m, name: string) => values[name] ?? m), code };
  }
}

export function newKeyId(): string {
  return `lk_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
}
