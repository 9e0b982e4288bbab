// tickets.yaml: max_clock_skew (docs/tickets.md) is a bounded number of seconds; bad values
// stop the start (or keep the running config on SIGHUP) with a message naming the file.
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadTicketsConfig } from '../../../../daemon/services/tickets/config.js';
import { tempDir } from '../../../helpers/tmp.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function config(text: string): string {
  const d = tempDir();
  cleanups.push(() => d.remove());
  writeFileSync(join(d.path, 'tickets.yaml'), text);
  return d.path;
}

describe('tickets.yaml max_clock_skew', () => {
  it('is optional; when given it is seconds', () => {
    expect(loadTicketsConfig(undefined, config('peers: []\n')).maxClockSkewSeconds).toBeUndefined();
    expect(loadTicketsConfig(undefined, config('max_clock_skew: 90\n')).maxClockSkewSeconds).toBe(90);
  });

  it('refuses zero, negative, non-numbers and more than a day', () => {
    for (const bad of ['0', '-5', '"300"', '86401', '.inf']) {
      const dir = config(`max_clock_skew: ${bad}\n`);
      expect(() => loadTicketsConfig(undefined, dir), bad).toThrow(/tickets\.yaml: max_clock_skew must be a number of seconds/);
    }
  });
});
