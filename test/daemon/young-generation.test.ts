// holdYoungGeneration: a workload whose scavenges keep many survivors makes V8 grow the new
// space; after the hold, the same workload leaves it at the size it started with.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The new space's size before and after a workload that keeps 30,000 objects alive in a ring. */
function newSpace(hold: boolean): { before: number; after: number } {
  const mod = JSON.stringify(join(import.meta.dirname, '../../daemon/young-generation.ts'));
  const script = `const { holdYoungGeneration } = await import(${mod});
const { getHeapSpaceStatistics } = await import('node:v8');
const youngGenerationBytes = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
${hold ? 'holdYoungGeneration();' : ''}
const before = youngGenerationBytes();
const ring = new Array(30000);
for (let i = 0; i < 1000000; i++) ring[i % ring.length] = { i, text: 'x' + i, list: [i] };
process.stdout.write(JSON.stringify({ before, after: youngGenerationBytes() }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', cwd: join(import.meta.dirname, '../..') });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as { before: number; after: number };
}

describe('the young generation of a daemon', () => {
  it('grows under survivors without the hold (so the check below can fail)', () => {
    const { before, after } = newSpace(false);
    expect(before).toBeGreaterThan(0);
    expect(after).toBeGreaterThan(before);
  });

  it('stays at its starting size once held', () => {
    const { before, after } = newSpace(true);
    expect(before).toBeGreaterThan(0);
    expect(after).toBe(before);
  });
});
