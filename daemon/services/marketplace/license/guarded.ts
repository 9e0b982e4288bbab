// One license-key request under the abuse limit, for the fastify routes (routes.ts) and the
// heartbeat's direct route (heartbeat-lane.ts) alike: a guess (a malformed or unknown key) takes
// its slot before its answer is sent, or is answered 429; a lookup of a real key costs one read.
import type { FailureWindow } from '../../../plugins/failure-window.js';
import { isFailureGuess } from './licenses.js';

/**
 * guardedKeyRequest for an answer made from memory (`op` answers undefined when it cannot): the
 * same limit and debug line, or undefined when anything must wait (guardedKeyRequest then).
 */
export function guardedKeyAnswerNow<T extends { code?: string }>(guard: FailureWindow, client: string, op: () => T | undefined, debug: (obj: object, msg: string) => void): T | undefined {
  const res = guard.answerNow(client, op, (r) => isFailureGuess(r.code));
  if (res !== undefined) debug({ outcome: res.code }, 'license key request');
  return res;
}

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
