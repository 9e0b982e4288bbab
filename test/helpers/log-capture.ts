// A logger (trace level unless told) whose JSON lines are kept in memory, so tests can prove
// what the server logged (and that no secret or ciphertext ever reached the log).
import { Writable } from 'node:stream';
import { createLogger } from '../../daemon/logger.js';

export function captureLog(level: 'trace' | 'debug' = 'trace'): { logger: ReturnType<typeof createLogger>; text(): string } {
  let log = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      log += chunk.toString('utf8');
      cb();
    },
  });
  return { logger: createLogger({ level, stream, pretty: false }), text: () => log };
}
