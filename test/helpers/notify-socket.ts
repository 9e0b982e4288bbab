// A real AF_UNIX datagram socket standing where systemd's notify socket stands (unix-dgram, as
// the daemon sends with), keeping every sd_notify message it receives with its arrival time.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { tempDir } from './tmp.js';
import { waitFor } from './wait.js';

/** The test's own marker datagram: datagrams queue in the order sent, whoever sends them. */
const DRAIN = 'X-MKT-TEST-DRAIN=';

interface ReceivingSocket {
  bind(path: string): void;
  send(buf: Buffer, offset: number, length: number, path: string, callback: (err?: Error) => void): void;
  on(event: 'message', listener: (buf: Buffer) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  close(): void;
}

export interface NotifyMessage {
  /** The datagram as sent: `KEY=value` lines. */
  text: string;
  fields: Record<string, string>;
  /** performance.now() when it arrived. */
  at: number;
}

export interface NotifySocket {
  path: string;
  messages: NotifyMessage[];
  /** Resolves once every datagram queued on the socket so far has been read (a marker of ours comes last). */
  drain(): Promise<void>;
  close(): void;
}

export function parseNotify(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) fields[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return fields;
}

/** Binds a fresh socket file in a temporary directory (short enough for sun_path's 108 bytes). */
export function listenNotify(): NotifySocket {
  const dir = tempDir('mkt-notify-');
  const path = join(dir.path, 'notify');
  const dgram = createRequire(import.meta.url)('unix-dgram') as { createSocket(type: 'unix_dgram'): ReceivingSocket };
  const socket = dgram.createSocket('unix_dgram');
  const messages: NotifyMessage[] = [];
  let drained = 0;
  let markers = 0;
  socket.on('message', (buf) => {
    const text = buf.toString('utf8');
    if (text.startsWith(DRAIN)) {
      drained = Number(text.slice(DRAIN.length));
      return;
    }
    messages.push({ text, fields: parseNotify(text), at: performance.now() });
  });
  socket.on('error', (err) => {
    throw err;
  });
  socket.bind(path);
  return {
    path,
    messages,
    async drain() {
      const n = ++markers;
      const marker = Buffer.from(`${DRAIN}${n}`);
      const sender = dgram.createSocket('unix_dgram');
      try {
        await new Promise<void>((resolve, reject) => sender.send(marker, 0, marker.length, path, (err) => (err ? reject(err) : resolve())));
      } finally {
        sender.close();
      }
      await waitFor(async () => drained >= n, 'the notify socket to drain');
    },
    close() {
      socket.close();
      dir.remove();
    },
  };
}
