// The daemon writes its log from a buffer (daemon/logger.ts): a stop by SIGTERM still writes
// every line, the request lines and the final `stopped` included, also when whoever reads
// stdout is slow and the pipe is full while the requests are answered.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { tempDir } from '../../helpers/tmp.js';

const mkt = join(import.meta.dirname, '../../../bin/mkt');
const TOKEN = 'log-test-token-0123456789';
const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

interface Served {
  child: ChildProcess;
  url: string;
  stdout(): string;
  exit: Promise<number | null>;
}

async function serveTickets(): Promise<Served> {
  const dir = tempDir('mkt-logs-');
  cleanups.push(() => dir.remove());
  const child = spawn(process.execPath, [mkt, 'serve', 'tickets', '--port', '0', '--data-dir', dir.path], {
    env: { ...process.env, MKT_TICKETS_TOKEN: TOKEN, MKT_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(() => child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const look = (): void => {
      const m = /^listening on (http:\/\/\S+)$/m.exec(out);
      if (m) {
        child.stdout!.off('data', look);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', look);
    void exit.then(() => reject(new Error(`exited before listening:\n${out}${err}`)));
  });
  return { child, url, stdout: () => out, exit };
}

/** Creates `n` tickets, `parallel` requests at a time; returns their short ids. */
async function createTickets(url: string, n: number, parallel = 10): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < n; i = next++) {
      const res = await fetch(`${url}/tickets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: `ticket ${i}`, description: 'x'.repeat(100) }),
      });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { short_id: string }).short_id);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return ids;
}

type Line = Record<string, unknown> & { msg?: string };

/** The JSON log lines (every line but `listening on` must be one). */
function logLines(stdout: string): Line[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('listening on'))
    .map((l) => JSON.parse(l) as Line);
}

function expectEveryLine(stdout: string, created: string[]): void {
  const lines = logLines(stdout);
  const requests = lines.filter((l) => l.msg === 'request' && l.route === '/tickets' && l.status === 201);
  expect(requests).toHaveLength(created.length);
  const logged = new Set(lines.filter((l) => l.msg === 'ticket created').map((l) => l.ticket));
  expect(created.filter((id) => !logged.has(id))).toEqual([]);
  const msgs = lines.map((l) => l.msg);
  expect(msgs.indexOf('shutting down')).toBeGreaterThan(msgs.lastIndexOf('request'));
  expect(msgs.at(-1)).toBe('stopped');
}

describe('log lines at a stop', () => {
  it('SIGTERM right after the last answer: every request line and `stopped` are written', async () => {
    const s = await serveTickets();
    const created = await createTickets(s.url, 300);
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);
    expectEveryLine(s.stdout(), created);
  });

  it('stdout read slowly: the server answers while the pipe is full, and the stop still writes every line', async () => {
    const s = await serveTickets();
    // Nobody reads stdout now: the pipe (64 KiB) fills long before these ~1,000 pairs of lines end.
    s.child.stdout!.pause();
    const created = await createTickets(s.url, 1000);
    s.child.kill('SIGTERM');
    // The stop waits for its lines; let it wait a while before the reader comes back.
    await new Promise((r) => setTimeout(r, 1000));
    s.child.stdout!.resume();
    expect(await s.exit).toBe(0);
    expect(s.stdout().length).toBeGreaterThan(128 * 1024);
    expectEveryLine(s.stdout(), created);
  });
});
