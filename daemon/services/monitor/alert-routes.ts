// `GET /api/alerts`: each configured alert channel (name and type, never its URL or secrets) with
// its last send and how it went. Behind the token and the rate limit like the rest of the API.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AlertChannel } from '../../../src/config/monitor.js';
import type { MonitorStore } from '../../../src/store/monitor.js';
import { ErrorSchema } from '../../../src/schemas/monitor.js';

const LastSendSchema = Type.Object({
  event: Type.String({ description: 'incident.opened, incident.reminder or incident.resolved' }),
  target: Type.String(),
  incident_id: Type.Union([Type.Integer(), Type.Null()]),
  at: Type.String({ format: 'date-time', description: 'when the last attempt finished' }),
  ok: Type.Boolean(),
  attempts: Type.Integer({ minimum: 1 }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'why the last attempt failed; no URL or secret in it' }),
});

export const AlertChannelsSchema = Type.Object({
  channels: Type.Array(
    Type.Object({
      name: Type.String(),
      type: Type.String({ description: 'webhook, slack, discord, teams, ntfy, pagerduty or email' }),
      last: Type.Union([LastSendSchema, Type.Null()], { description: 'the last send to this channel, or null when none yet' }),
    }),
  ),
});

export interface AlertRouteDeps {
  channels(): readonly AlertChannel[];
  store: Pick<MonitorStore, 'alertSends'>;
}

export async function alertRoutes(app: FastifyInstance, deps: AlertRouteDeps): Promise<void> {
  app.get('/api/alerts', { schema: { operationId: 'alertChannels', summary: 'Alert channels and the last send to each', response: { 200: AlertChannelsSchema, 401: ErrorSchema, 429: ErrorSchema } } }, async () => {
    const sends = await deps.store.alertSends.all();
    return {
      channels: deps.channels().map((c) => {
        const s = sends.get(c.name);
        return {
          name: c.name,
          type: c.type,
          last: s ? { event: s.event, target: s.target, incident_id: s.incidentId ?? null, at: new Date(s.at).toISOString(), ok: s.ok, attempts: s.attempts, error: s.error ?? null } : null,
        };
      }),
    };
  });
}
