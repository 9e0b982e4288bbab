// The monitor's SQLite schema, version by version: append only, since data directories in the field
// are at some version of this list (the versions are kept in schema_migrations, component
// `monitor`). Version 2 folds the raw rows of a database made before rollups existed.
import type { Db, Migration } from './sqlite.js';
import { CUM_COLUMNS, floorTo, GRAIN_MS, plus, RollupAcc, ZERO } from './monitor-rollups.js';
import type { RollupGrain } from './monitor.js';

/** The same text on both engines (their integer types suffice for epoch milliseconds). */
export const HEARTBEATS_TABLE = `CREATE TABLE heartbeats (
     target TEXT PRIMARY KEY,
     ping_key TEXT NOT NULL,
     since BIGINT NOT NULL,
     last_start BIGINT,
     last_end BIGINT,
     last_ok INTEGER,
     last_error TEXT
   )`;

/**
 * Alerting (issue 32), the same text on both engines: ad-hoc silences (a NULL target silences
 * every target), the parent an incident was caused by, the last send to each alert channel, and
 * each incident's timeline (opened, alerted, reminded, silenced, caused by, resolved).
 */
export const ALERTING_TABLES = `CREATE TABLE silences (
     id TEXT PRIMARY KEY,
     target TEXT,
     reason TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     expires_at BIGINT NOT NULL
   );
   CREATE INDEX silences_expires ON silences (expires_at);
   ALTER TABLE incidents ADD COLUMN caused_by TEXT;
   CREATE TABLE alert_sends (
     channel TEXT PRIMARY KEY,
     event TEXT NOT NULL,
     target TEXT NOT NULL,
     incident_id BIGINT,
     at BIGINT NOT NULL,
     ok INTEGER NOT NULL,
     attempts INTEGER NOT NULL,
     error TEXT
   );
   CREATE TABLE incident_events (
     incident_id BIGINT NOT NULL,
     ts BIGINT NOT NULL,
     kind TEXT NOT NULL,
     detail TEXT
   );
   CREATE INDEX incident_events_incident ON incident_events (incident_id, ts)`;

