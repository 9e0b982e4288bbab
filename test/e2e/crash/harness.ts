// Crash-safety harness: runs the real `mkt serve <service>` binary on a data dir, fires concurrent
// writes at it, SIGKILLs it while writes are in flight, and restarts it on the same data dir, so a
// test can check that every write that was acknowledged (2xx, whole answer read) is still there.
import { expect } from 'vitest';
import { serveBinary, type Served } from '../../helpers/serve-binary.js';
import { marketplaceEnvFor } from '../../helpers/pg.js';

export type { Served } from '../../helpers/serve-binary.js';

/** Stops a server with SIGTERM and waits for its exit (nothing to do when it already ended). */
export async function stopServed(s: Served): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  s.child.kill('SIGTERM');
  await s.exited;
}

/** Starts `mkt serve <service> --port 0 --data-dir DIR` and waits for `listening on`. */
export async function serve(service: string, dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<Served> {
  // Under MKT_TEST_ENGINE=postgres the marketplace runs on the data dir's own PostgreSQL database.
  const engineEnv = service === 'marketplace' ? await marketplaceEnvFor(dataDir) : {};
  return serveBinary(service, dataDir, { ...engineEnv, ...env });
}

export interface CrashRun<T> {
  /** Values of the writes answered 2xx (answer read whole), before or just after the kill. */
  acknowledged: T[];
  /** Writes sent before the kill that never got an answer: the server died under them. */
  cutOff: number;
}

/**
 * `workers` loops each send one write after another (`write(worker, i)` resolves with the
 * acknowledged value, or undefined when the answer was not a 2xx). Once `minAcks` writes were
 * acknowledged and `minMs` passed, a timer SIGKILLs the server, with writes in flight.
 */
export async function writeUntilKilled<T>(server: Served, opts: { workers: number; minAcks: number; minMs: number; write: (worker: number, i: number) => Promise<T | undefined> }): Promise<CrashRun<T>> {
  const acknowledged: T[] = [];
  let cutOff = 0;
  let refused = 0;
  let killed = false;
  // SIGKILL takes effect when the kernel gets to it (a process inside fsync dies after it
  // returns): what counts is when the server was seen dead, not when the signal was sent.
  let diedAt = Infinity;
  void server.exited.then(() => (diedAt = performance.now()));
  const started = Date.now();
  const killer = setInterval(() => {
    if (acknowledged.length < opts.minAcks || Date.now() - started < opts.minMs) return;
    clearInterval(killer);
    killed = true;
    server.child.kill('SIGKILL');
  }, 20);
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; ; i++) {
      const sentAt = performance.now();
      try {
        const v = await opts.write(w, i);
        if (v === undefined) refused++;
        else acknowledged.push(v);
      } catch (err) {
        if (!killed) throw new Error(`write failed before the kill (${acknowledged.length} acknowledged): ${String(err)}`);
        // Sent while the server lived and never answered: in flight when it died. A refused
        // connection never reached it.
        const code = ((err as { cause?: { code?: string } }).cause ?? {}).code;
        if (sentAt < diedAt && code !== 'ECONNREFUSED') cutOff++;
        return;
      }
      if (refused > 50) throw new Error(`over 50 writes refused before the kill (${acknowledged.length} acknowledged)`);
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.workers }, (_, w) => worker(w)));
  } finally {
    clearInterval(killer);
  }
  expect(await server.exited).toBe('SIGKILL');
  return { acknowledged, cutOff };
}

/** fetch with a JSON body; resolves with the status and the parsed answer (read whole). */
export async function send(url: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}
