// Fake peers and endpoints on 127.0.0.1 for the hostile-answer tests: a server on an ephemeral
// port closed by the test's own clean-up, and a huge JSON answer that holds mid-stream until told.
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Registers a clean-up: vitest's onTestFinished, or a list an afterEach drains. */
export type Bin = (c: () => Promise<void> | void) => void;

/**
 * Listens on 127.0.0.1 at a free port and registers the server's closing (open connections cut
 * first: a hostile answer may be mid-stream). Returns the base URL.
 */
export async function listenLocal(server: Server, bin: Bin, beforeClose?: () => void): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  bin(
    () =>
      new Promise<void>((r) => {
        beforeClose?.();
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** What a padded answer has written, and whether its reader hung up. */
export interface PaddedAnswer {
  sent: number;
  closed: boolean;
  /** Lets the answer go on past `holdAt`. */
  release: () => void;
}

/**
 * Writes `head`, then `total` bytes of `x` inside a JSON string, then `"}`, as fast as the reader
 * takes them, holding once after `holdAt` bytes until released: the test can look at the reader
 * while the answer is open. The answer is valid JSON if read to its end.
 */
export function padAnswer(res: ServerResponse, head: string, total: number, holdAt: number): PaddedAnswer {
  const chunk = Buffer.alloc(256 * 1024, 'x');
  let gate!: () => void;
  const released = new Promise<void>((r) => (gate = r));
  const a: PaddedAnswer = { sent: 0, closed: false, release: gate };
  res.req.socket.once('close', () => (a.closed = true));
  res.write(head);
  let held = false;
  const pump = (): void => {
    while (a.sent < total && !res.destroyed) {
      if (a.sent >= holdAt && !held) {
        held = true;
        return void released.then(pump);
      }
      a.sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end('"}');
  };
  pump();
  return a;
}
