// The body limits the docs give are the ones the servers enforce: a reader sizing a peer batch or
// a proxy from docs/serving.md, docs/tickets.md or the README gets the code's number (issue 28:
// the serving table said 64 MiB for tickets where the code refuses past 16 MiB).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PUSH_LIMIT } from '../../src/schemas/tickets.js';

const root = join(import.meta.dirname, '../..');
const read = (file: string): string => readFileSync(join(root, file), 'utf8');
const mib = (bytes: number): string => `${bytes / (1024 * 1024)} MiB`;

describe('documented body limits', () => {
  it('docs/serving.md gives the tickets push limit the code enforces', () => {
    const row = read('docs/serving.md').split('\n').find((l) => l.startsWith('| body size |'));
    expect(row).toBeDefined();
    expect(row).toMatch(new RegExp(`tickets ${mib(PUSH_LIMIT.bytes)}\\b`));
  });

  // The README's tickets overview moved to the top of docs/tickets.md (issue 29: the README is a tour).
  it("docs/tickets.md's table and its overview (once the README's) give the same push limit", () => {
    expect(read('docs/tickets.md')).toMatch(new RegExp(`\\| body size \\| ${mib(PUSH_LIMIT.bytes)} \\|`));
    expect(read('docs/tickets.md')).toContain(`in a body of at most ${mib(PUSH_LIMIT.bytes)}`);
  });
});
