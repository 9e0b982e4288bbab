// holdYoungGeneration: a workload whose scavenges keep many survivors makes V8 grow the new
// space; after the hold, the same workload does not grow it. V8 may still shrink it (a loaded CI
// saw 4 MiB become 2 MiB during the workload), which the hold neither prevents nor needs to. Governed
// (governYoungGeneration), a daemon lets it grow again while scavenges take much of its time;
// GrowthPolicy decides when, from each interval's share.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GrowthPolicy } from '../../daemon/young-generation.js';

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

  it('does not grow past its starting size once held', () => {
    const { before, after } = newSpace(true);
    expect(before).toBeGreaterThan(0);
    expect(after).toBeLessThanOrEqual(before);
  });
});

/**
 * Governed, with intervals of 50 ms: the same workload in slices of 20 ms (so the governor's timer
 * runs between them) until the new space has grown, or for at most 30 s.
 */
function governedUnderLoad(): { before: number; after: number; changes: boolean[] } {
  const mod = JSON.stringify(join(import.meta.dirname, '../../daemon/young-generation.ts'));
  const script = `const { governYoungGeneration } = await import(${mod});
const { getHeapSpaceStatistics } = await import('node:v8');
const youngGenerationBytes = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
const changes = [];
const stop = governYoungGeneration({ intervalMs: 50, onChange: (growing) => changes.push(growing) });
const before = youngGenerationBytes();
const ring = new Array(30000);
let i = 0;
const end = Date.now() + 30000;
await new Promise((done) => {
  const slice = () => {
    const t = Date.now();
    while (Date.now() - t < 20) ring[i++ % ring.length] = { i, text: 'x' + i, list: [i] };
    if (youngGenerationBytes() > before || Date.now() > end) done();
    else setImmediate(slice);
  };
  slice();
});
stop();
process.stdout.write(JSON.stringify({ before, after: youngGenerationBytes(), changes }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', cwd: join(import.meta.dirname, '../..') });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as { before: number; after: number; changes: boolean[] };
}

describe('the young generation governed', () => {
  it('grows once scavenges take a large share of the time, held from the start', () => {
    const { before, after, changes } = governedUnderLoad();
    expect(after).toBeGreaterThan(before);
    expect(changes[0]).toBe(true);
  });

  it('GrowthPolicy: grows after 3 busy intervals in a row, keeps growing until an interval under the hold share', () => {
    const p = new GrowthPolicy(0.02, 3, 0.005);
    const seen = [0.5, 0.5, 0.01, 0.03, 0.02, 0.5, 0.1, 0.019, 0.006, 0.004, 0.019, 0.03, 0.03, 0.03].map((share) => [p.next(share), p.growing]);
    expect(seen).toEqual([
      [false, false],
      [false, false],
      // A burst of two busy intervals does not grow it.
      [false, false],
      [false, false],
      [false, false],
      [true, true],
      [false, true],
      // Under the share that grows, not under the one that holds: still growing.
      [false, true],
      [false, true],
      [true, false],
      // Held again, it takes 3 busy intervals anew.
      [false, false],
      [false, false],
      [false, false],
      [true, true],
    ]);
    expect(() => new GrowthPolicy(0.01, 3, 0.02)).toThrow(RangeError);
  });
});
