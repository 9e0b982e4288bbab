// What the backup e2e tests share: the real binary run as an awaited child (never a synchronous
// one beside a running server), a write loop that records each acknowledged write, and the
// check that a restored SQLite database passes integrity_check.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export const MKT = join(import.meta.dirname, '../../../bin/mkt');

export interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** `mkt ...args`, awaited; `stdin` given (or closed at once), output collected. */
export function mkt(args: string[], env: NodeJS.ProcessEnv = {}, stdin = '', cwd?: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MKT, ...args], { env: { ...process.env, MKT_LOG_LEVEL: 'warn', ...env }, stdio: ['pipe', 'pipe', 'pipe'], cwd });
    child.stdin.on('error', () => undefined); // a command that does not read its stdin
    child.stdin.end(stdin);
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

/**
 * Runs `write` over and over until stopped, keeping what each acknowledged write returned, in
 * order. `acked()` at a moment is the list of writes acknowledged by then.
 */
export function writeLoop<T>(write: (i: number) => Promise<T>): { acked(): T[]; stop(): Promise<void> } {
  const acked: T[] = [];
  let stopped = false;
  const done = (async () => {
    for (let i = 0; !stopped; i++) acked.push(await write(i));
  })();
  return {
    acked: () => [...acked],
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/** `PRAGMA integrity_check` of a database file (the server that used it stopped): 'ok' or the problems. */
export function integrity(file: string): string {
  const db = new Database(file, { fileMustExist: true });
  try {
    return (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join('; ');
  } finally {
    db.close();
  }
}

/** Stops a served binary with SIGTERM and waits for it (a clean stop closes its database). */
export async function stopServed(s: { child: import('node:child_process').ChildProcess; exited: Promise<unknown> }): Promise<void> {
  if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
  await s.exited;
}
