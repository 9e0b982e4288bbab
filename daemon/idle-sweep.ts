// The idle limit (ServerTimeouts.idleMs): a connection with a request in progress on which no byte
// moved either way for that long is closed. Node's own (`server.setTimeout`) arms a timer on each
// socket, re-arms it at every read and write and makes a new one twice a request; that cost the
// floor 2-3 µs a request (bench/README.md, "The idle limit swept"). Here one sweep every few seconds
// compares each connection's byte counts with the last sweep's, as node checks header deadlines.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** What the sweep last saw on one connection, and since when. */
interface Seen {
  read: number;
  written: number;
  since: number;
}

/** A socket of node:http; `_httpMessage` is the answer it is busy with (null between requests). */
type HttpSocket = Socket & { _httpMessage?: unknown };

/** How often to sweep: a quarter of the limit, between 50 ms and 5 s (a 60 s limit closes in 60-65 s). */
export function sweepInterval(idleMs: number): number {
  return Math.max(50, Math.min(5_000, Math.floor(idleMs / 4)));
}

export class IdleSweep {
  private readonly seen = new Map<HttpSocket, Seen>();

  constructor(
    private readonly idleMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  track(socket: Socket): void {
    this.seen.set(socket, { read: -1, written: -1, since: this.now() });
    socket.once('close', () => this.seen.delete(socket));
  }

  /** Connections tracked and not yet closed. */
  get size(): number {
    return this.seen.size;
  }

  /**
   * Closes each busy connection whose counts have not moved for the limit. A connection between
   * requests is the keep-alive timeout's (node's, kept), and one before its first request's
   * headers is the headers timeout's: their clocks start over when a request is in progress.
   */
  sweep(): void {
    const now = this.now();
    for (const [socket, s] of this.seen) {
      if (socket.destroyed) {
        this.seen.delete(socket);
        continue;
      }
      const read = socket.bytesRead;
      const written = socket.bytesWritten;
      if (read !== s.read || written !== s.written || socket._httpMessage == null) {
        s.read = read;
        s.written = written;
        s.since = now;
      } else if (now - s.since >= this.idleMs) {
        // As node's socket timeout does when nobody listens for it.
        socket.destroy();
        this.seen.delete(socket);
      }
    }
  }
}

/** Applies the idle limit to `server`'s connections until it closes. */
export function sweepIdleConnections(server: Server, idleMs: number): IdleSweep {
  const idle = new IdleSweep(idleMs);
  server.on('connection', (socket: Socket) => idle.track(socket));
  const timer = setInterval(() => idle.sweep(), sweepInterval(idleMs)).unref();
  server.once('close', () => clearInterval(timer));
  return idle;
}
