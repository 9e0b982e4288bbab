// Ping URLs of heartbeat targets: `/ping/{key}` and its `/start`, `/fail` and `/{0-255}`
// signals, by GET or POST, without the API token or rate limit (cron jobs call them with curl).
// A POST body is the run's log; the key is the only secret, so it is never logged, and an
// address guessing keys is refused for a while (ping-guard.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../../plugins/errors.js';
import type { CheckEngine } from './engine.js';
import { PENDING, type PingKeys } from './ping-keys.js';
import { PingGuard } from './ping-guard.js';
import { parseSignal, signalName, type PingSignal } from './checks/heartbeat.js';
import { ErrorSchema } from '../../../src/schemas/monitor.js';
import { tailBytes } from '../../../src/util/utf8-tail.js';

/** The largest ping body taken (a bigger one is 413, the signal not recorded). */
export const MAX_PING_BODY = 100 * 1024;
/** The tail of the log kept with the snapshot. */
export const KEPT_LOG_BYTES = 10 * 1024;

export interface PingDeps {
  keys: PingKeys;
  engine: CheckEngine;
  now(): number;
}

/** The last `max` bytes of a log as text, never starting inside a UTF-8 sequence. */
export function logTail(body: Buffer, max = KEPT_LOG_BYTES): { text: string; truncated: boolean } {
  const tail = tailBytes(body, max);
  return { text: tail.toString('utf8'), truncated: tail.length < body.length };
}

const KEY_PARAM = { key: { type: 'string', description: 'the target\'s ping key (a secret)' } } as const;
const PING_PARAMS = { type: 'object', properties: KEY_PARAM, required: ['key'] } as const;
const SIGNAL_PARAMS = {
  type: 'object',
  properties: { ...KEY_PARAM, signal: { type: 'string', description: 'start, fail, or an exit status 0-255' } },
  required: ['key', 'signal'],
} as const;
const PingAnswerSchema = {
  type: 'object',
  properties: { ok: { type: 'boolean' }, target: { type: 'string' }, signal: { type: 'string' } },
  required: ['ok', 'target', 'signal'],
} as const;

type PingRequest = FastifyRequest<{ Params: { key: string; signal?: string } }>;

export async function pingRoutes(app: FastifyInstance, deps: PingDeps): Promise<void> {
  const guard = new PingGuard({ now: deps.now });
  // Any content type is a log (curl --data-binary sends form encoding); nothing is parsed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_PING_BODY }, (_req, body, done) => done(null, body));
  // Say what to do about a log too long; every other error goes on to the service's handler.
  app.setErrorHandler((err: { code?: string }) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') throw new HttpError(413, `the ping body is over ${MAX_PING_BODY / 1024} KiB; send the end of the log (the monitor keeps the last ${KEPT_LOG_BYTES / 1024} KiB; mkt monitor run sends just that)`);
    throw err;
  });

  // The answer, `{"ok":true,"target":…,"signal":…}` as its response schema has it, is made from a
  // template and sent as text: no serializer and no preSerialization hook on the hot path.
  const answer = (reply: FastifyReply, target: string, signal: string): void =>
    void reply.type('application/json; charset=utf-8').send(`{"ok":true,"target":${JSON.stringify(target)},"signal":${JSON.stringify(signal)}}`);
  const record = (req: PingRequest, reply: FastifyReply, address: string, signal: PingSignal | undefined, target: string | undefined): void => {
    if (!signal || target === undefined) {
      guard.failed(address);
      // The same answer for a bad key and a bad signal: nothing tells a guesser which part was wrong.
      throw new HttpError(404, 'no heartbeat target has this ping URL (signals: /ping/KEY, /start, /fail, /0-255)');
    }
    const body = Buffer.isBuffer(req.body) && req.body.length > 0 ? req.body : undefined;
    deps.engine.pingThen(target, signal, body ? logTail(body) : undefined, (err) => {
      if (err) return void reply.send(err);
      const name = signalName(signal);
      req.log.debug({ target, signal: name }, 'ping');
      answer(reply, target, name);
    });
  };
  // Not an async function, and no promise of its own: a ping whose key is known at once goes to
  // the engine without a turn of the microtask queue, and is answered from the engine's callback
  // (fastify sends a thrown error as it would a rejected promise's).
  const handle = (req: PingRequest, reply: FastifyReply): void => {
    const address = req.ip;
    const wait = guard.blockedFor(address);
    if (wait > 0) {
      void reply.header('retry-after', String(wait));
      throw new HttpError(429, `too many pings with unknown keys from this address; retry in ${wait} s`);
    }
    const signal = parseSignal(req.params.signal);
    if (!signal) return record(req, reply, address, signal, undefined);
    const now = deps.keys.targetNow(req.params.key);
    if (now !== PENDING) return record(req, reply, address, signal, now);
    deps.keys
      .target(req.params.key)
      .then((target) => record(req, reply, address, signal, target))
      .catch((err: Error) => void reply.send(err));
  };
  const schema = { operationId: 'ping', summary: 'A heartbeat target\'s ping (no token; the body is the run\'s log)', params: PING_PARAMS, response: { 200: PingAnswerSchema, 404: ErrorSchema, 413: ErrorSchema, 429: ErrorSchema } };
  // One route per method: every operation of the OpenAPI document has its own operationId.
  for (const url of ['/ping/:key', '/ping/:key/:signal']) {
    for (const method of ['GET', 'POST'] as const) {
      const operationId = `ping${url.endsWith(':signal') ? 'Signal' : ''}${method === 'POST' ? 'WithLog' : ''}`;
      const params = url.endsWith(':signal') ? SIGNAL_PARAMS : PING_PARAMS;
      app.route({ method, url, config: { public: true }, schema: { ...schema, params, operationId }, handler: handle });
    }
  }
}
