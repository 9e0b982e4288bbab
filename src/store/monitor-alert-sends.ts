// The last send of each alert channel in the monitor store (`alert_sends`, one row a channel):
// what `GET /api/alerts` and `mkt monitor alerts` show. Both engines, one SQL text.
import type { SqlDatabase } from './sql.js';

export interface AlertSend {
  channel: string;
  event: string;
  target: string;
  incidentId?: number;
  /** When the send finished (its last attempt), epoch ms. */
  at: number;
  ok: boolean;
  attempts: number;
  /** Why the last attempt failed (no URL, no secret in it). */
  error?: string;
}

interface Row {
  channel: string;
  event: string;
  target: string;
  incident_id: number | string | null;
  at: number | string;
  ok: number;
  attempts: number;
  error: string | null;
}

const UPSERT = `INSERT INTO alert_sends (channel, event, target, incident_id, at, ok, attempts, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (channel) DO UPDATE SET event = excluded.event, target = excluded.target, incident_id = excluded.incident_id, at = excluded.at, ok = excluded.ok, attempts = excluded.attempts, error = excluded.error`;

export class SqlAlertSends {
  constructor(private readonly sql: SqlDatabase) {}

  /** Replaces the channel's last send. */
  async record(s: AlertSend): Promise<void> {
    await this.sql.run(UPSERT, [s.channel, s.event, s.target, s.incidentId ?? null, s.at, s.ok ? 1 : 0, s.attempts, s.error ?? null]);
  }

  /** Every channel's last send, by channel name. */
  async all(): Promise<Map<string, AlertSend>> {
    const rows = await this.sql.all<Row>('SELECT channel, event, target, incident_id, at, ok, attempts, error FROM alert_sends ORDER BY channel', []);
    return new Map(
      rows.map((r) => [
        r.channel,
        { channel: r.channel, event: r.event, target: r.target, ...(r.incident_id !== null ? { incidentId: Number(r.incident_id) } : {}), at: Number(r.at), ok: Number(r.ok) === 1, attempts: Number(r.attempts), ...(r.error !== null ? { error: r.error } : {}) },
      ]),
    );
  }
}
