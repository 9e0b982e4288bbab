// Starts real ticket tracker nodes in this process on 127.0.0.1 port 0, each with its own
// data directory, and a raw HTTP helper for talking to them.
import { Writable } from 'node:stream';
import { startService, type RunningService } from '../../daemon/start.js';
import { createLogger } from '../../daemon/logger.js';
import type { Clock } from '../../src/util/clock.js';
import type { TicketsOptions } from '../../daemon/services/tickets/options.js';
import { tempDir } from './tmp.js';

export interface TicketNode {
  url: string;
  dataDir: string;
  service: RunningService;
  announced: string[];
  logs: string[];
  stop(): Promise<void>;
  req(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test bodies are inspected field by field
}

export const TOKEN = 'shared-test-token-0123456789';

export async function startNode(dataDir: string, flags: TicketsOptions = {}, opts: { clock?: Clock; env?: NodeJS.ProcessEnv; token?: string | null; port?: number } = {}): Promise<TicketNode> {
  const logs: string[] = [];
  const announced: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      logs.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  const out = new Writable({
    write(chunk: Buffer, _e, cb) {
      announced.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  const token = opts.token === null ? undefined : (opts.token ?? TOKEN);
  const service = await startService('tickets', {
    host: '127.0.0.1',
    port: opts.port ?? 0,
    dataDir,
    options: { token, ...flags },
    env: opts.env ?? {},
    logger: createLogger({ level: 'debug', stream: sink, pretty: false }),
    clock: opts.clock,
    out,
  });
  const url = service.url;
  return {
    url,
    dataDir,
    service,
    announced,
    logs,
    stop: () => service.close(),
    async req(method, path, body, headers = {}) {
      const h: Record<string, string> = { authorization: `Bearer ${token ?? ''}`, ...headers };
      let payload: string | undefined;
      if (body !== undefined) {
        payload = typeof body === 'string' ? body : JSON.stringify(body);
        h['content-type'] ??= 'application/json';
      }
      const res = await fetch(url + path, { method, headers: h, body: payload });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // keep text
      }
      return { status: res.status, body: parsed };
    },
  };
}

/**
 * startNode in a new temporary data directory; `bin` takes the cleanups (the node's stop, then
 * the directory's removal, in the order a test's cleanup stack runs them: last in, first out).
 */
export async function startTempNode(bin: (cleanup: () => Promise<void> | void) => void, flags: TicketsOptions = {}, opts: Parameters<typeof startNode>[2] = {}): Promise<TicketNode> {
  const dir = tempDir();
  bin(() => dir.remove());
  const n = await startNode(dir.path, flags, opts);
  bin(() => n.stop());
  return n;
}
