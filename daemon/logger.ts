// The daemon logger: pino JSON lines on stdout (journald-friendly), one short readable
// line per record on a terminal. Authorization and cookie headers are redacted everywhere.
import pino, { type Logger } from 'pino';
import { Writable } from 'node:stream';

export type { Logger };

function prettyLine(obj: Record<string, unknown>): string {
  const { level, time, msg, pid: _pid, hostname: _h, ...rest } = obj;
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

export function createLogger(opts: LoggerOptions = {}): Logger {
  const dest = opts.stream ?? process.stdout;
  const pretty = opts.pretty ?? Boolean((dest as { isTTY?: boolean }).isTTY);
  const stream = pretty
    ? new Writable({
        write(chunk: Buffer, _enc, cb) {
          for (const line of chunk.toString('utf8').split('\n')) {
            if (!line) continue;
            try {
              dest.write(prettyLine(JSON.parse(line) as Record<string, unknown>));
            } catch {
              dest.write(line + '\n');
            }
          }
          cb();
        },
      })
    : dest;
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
