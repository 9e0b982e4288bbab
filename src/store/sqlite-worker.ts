// Runs SQLite statements on a database file in a worker thread, so that a statement of many
// seconds (quick_check or REINDEX of a gigabyte, an FTS5 rebuild) leaves the event loop free.
// The worker's code is a data: URL module, not a file: the CLI runs from a bundle (dist/cli.cjs)
// and the tests from TypeScript sources, and neither has a worker file it could point at; the
// code needs nothing but the SQLite driver, whose resolved path it is given.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

export interface WorkerStep {
  /** One statement, or several (then without params, run as a script). */
  sql: string;
  params?: (string | number | null)[];
  /** Keep the rows it returns, as arrays of column values. */
  rows?: boolean;
  /**
   * Run it with SQLite's defensive mode off, as it writes an FTS5 shadow table itself (say, to
   * drop FTS5 settings). Only for our own statements, on a file whose schema is known.
   */
  unsafe?: boolean;
}

export interface WorkerJob {
  file: string;
  /** Set before the steps, in order (`trusted_schema = OFF`, ...). */
  pragmas?: string[];
  /** Run the steps in one transaction. */
  transaction?: boolean;
  steps: WorkerStep[];
}

export interface WorkerOutcome {
  /** The rows of each step, [] for a step without `rows`. */
  rows: unknown[][][];
  /** How long each step took, ms. */
  ms: number[];
}

export interface RunningJob {
  done: Promise<WorkerOutcome>;
  /** Stops the worker (after the statement it is in); `done` then rejects. */
  stop(): Promise<void>;
}

const WORKER_CODE = `
import { parentPort, workerData } from 'node:worker_threads';
const { default: Database } = await import(workerData.driver);
const job = workerData.job;
const out = { rows: [], ms: [] };
let db;
try {
  db = new Database(job.file, { fileMustExist: true });
  for (const p of job.pragmas ?? []) db.pragma(p);
  const run = () => {
    for (const s of job.steps) {
      const t = performance.now();
      let rows = [];
      if (s.unsafe) db.unsafeMode(true);
      if (s.rows) rows = db.prepare(s.sql).raw(true).all(...(s.params ?? []));
      else if (s.params) db.prepare(s.sql).run(...s.params);
      else db.exec(s.sql);
      if (s.unsafe) db.unsafeMode(false);
      out.rows.push(rows);
      out.ms.push(performance.now() - t);
    }
  };
  if (job.transaction) db.transaction(run)(); else run();
  db.close();
  parentPort.postMessage({ ok: out });
} catch (err) {
  try { db?.close(); } catch {}
  parentPort.postMessage({ error: String(err?.message ?? err), code: err?.code });
}
`;

const driver = pathToFileURL(createRequire(import.meta.url).resolve('better-sqlite3')).href;

/** An error a step raised, with SQLite's code (SQLITE_CORRUPT, SQLITE_CONSTRAINT_UNIQUE, ...). */
export class WorkerSqlError extends Error {
  override readonly name = 'WorkerSqlError';
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/** Starts `job` in a new worker thread; the worker closes its connection before `done` settles. */
export function runInWorker(job: WorkerJob): RunningJob {
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(WORKER_CODE)}`), { workerData: { driver, job } });
  const done = new Promise<WorkerOutcome>((resolve, reject) => {
    let settled = false;
    worker.once('message', (m: { ok?: WorkerOutcome; error?: string; code?: string }) => {
      settled = true;
      if (m.ok) resolve(m.ok);
      else reject(new WorkerSqlError(m.error ?? 'the SQLite worker failed', m.code));
    });
    worker.once('error', (err) => {
      settled = true;
      reject(err);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the SQLite worker stopped (exit code ${code}) before it finished`));
    });
  });
  return {
    done,
    stop: async () => {
      await worker.terminate();
    },
  };
}
