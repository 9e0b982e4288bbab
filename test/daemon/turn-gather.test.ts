// TurnGather (daemon/turn-gather.ts), turn by turn of the event loop: a lone entry is written at
// the first look; a queue that grows at each look is written when a look finds no more, or after
// the bound of further turns however it grows; a start() while gathering adds no second write.
import { describe, expect, it } from 'vitest';
import { TurnGather } from '../../daemon/turn-gather.js';

const turn = (): Promise<void> => new Promise((done) => setImmediate(done));

function rig(maxTurns?: number): { queue: number[]; writes: number[][]; gather: TurnGather; add(n?: number): void } {
  const queue: number[] = [];
  const writes: number[][] = [];
  const gather = new TurnGather(
    () => queue.length,
    () => writes.push(queue.splice(0)),
    maxTurns,
  );
  let next = 0;
  return {
    queue,
    writes,
    gather,
    add(n = 1) {
      // As the monitor's pings and the license writes do: start() at each entry queued.
      for (let i = 0; i < n; i++) {
        queue.push(next++);
        gather.start();
      }
    },
  };
}

describe('TurnGather', () => {
  it('writes a lone entry at the first look, and two that came together at the look after', async () => {
    const r = rig();
    r.add();
    await turn();
    expect(r.writes).toEqual([[0]]);
    r.add(2);
    await turn();
    // The first look found both (queued before it): one more turn to see whether more come.
    expect(r.writes).toEqual([[0]]);
    await turn();
    expect(r.writes).toEqual([[0], [1, 2]]);
  });

  it('waits while each turn brings more, and no longer than its bound', async () => {
    const r = rig(3);
    r.add(2);
    // One more in each of the next 10 turns: written after the first look and 3 more.
    for (let i = 0; i < 10; i++) {
      await turn();
      r.add();
    }
    await turn();
    await turn();
    expect(r.writes[0]).toEqual([0, 1, 2, 3, 4]);
    expect(r.writes.flat()).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  it('a start() while gathering makes no second write', async () => {
    const r = rig();
    r.add();
    r.gather.start();
    r.gather.start();
    await turn();
    await turn();
    expect(r.writes).toEqual([[0]]);
  });
});
