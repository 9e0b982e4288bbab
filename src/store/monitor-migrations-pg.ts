// The monitor's PostgreSQL schema: its list starts at the final schema of the SQLite list
// (monitor-migrations-sqlite.ts; the two version apart), plus the cluster's leases and instance
// heartbeats. Append only: databases in the field are at some version of it.
import type { SqlMigration } from './sql.js';
import type { RollupGrain } from './monitor.js';
import { CUM_COLUMNS } from './monitor-rollups.js';
import { ALERTING_TABLES, HEARTBEATS_TABLE } from './monitor-migrations-sqlite.js';

const ROLLUP_TABLE = (g: RollupGrain): string => `CREATE TABLE rollup_${g} (
    target TEXT NOT NULL,
    start BIGINT NOT NULL,
    operational INTEGER NOT NULL,
    degraded INTEGER NOT NULL,
    down INTEGER NOT NULL,
    maintenance INTEGER NOT NULL,
    rt_count INTEGER NOT NULL,
    rt_sum BIGINT NOT NULL,
    rt_min INTEGER,
    rt_max INTEGER,
    hist BYTEA,${g === 'hour' ? CUM_COLUMNS.map((c) => `\n    ${c} BIGINT NOT NULL,`).join('') : ''}
    PRIMARY KEY (target, start)
  );`;

/** PostgreSQL's list starts at the final schema of the SQLite list (they version apart). */
export const MONITOR_PG_MIGRATIONS: SqlMigration[] = [
  `CREATE TABLE snapshots (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     target TEXT NOT NULL,
     ts BIGINT NOT NULL,
     checked_at TEXT NOT NULL,
     status TEXT NOT NULL,
     response_time_ms INTEGER NOT NULL,
     details TEXT,
     error TEXT,
     maintenance INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX snapshots_target_ts ON snapshots (target, ts) INCLUDE (status, response_time_ms, maintenance);
   CREATE TABLE route_checks (target TEXT NOT NULL, path TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (target, path));
   CREATE TABLE dns_checks (target TEXT NOT NULL, key TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (target, key));
   CREATE TABLE results (target TEXT NOT NULL, kind TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (target, kind));
   CREATE TABLE test_runs (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     target TEXT NOT NULL,
     ts BIGINT NOT NULL,
     started_at TEXT NOT NULL,
     exit_code INTEGER,
     duration_ms INTEGER NOT NULL,
     passed INTEGER NOT NULL,
     error TEXT
   );
   CREATE INDEX test_runs_target_ts ON test_runs (target, ts);
   CREATE TABLE incidents (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     target TEXT NOT NULL,
     ts_start BIGINT NOT NULL,
     started_at TEXT NOT NULL,
     ended_at TEXT,
     ts_end BIGINT,
     cause TEXT NOT NULL,
     checks INTEGER NOT NULL
   );
   CREATE INDEX incidents_target ON incidents (target, ts_start);
   CREATE UNIQUE INDEX incidents_one_open ON incidents (target) WHERE ended_at IS NULL;
   CREATE TABLE incident_alerts (incident_id BIGINT NOT NULL, event TEXT NOT NULL, PRIMARY KEY (incident_id, event));
   CREATE TABLE monitor_meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
   ${ROLLUP_TABLE('hour')}
   ${ROLLUP_TABLE('day')}
   CREATE TABLE monitor_leases (target TEXT PRIMARY KEY, owner TEXT NOT NULL DEFAULT '', expires_at BIGINT NOT NULL DEFAULT 0);
   CREATE INDEX monitor_leases_owner ON monitor_leases (owner);
   CREATE TABLE monitor_instances (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     config_hash TEXT NOT NULL,
     targets INTEGER NOT NULL,
     version TEXT NOT NULL,
     started_at TEXT NOT NULL,
     seen_at BIGINT NOT NULL
   );`,
  // Heartbeat targets (issue 31).
  HEARTBEATS_TABLE,
  // Alerting (issue 32).
  ALERTING_TABLES,
];
