// Ping URLs of heartbeat targets: `/ping/{key}` and its `/start`, `/fail` and `/{0-255}`
// signals, by GET or POST, without the API token or rate limit (cron jobs call them with curl).
// A POST body is the run's log; the key is the only secret, so it is never logged, and an
// address guessing keys is refused for a while (ping-guard.ts). A ping that can be answered at
// once is taken by a direct route, before fastify (pingLane); every other goes through fastify.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../../plugins/errors.js';
import { readBody, type BodyDeadlines } from '../../plugins/body.js';
import type { CheckEngine } from './engine.js';
import { PENDING, type PingKeys } from './ping-keys.js';
import { PingGuard } from './ping-guard.js';
import { parseSignal, signalName, type PingSignal } from './checks/heartbeat.js';
import { ErrorSchema } from '../../../src/schemas/monitor.js';
import { tailBytes } from '../../../src/util/utf8-tail.js';
import { MediaTypes, type DirectRoutes, type Lane } from '../../direct-routes.js';

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
  // Read within the request timeout as every buffered body is (408): a log dripped a byte a
  // minute would otherwise hold its connection for as long as the idle timeout allows each byte.
  app.addContentTypeParser('*', (req, payload, done) => readBody(req.headers['content-length'], MAX_PING_BODY, payload, app.bodyDeadlines, done));
  // Say what to do about a log too long; every other error goes on to the service's handler.
  app.setErrorHandler((err: { code?: string }) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') throw new HttpError(413, `the ping body is over ${MAX_PING_BODY / 1024} KiB; send the end of the log (the monitor keeps the last ${KEPT_LOG_BYTES / 1024} KiB; mkt monitor run sends just that)`);
    throw err;
  });

  const record = (req: PingRequest, reply: FastifyReply, address: string, signal: PingSignal | undefined, target: string | undefined): void => {
    if (!signal || target === undefined) {
      guard.failed(address);
      // The same answer for a bad key and a bad signal: nothing tells a guesser which part was wrong.
      throw new HttpError(404, 'no heartbeat target has this ping URL (signals: /ping/KEY, /start, /fail, /0-255)');
    }
    const body = Buffer.isBuffer(req.body) && req.body.length > 0 ? req.body : undefined;
    recordPing(deps, target, signal, body ? logTail(body) : undefined, {
      fail: (err) => void reply.send(err),
      debug: (obj, msg) => req.log.debug(obj, msg),
      send: (_status, json) => void reply.type('application/json; charset=utf-8').send(json),
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
  app.directRoutes.add('/ping/', pingLane(app.directRoutes, deps, guard, app.bodyDeadlines));
}

/**
 * The answer, `{"ok":true,"target":…,"signal":…}` as its response schema has it, made from a
 * template and sent as text: no serializer and no preSerialization hook on the hot path.
 */
const answerText = (target: string, signal: string): string => `{"ok":true,"target":${JSON.stringify(target)},"signal":${JSON.stringify(signal)}}`;

/**
 * The ping taken before fastify (daemon/direct-routes.ts): a GET, or a POST whose body has a
 * length within the limit, with a known key, a valid signal, no empty segment and an address the
 * guard lets through. Its answer and request line are those of the fastify route above, which
 * answers every ping this declines (each refusal, the 413, a HEAD, a chunked log, a key read
 * while the configuration is applied again).
 */
export function pingLane(direct: DirectRoutes, deps: PingDeps, guard: PingGuard, deadlines: BodyDeadlines): Lane {
  const routes = {
    GET: direct.route('GET', '/ping/:key'),
    GETSignal: direct.route('GET', '/ping/:key/:signal'),
    POST: direct.route('POST', '/ping/:key'),
    POSTSignal: direct.route('POST', '/ping/:key/:signal'),
  };
  const PREFIX = '/ping/'.length;
  const mediaTypes = new MediaTypes();
  return (req, res, url) => {
    const method = req.method;
    const post = method === 'POST';
    if (!post && method !== 'GET') return false;
    let end = url.indexOf('?');
    if (end < 0) end = url.length;
    const slash = url.indexOf('/', PREFIX);
    const keyEnd = slash < 0 || slash > end ? end : slash;
    // fastify's router refuses a segment over 1024 characters: left to it. An escaped key or
    // signal matches none (keys are URL-safe), so fastify decodes it and answers.
    if (keyEnd === PREFIX || keyEnd - PREFIX > 1024) return false;
    let signalText: string | undefined;
    if (keyEnd < end) {
      signalText = url.slice(keyEnd + 1, end);
      if (signalText === '' || signalText.includes('/')) return false;
    }
    const signal = parseSignal(signalText);
    const address = req.socket.remoteAddress;
    if (!signal || address === undefined || guard.blockedFor(address) > 0) return false;
    const target = deps.keys.targetNow(url.slice(PREFIX, keyEnd));
    if (target === PENDING || target === undefined) return false;
    const h = req.headers;
    if (h['transfer-encoding'] !== undefined) return false;
    const length = h['content-length'];
    // A GET's body is never read (fastify's rule); a POST's is its log, taken up to the limit.
    if (!post && length !== undefined && length !== '0') return false;
    if (post && !(length === undefined || Number(length) <= MAX_PING_BODY)) return false;
    // fastify refuses a malformed content type (415) before it reads anything.
    const type = h['content-type'];
    if (post && type !== undefined && !mediaTypes.valid(type)) return false;
    const route = post ? (signalText === undefined ? routes.POST : routes.POSTSignal) : signalText === undefined ? routes.GET : routes.GETSignal;
    const ping = direct.begin(res, route);
    if (!post || length === undefined || length === '0') {
      recordPing(deps, target, signal, undefined, ping);
      return true;
    }
    // The reader of fastify's ping route (plugins/body.ts): same limit, same request timeout, same errors.
    readBody(length, MAX_PING_BODY, req, deadlines, (err, body) => {
      if (err) return ping.fail(err);
      recordPing(deps, target, signal, body!.length > 0 ? logTail(body!) : undefined, ping);
    });
    return true;
  };
}

/** How a recorded ping is answered: by fastify's reply, or by a lane's DirectRequest. */
interface PingAnswer {
  fail(err: Error): void;
  debug(obj: object, msg: string): void;
  send(status: 200, json: string): void;
}

/** Records a ping and answers it once the engine has (the fastify route and the lane alike). */
function recordPing(deps: PingDeps, target: string, signal: PingSignal, log: { text: string; truncated: boolean } | undefined, answer: PingAnswer): void {
  deps.engine.pingThen(target, signal, log, (err) => {
    if (err) return answer.fail(err);
    const name = signalName(signal);
    answer.debug({ target, signal: name }, 'ping');
    answer.send(200, answerText(target, name));
  });
}
