// Log lines gathered before stdout (daemon/log-batch.ts): handed on in order once 4 KiB are
// gathered or the oldest has waited its time, and never lost when the process ends: not at an
// orderly exit, not at a crash by an uncaught exception, not when the event loop empties.
import { describe, expect, it } from 'vitest';
import { EventEmitter } from 'node:events';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { LineBatch } from '../../daemon/log-batch.js';

class Target extends EventEmitter {
  chunks: string[] = [];
  flushed = 0;
  write(chunk: Buffer): boolean {
    this.chunks.push(chunk.toString('utf8'));
    return true;
  }
  flush(cb: () => void): void {
    this.flushed++;
    cb();
  }
}

describe('LineBatch', () => {
  it('holds lines until the threshold, then hands them on as one chunk, in order', () => {
    const target = new Target();
    const batch = new LineBatch(target, 100, 60_000);
    batch.write('a'.repeat(40) + '\n');
    batch.write('b'.repeat(40) + '\n');
    expect(target.chunks).toEqual([]);
    batch.write('c'.repeat(40) + '\n');
    expect(target.chunks).toEqual(['a'.repeat(40) + '\n' + 'b'.repeat(40) + '\n' + 'c'.repeat(40) + '\n']);
    batch.write('d\n');
    batch.flush(() => {});
    expect(target.chunks).toEqual([target.chunks[0], 'd\n']);
    expect(target.flushed).toBe(1);
  });

  it('a line alone goes on after the longest wait, with no other line to push it', async () => {
    const target = new Target();
    const batch = new LineBatch(target, 4096, 20);
    batch.write('alone\n');
    expect(target.chunks).toEqual([]);
    // Bounded by what is checked: the line arrives, however long the loaded machine takes.
    while (target.chunks.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(target.chunks).toEqual(['alone\n']);
  });
});

/** Runs a script that logs through the daemon's stdout logger and ends as `end` says. */
function runLogging(end: string): { stdout: string; stderr: string; status: number | null } {
  const logger = join(import.meta.dirname, '../../daemon/logger.ts');
  const script = `import { createLogger } from ${JSON.stringify(logger)};
const log = createLogger({ level: 'info', pretty: false });
for (let i = 0; i < 5; i++) log.info({ i }, 'line');
${end}`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', cwd: join(import.meta.dirname, '../..') });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

describe('the stdout logger at the end of the process', () => {
  it('a line logged after the destination was destroyed is dropped at exit without a stack or another exit code', () => {
    const pinoPath = JSON.stringify(join(import.meta.dirname, '../../node_modules/pino/pino.js'));
    const r = runLogging(`const { default: pino } = await import(${pinoPath});
const batch = log[pino.symbols.streamSym];
batch.flushSync();
batch.target.destroy();
log.info('late');
process.exit(0);`);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(5);
  });

  for (const [how, end, status] of [
    ['process.exit', 'process.exit(3);', 3],
    ['an uncaught exception', "throw new Error('boom');", 1],
    ['an empty event loop', '', 0],
  ] as const) {
    it(`every gathered line is written at ${how}`, () => {
      const r = runLogging(end);
      expect(r.status).toBe(status);
      const lines = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { i: number; msg: string });
      expect(lines.map((l) => l.i)).toEqual([0, 1, 2, 3, 4]);
    });
  }
});
