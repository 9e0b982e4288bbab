// The silences API: `POST /api/silences` makes one (a target, or every target, for a while, with a
// reason), `GET /api/silences` lists the active ones, `DELETE /api/silences/{id}` ends one early.
// Behind the monitor's token and rate limit like the rest of the API; at most
// MAX_ACTIVE_SILENCES are active at once, so a script gone wrong cannot fill the store.
import type { FastifyInstance } from 'fastify';
import type { MonitorConfig } from '../../../src/config/monitor.js';
import { parseDuration } from '../../../src/config/monitor.js';
import type { MonitorStore } from '../../../src/store/monitor.js';
import type { Silence } from '../../../src/store/monitor-silences.js';
import { HttpError } from '../../plugins/errors.js';
import { ErrorSchema, type SilenceJson } from '../../../src/schemas/monitor.js';

export const MAX_ACTIVE_SILENCES = 1000;
export const MIN_SILENCE_MS = 60_000;
export const MAX_SILENCE_MS = 30 * 86_400_000;
export const MAX_REASON_CHARS = 200;

export interface SilenceDeps {
  config(): MonitorConfig;
  store: Pick<MonitorStore, 'silences'>;
  now(): number;
}

export type { SilenceJson };

export function silenceJson(s: Silence): SilenceJson {
  return { id: s.id, target: s.target ?? null, all: s.target === undefined, reason: s.reason, created_at: new Date(s.createdAt).toISOString(), expires_at: new Date(s.expiresAt).toISOString() };
}

const SilenceSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'sil_ and 12 base32 characters' },
    target: { type: ['string', 'null'], description: 'the silenced target; null: every target' },
    all: { type: 'boolean', description: 'true when every target is silenced' },
    reason: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: 'string', format: 'date-time', description: 'the silence ends by itself then' },
  },
  required: ['id', 'target', 'all', 'reason', 'created_at', 'expires_at'],
} as const;

// No control characters: a reason is printed by `mkt monitor silence list` on terminals.
const REASON = { type: 'string', minLength: 1, maxLength: MAX_REASON_CHARS, pattern: '^[^\\u0000-\\u001f\\u007f]*$', description: 'why (shown in lists, on the dashboard and on silenced incidents)' } as const;
const CreateBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    target: { type: 'string', minLength: 1, maxLength: 200, description: 'a configured target; omit it and give `all: true` to silence every target' },
    all: { type: 'boolean', description: 'true: silence every target (instead of `target`)' },
    duration: { anyOf: [{ type: 'string', maxLength: 32 }, { type: 'integer' }], description: 'how long: `90m`, `2h`, `1d`, or a number of seconds; from 1 minute to 30 days' },
    reason: REASON,
  },
  required: ['duration', 'reason'],
} as const;
const ID_PARAMS = { type: 'object', properties: { id: { type: 'string', maxLength: 64 } }, required: ['id'] } as const;
const guarded = { 401: ErrorSchema, 429: ErrorSchema };

interface CreateSilence {
  target?: string;
  all?: boolean;
  duration: string | number;
  reason: string;
}

/** The duration of a request in ms, or an HttpError 400 saying what is taken. */
export function silenceDuration(raw: string | number): number {
  const ms = parseDuration(raw);
  if (ms === undefined) throw new HttpError(400, `duration ${JSON.stringify(raw)} is not a duration: give one like 90m, 2h or 1d (or seconds)`);
  if (ms < MIN_SILENCE_MS || ms > MAX_SILENCE_MS) throw new HttpError(400, `duration must be from 1m to 30d (got ${String(raw).trim()})`);
  return ms;
}

export async function silenceRoutes(app: FastifyInstance, deps: SilenceDeps): Promise<void> {
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  app.post<{ Body: CreateSilence }>(
    '/api/silences',
    { schema: { operationId: 'createSilence', summary: 'Silence the alerts of one target, or of every target, for a while', body: CreateBody, response: { 201: SilenceSchema, 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema, ...guarded } } },
    async (req, reply) => {
      const { target, all, duration, reason } = req.body;
      if ((target === undefined) === (all !== true)) throw new HttpError(400, 'give either `target` (a target name) or `all: true`, not both');
      if (target !== undefined && !deps.config().targets.some((t) => t.name === target)) throw new HttpError(404, `unknown target: ${target}`);
      const ms = silenceDuration(duration);
      if (reason.trim() === '') throw new HttpError(400, 'reason must not be blank');
      const now = deps.now();
      const added = await deps.store.silences.add({ ...(target !== undefined ? { target } : {}), reason: reason.trim(), expiresAt: now + ms }, now, MAX_ACTIVE_SILENCES);
      if (!added.ok) throw new HttpError(409, `${added.active} silences are active; at most ${MAX_ACTIVE_SILENCES} at once: remove some (DELETE /api/silences/{id}) or wait for them to expire`);
      void reply.code(201);
      return silenceJson(added.silence);
    },
  );

  app.get(
    '/api/silences',
    { schema: { operationId: 'listSilences', summary: 'The active silences, soonest to expire first', response: { 200: { type: 'object', properties: { silences: { type: 'array', items: SilenceSchema } }, required: ['silences'] }, ...guarded } } },
    async () => ({ silences: (await deps.store.silences.list(deps.now())).map(silenceJson) }),
  );

  app.delete<{ Params: { id: string } }>(
    '/api/silences/:id',
    { schema: { operationId: 'deleteSilence', summary: 'End a silence now', params: ID_PARAMS, response: { 204: { type: 'null', description: 'ended' }, 404: ErrorSchema, ...guarded } } },
    async (req, reply) => {
      if (!(await deps.store.silences.remove(req.params.id, deps.now()))) throw new HttpError(404, `no active silence ${req.params.id}`);
      return reply.code(204).send();
    },
  );
}
