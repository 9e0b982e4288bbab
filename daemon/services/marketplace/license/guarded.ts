// One license-key request under the abuse limit, for the fastify routes (routes.ts) and the
// heartbeat's direct route (heartbeat-lane.ts) alike: a guess (a malformed or unknown key) takes
// its slot before its answer is sent, or is answered 429; a lookup of a real key costs one read.
import type { FailureWindow } from '../../../plugins/failure-window.js';
import { isFailureGuess } from './licenses.js';

export async function guardedKeyRequest<T extends { code?: string }>(
  guard: FailureWindow,
  client: string,
  op: () => Promise<T>,
  debug: (obj: object, msg: string) => void,
): Promise<T> {
  const res = await guard.answer(client, op, (r) => isFailureGuess(r.code));
  // The outcome only: the key itself never reaches the log.
  debug({ outcome: res.code }, 'license key request');
  return res;
}
