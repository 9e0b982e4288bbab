// A real AF_UNIX datagram socket standing where systemd's notify socket stands (unix-dgram, as
// the daemon sends with), keeping every sd_notify message it receives with its arrival time.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { tempDir } from './tmp.js';

interface ReceivingSocket {
  bind(path: string): void;
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
  socket.on('message', (buf) => {
    const text = buf.toString('utf8');
    messages.push({ text, fields: parseNotify(text), at: performance.now() });
  });
  socket.on('error', (err) => {
    throw err;
  });
  socket.bind(path);
  return {
    path,
    messages,
    close() {
      socket.close();
      dir.remove();
    },
  };
}
