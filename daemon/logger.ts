// The daemon logger: pino JSON lines on stdout (journald-friendly), one short readable
// line per record on a terminal. Authorization and cookie headers are redacted everywhere.
import pino, { type Logger } from 'pino';
import { Writable } from 'node:stream';
import { LineBatch, type BatchTarget } from './log-batch.js';

export type { Logger };

/**
 * The words of the start-up line (`listening on http://HOST:PORT`), printed plain on stdout by
 * daemon/start.ts and logged as a record too (for JSON logs and journald).
 */
export const LISTENING_ON = 'listening on';

function prettyLine(obj: Record<string, unknown>): string {
  const { level, time, msg, pid: _pid, hostname: _h, ...rest } = obj;
  // On a terminal the plain line already says it: one `listening on`, not two.
  if (typeof msg === 'string' && msg.startsWith(`${LISTENING_ON} `)) return '';
  const names: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
  const t = new Date(Number(time)).toISOString().slice(11, 23);
  const extra = Object.keys(rest).length ? ' ' + JSON.stringify(rest) : '';
  return `${t} ${(names[Number(level)] ?? String(level)).padEnd(5)} ${String(msg ?? '')}${extra}\n`;
}

export interface LoggerOptions {
  level?: string;
  /** Destination; default stdout. */
  stream?: NodeJS.WritableStream;
  pretty?: boolean;
}

/**
 * Bytes of JSON lines gathered before stdout is written, and the longest a line waits for
 * them. One synchronous write of one line per request cost a third of a busy server's CPU;
 * gathered, a busy server writes 16 KiB at a time and an idle one within a tenth of a second.
 * The lines are gathered in front of sonic-boom (daemon/log-batch.ts), which then writes each
 * chunk as it comes.
 */
export const LOG_BUFFER_BYTES = 16 * 1024;
export const LOG_FLUSH_MS = 100;

type Flush = (cb: (err?: Error) => void) => void;

/**
 * The flush of each buffered destination as made: pino swaps it for a no-op when the reader
 * of stdout is gone (EPIPE), and a flush that never calls back must not hold a stop forever.
 */
const ownFlush = new WeakMap<object, Flush>();

/** Stdout as pino's asynchronous destination (sonic-boom on fd 1), written from buffers. */
function bufferedStdout(): LineBatch {
  // pino flushes it synchronously on process exit (its own exit hook, after the batch's), so a
  // crash after the last line still writes it; `flushLogs` is the orderly path the stop takes.
  // minLength 1: each chunk the batch hands on is written at once, and a flush still waits for
  // the write under way (sonic-boom's flush does not wait at all with minLength 0).
  // Buffer mode: the batch hands on bytes, which are written as they are (a string would be
  // encoded again at every write).
  const stream = pino.destination({ dest: 1, sync: false, minLength: 1, contentMode: 'buffer' });
  ownFlush.set(stream, stream.flush);
  // pino stops writing when the reader has gone (EPIPE) and lets other errors crash the process;
  // but a reader that closed with lines unread gives ECONNRESET, and then sonic-boom's flushSync
  // (pino's exit hook) retries its write for ever. Any failed write ends the log alike: the
  // daemon goes on serving.
  stream.on('error', () => {
    const silent = (): void => {};
    Object.assign(stream, { write: () => true, flush: (cb?: () => void) => cb?.(), flushSync: silent, end: silent });
  });
  // sonic-boom's types know only its utf8 mode's `write(string)`; in buffer mode it takes Buffers.
  return new LineBatch(stream as unknown as BatchTarget, LOG_BUFFER_BYTES, LOG_FLUSH_MS);
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const dest = opts.stream ?? process.stdout;
  const pretty = opts.pretty ?? Boolean((dest as { isTTY?: boolean }).isTTY);
  const stream = pretty
    ? new Writable({
        write(chunk: Buffer, _enc, cb) {
          for (const line of chunk.toString('utf8').split('\n')) {
            if (!line) continue;
            try {
              const text = prettyLine(JSON.parse(line) as Record<string, unknown>);
              if (text) dest.write(text);
            } catch {
              dest.write(line + '\n');
            }
          }
          cb();
        },
      })
    : opts.stream ?? bufferedStdout();
  return pino(
    {
      level: opts.level ?? 'info',
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie', 'token', '*.token', 'password', '*.password', 'key', '*.key'],
        censor: '[redacted]',
      },
      base: { pid: process.pid },
    },
    stream as pino.DestinationStream,
  );
}

/**
 * Writes out every line the logger still holds and resolves once it is written, however slowly
 * stdout is read (a stop must not lose its last lines). Streams that write at once resolve at once.
 */
export async function flushLogs(logger: Logger): Promise<void> {
  const own = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  if (!(own instanceof LineBatch)) return;
  own.drain();
  const stream: BatchTarget = own.target;
  const flush = stream.flush;
  if (!flush || ownFlush.get(stream) !== flush) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      stream.off('error', done);
      resolve();
    };
    // An error while flushing (EPIPE: nobody reads stdout any more) ends the wait too; the
    // callback's own error is fsync's (EINVAL on a pipe), after the bytes were written.
    stream.once('error', done);
    flush.call(stream, done);
  });
  try {
    // A flush writes one buffered chunk of up to 16 KiB; after a backlog, the rest goes now.
    stream.flushSync?.();
  } catch {
    // The destination failed or was closed: there is nothing more it can write.
  }
}
