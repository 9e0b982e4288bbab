// Ad-hoc silences in the monitor store: while one is active for a target (or for every target),
// checks and incidents are recorded as usual but no alert is sent. Rows live in the monitor's
// database, so they survive restarts and every instance of a cluster reads the same ones.
import { randomBytes } from 'node:crypto';
import type { SqlDatabase } from './sql.js';
import { sqlText } from './sql-text.js';

export interface Silence {
  id: string;
  /** The silenced target; undefined silences every target. */
  target?: string;
  reason: string;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms: active while `now < expiresAt`. */
  expiresAt: number;
}

export type AddSilenceResult = { ok: true; silence: Silence } | { ok: false; reason: 'full'; active: number };

interface Row {
  id: string;
  target: string | null;
  reason: string;
  created_at: number | string;
  expires_at: number | string;
}

const COLS = 'id, target, reason, created_at, expires_at';
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** A fresh id: `sil_` and 12 base32 characters (60 random bits), URL-safe as it stands. */
export function newSilenceId(): string {
  const bytes = randomBytes(12);
  let out = 'sil_';
  // One character per byte (5 of its 8 bits): plain, and 32 divides 256, so no character is favoured.
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

function silence(r: Row): Silence {
  const s: Silence = { id: r.id, reason: r.reason, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) };
  if (r.target !== null) s.target = r.target;
  return s;
}

export class SqlSilences {
  constructor(private readonly sql: SqlDatabase) {}

  /**
   * Adds a silence unless `max` are active at `now` already. Counted and written under one lock,
   * so concurrent requests (on any instance of a cluster) never pass the cap together. Expired
   * rows are dropped on the way.
   */
  async add(input: { target?: string; reason: string; expiresAt: number }, now: number, max: number): Promise<AddSilenceResult> {
    return this.sql.transaction(async (tx) => {
      await tx.lockWithNext('monitor:silences');
      await tx.run('DELETE FROM silences WHERE expires_at <= ?', [now]);
      const active = Number((await tx.value<number | string>('SELECT COUNT(*) FROM silences', [])) ?? 0);
      if (active >= max) return { ok: false as const, reason: 'full' as const, active };
      const s: Silence = { id: newSilenceId(), reason: input.reason, createdAt: now, expiresAt: input.expiresAt };
      if (input.target !== undefined) s.target = input.target;
      await tx.run(sqlText`INSERT INTO silences (${COLS}) VALUES (?, ?, ?, ?, ?)`, [s.id, s.target ?? null, s.reason, s.createdAt, s.expiresAt]);
      return { ok: true as const, silence: s };
    });
  }

  /** The silences active at `now`, soonest to expire first. A read only (the dashboard calls it): expired rows go in `add` and `prune`. */
  async list(now: number): Promise<Silence[]> {
    return (await this.sql.all<Row>(sqlText`SELECT ${COLS} FROM silences WHERE expires_at > ? ORDER BY expires_at, id`, [now])).map(silence);
  }

  /** One silence by id while active at `now`. */
  async get(id: string, now: number): Promise<Silence | undefined> {
    const row = await this.sql.get<Row>(sqlText`SELECT ${COLS} FROM silences WHERE id = ? AND expires_at > ?`, [id, now]);
    return row ? silence(row) : undefined;
  }

  /** Removes a silence; true when it existed (an expired one counts as gone). */
  async remove(id: string, now: number): Promise<boolean> {
    return (await this.sql.run('DELETE FROM silences WHERE id = ? AND expires_at > ?', [id, now])).changes > 0;
  }

  /**
   * The silence that holds `target`'s alerts at `now`, if any: one naming the target or one for
   * every target, the one lasting longest first (the one to tell about). A read only: the alert path.
   */
  async activeFor(target: string, now: number): Promise<Silence | undefined> {
    const row = await this.sql.get<Row>(sqlText`SELECT ${COLS} FROM silences WHERE (target = ? OR target IS NULL) AND expires_at > ? ORDER BY expires_at DESC, id LIMIT 1`, [target, now]);
    return row ? silence(row) : undefined;
  }

  /** Deletes the silences expired at `now`; answers how many. */
  async prune(now: number): Promise<number> {
    return (await this.sql.run('DELETE FROM silences WHERE expires_at <= ?', [now])).changes;
  }
}
