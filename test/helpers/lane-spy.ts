// What answered a request sent over HTTP to a server with direct routes (daemon/direct-routes.ts):
// a lane, fastify after a lane read the body (handOff), or fastify alone; and the server's log
// lines of one request, without what differs by when it ran, to hold a lane's lines equal to the
// fastify route's.
import { vi } from 'vitest';
import type { DirectRoutes } from '../../daemon/direct-routes.js';

export type AnsweredBy = 'lane' | 'hand-off' | 'fastify';

export async function whoAnswers<A>(direct: DirectRoutes, send: () => Promise<A>): Promise<{ answer: A; by: AnsweredBy }> {
  const begin = vi.spyOn(direct, 'begin');
  const handOff = vi.spyOn(direct, 'handOff');
  try {
    const answer = await send();
    return { answer, by: begin.mock.calls.length > 0 ? 'lane' : handOff.mock.calls.length > 0 ? 'hand-off' : 'fastify' };
  } finally {
    begin.mockRestore();
    handOff.mockRestore();
  }
}

/** The last request id in a log. */
export function lastReqId(log: string): string {
  const ids = [...log.matchAll(/"reqId":"(req-[0-9a-z]+)"/g)];
  return ids[ids.length - 1]![1]!;
}

/** A log's lines of one request id, with its time, duration and id as placeholders. */
export function linesOf(log: string, reqId: string): string[] {
  return log
    .split('\n')
    .filter((l) => l.includes(`"reqId":"${reqId}"`))
    .map((l) => l.replace(/"time":\d+,/, '').replace(/"ms":[\d.]+,/, '').replace(`"reqId":"${reqId}"`, '"reqId":"<id>"'));
}
