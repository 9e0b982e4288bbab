// One POST of an alert over HTTP: no redirect followed (a 3xx is a failure), a total time limit
// (a receiver that never answers is cut off), and an answer's body read to at most a few KiB.
import { Agent, request } from 'undici';

/** The whole send, connection to last byte, is bounded by this unless a channel is given less. */
export const SEND_TIMEOUT_MS = 10_000;
const ANSWER_MAX_BYTES = 4096;

const agents = new Map<number, Agent>();
function agentFor(timeoutMs: number): Agent {
  let a = agents.get(timeoutMs);
  if (!a) {
    a = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    agents.set(timeoutMs, a);
  }
  return a;
}

export interface PostOptions {
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

/** A send that failed, with a message safe to log and store (no URL in it). */
export class SendError extends Error {}

/** POSTs `body` to `url`; resolves on a 2xx, throws SendError otherwise. The answer's text (a little of it) for callers that read it. */
export async function post(url: string, o: PostOptions): Promise<string> {
  let res;
  try {
    // undici's request never follows redirects (that takes its redirect interceptor).
    res = await request(url, { method: 'POST', headers: { 'user-agent': 'mkt-monitor', ...o.headers }, body: o.body, dispatcher: agentFor(o.timeoutMs), signal: AbortSignal.timeout(o.timeoutMs) });
  } catch (err) {
    throw new SendError(describe(err, o.timeoutMs));
  }
  let text = '';
  try {
    for await (const chunk of res.body) {
      if (text.length < ANSWER_MAX_BYTES) text += (chunk as Buffer).toString('utf8');
      else break;
    }
  } catch {
    // The status is what decides; a body cut short changes nothing.
  }
  if (!res.body.destroyed) res.body.destroy();
  if (res.statusCode >= 300 && res.statusCode < 400) throw new SendError(`HTTP ${res.statusCode}: redirect not followed`);
  if (res.statusCode >= 300) throw new SendError(`HTTP ${res.statusCode}`);
  return text.slice(0, ANSWER_MAX_BYTES);
}

/** An error's message without the URL undici may put in it. */
function describe(err: unknown, timeoutMs: number): string {
  const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT') return `no answer within ${timeoutMs} ms`;
  if (e.code === 'UND_ERR_CONNECT_TIMEOUT') return `no connection within ${timeoutMs} ms`;
  const code = e.code ?? e.cause?.code;
  return code ? `connection failed (${code})` : 'connection failed';
}