/** A whole rollup row, written as the backfill computed it. */
const UPSERT_ROLLUP = (g: RollupGrain): string => {
  const cols = ['target', 'start', 'operational', 'degraded', 'down', 'maintenance', 'rt_count', 'rt_sum', 'rt_min', 'rt_max', 'hist', ...(g === 'hour' ? CUM_COLUMNS : [])];
  return `INSERT OR REPLACE INTO rollup_${g} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
};

export const MONITOR_MIGRATIONS: Migration[] = [
  `CREATE TABLE snapshots (
     id INTEGER PRIMARY KEY,
     target TEXT NOT NULL,
     ts INTEGER NOT NULL,
     checked_at TEXT NOT NULL,
     status TEXT NOT NULL,
     response_time_ms INTEGER NOT NULL,
     details TEXT,
     error TEXT
   );
   CREATE INDEX snapshots_target_ts ON snapshots(target, ts, status, response_time_ms);
   CREATE TABLE route_checks (target TEXT NOT NULL, path TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (target, path));
   CREATE TABLE dns_checks (target TEXT NOT NULL, key TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (target, key));
   CREATE TABLE results (target TEXT NOT NULL, kind TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (target, kind));
   CREATE TABLE test_runs (
     id INTEGER PRIMARY KEY,
     target TEXT NOT NULL,
     ts INTEGER NOT NULL,
     started_at TEXT NOT NULL,
     exit_code INTEGER,
     duration_ms INTEGER NOT NULL,
     passed INTEGER NOT NULL,
     error TEXT
   );
   CREATE INDEX test_runs_target_ts ON test_runs(target, ts);
   CREATE TABLE incidents (
     id INTEGER PRIMARY KEY,
     target TEXT NOT NULL,
     ts_start INTEGER NOT NULL,
     started_at TEXT NOT NULL,
     ended_at TEXT,
     ts_end INTEGER,
     cause TEXT NOT NULL,
     checks INTEGER NOT NULL
   );
   CREATE INDEX incidents_target ON incidents(target, ts_start);`,
  // Rollups (issue 14): per target and hour / UTC day, the checks by outcome and a latency
  // histogram, folded in as each check is recorded; raw rows are kept only for the raw retention.
  // Hourly rows also carry running totals (CUM_COLUMNS), so any run of hours is two lookups.
  (db: Db): void => {
    db.exec(`ALTER TABLE snapshots ADD COLUMN maintenance INTEGER NOT NULL DEFAULT 0;
      DROP INDEX snapshots_target_ts;
      CREATE INDEX snapshots_target_ts ON snapshots(target, ts, status, response_time_ms, maintenance);
      CREATE TABLE monitor_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
      ${['hour', 'day'].map((g) => `CREATE TABLE rollup_${g} (
        target TEXT NOT NULL,
        start INTEGER NOT NULL,
        operational INTEGER NOT NULL,
        degraded INTEGER NOT NULL,
        down INTEGER NOT NULL,
        maintenance INTEGER NOT NULL,
        rt_count INTEGER NOT NULL,
        rt_sum INTEGER NOT NULL,
        rt_min INTEGER,
        rt_max INTEGER,
        hist BLOB,${g === 'hour' ? CUM_COLUMNS.map((c) => `\n        ${c} INTEGER NOT NULL,`).join('') : ''}
        PRIMARY KEY (target, start)
      ) WITHOUT ROWID;`).join('\n')}`);
    backfillRollups(db);
  },
  // Clusters (issue 15): at most one open incident per target, so two instances sharing a store
  // open it once; and the alert of each incident transition claimed once. A store from before
  // might hold two open incidents of one target (it never should): the older ones end when the
  // newest began.
  `UPDATE incidents SET ended_at = (SELECT n.started_at FROM incidents n WHERE n.target = incidents.target AND n.ended_at IS NULL ORDER BY n.ts_start DESC, n.id DESC LIMIT 1),
       ts_end = (SELECT n.ts_start FROM incidents n WHERE n.target = incidents.target AND n.ended_at IS NULL ORDER BY n.ts_start DESC, n.id DESC LIMIT 1)
     WHERE ended_at IS NULL AND id <> (SELECT n.id FROM incidents n WHERE n.target = incidents.target AND n.ended_at IS NULL ORDER BY n.ts_start DESC, n.id DESC LIMIT 1);
   CREATE UNIQUE INDEX incidents_one_open ON incidents(target) WHERE ended_at IS NULL;
   CREATE TABLE incident_alerts (incident_id INTEGER NOT NULL, event TEXT NOT NULL, PRIMARY KEY (incident_id, event)) WITHOUT ROWID;`,
  // Heartbeat targets (issue 31): a ping key per target and its last signals.
  HEARTBEATS_TABLE,
  // Alerting (issue 32): silences, causes, channel sends, incident timelines.
  ALERTING_TABLES,
];

/** Folds every raw row of a database made before rollups existed (run once, by the migration). */
function backfillRollups(db: Db): void {
  const put = { hour: db.prepare(UPSERT_ROLLUP('hour')), day: db.prepare(UPSERT_ROLLUP('day')) };
  let target: string | undefined;
  const open: Record<RollupGrain, { start: number; acc: RollupAcc } | undefined> = { hour: undefined, day: undefined };
  // Written after the read: a connection cannot write while it iterates. One row an hour a
  // target: 168,000 rows for a week of 1,000 targets.
  const done: [RollupGrain, unknown[]][] = [];
  let cum = ZERO; // the target's running totals over its hours so far
  const flush = (g: RollupGrain): void => {
    const o = open[g];
    if (o && target !== undefined) {
      const row = o.acc.row(target, o.start);
      if (g === 'hour') {
        cum = plus(cum, o.acc.outcomes());
        row.push(...cum);
      }
      done.push([g, row]);
    }
    open[g] = undefined;
  };
  const rows = db.prepare('SELECT target, ts, status, response_time_ms FROM snapshots ORDER BY target, ts').raw().iterate() as Iterable<[string, number, string, number]>;
  for (const [t, ts, status, rt] of rows) {
    if (t !== target) {
      flush('hour');
      flush('day');
      target = t;
      cum = ZERO;
    }
    for (const g of ['hour', 'day'] as const) {
      const start = floorTo(ts, GRAIN_MS[g]);
      if (open[g]?.start !== start) {
        flush(g);
        open[g] = { start, acc: new RollupAcc() };
      }
      open[g]!.acc.add(status, rt, false);
    }
  }
  flush('hour');
  flush('day');
  for (const [g, row] of done) put[g].run(...row);
}

