// `mkt serve` holds V8's young generation at its starting size from before the daemon's modules
// load (bin/mkt, daemon/young-generation.ts): the monitor's own /metrics shows the new space, which
// loading alone grows to 16 MiB when nothing holds it, still at a few MiB after start-up and load.
import { afterAll, describe, expect, it } from 'vitest';
import { serveBinary, type Served } from '../helpers/serve-binary.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('mkt-serve-memory-');
let served: Served | undefined;
afterAll(async () => {
  served?.child.kill('SIGTERM');
  await served?.exited;
  dir.remove();
});

async function newSpaceBytes(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)$/m.exec(text);
  if (!m) throw new Error(`no new-space figure in /metrics:\n${text.slice(0, 2000)}`);
  return Number(m[1]);
}

describe('mkt serve and the young generation', () => {
  it('the new space stays at its starting few MiB through start-up and a thousand requests', async () => {
    served = await serveBinary('monitor', dir.path);
    const first = await newSpaceBytes(served.url);
    expect(first).toBeLessThanOrEqual(4 * 1024 * 1024);
    const statuses = new Set<number>();
    for (let i = 0; i < 50; i++) {
      await Promise.all(Array.from({ length: 20 }, () => fetch(`${served!.url}/healthz`).then(async (r) => (await r.text(), statuses.add(r.status)))));
    }
    expect([...statuses]).toEqual([200]);
    expect(await newSpaceBytes(served.url)).toBe(first);
  });
});
