// Device routes (list_devices, register_device, delete_device): register or update by name,
// list, delete (404 for an id the caller does not have).
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { RegisterDeviceRequestSchema, SyncDeviceResponseSchema } from '../../../../../src/schemas/sync.js';
import { ErrorSchema } from '../../../../../src/schemas/common.js';
import { timestampNow } from '../../../../../src/util/time.js';
import { HttpError } from '../../../../plugins/errors.js';
import { BEARER, TAGS, bearerErrors, owner, type BearerRouteDeps } from './common.js';
import { quoteForError } from '../../../../../src/util/quote.js';
import { deleteDevice, registerDevice } from '../devices.js';

const DeviceParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

export async function deviceRoutes(app: FastifyInstance, deps: BearerRouteDeps): Promise<void> {
  const { store, clock } = deps;

  app.get(
    '/api/v1/sync/devices',
    { schema: { operationId: 'list_devices', summary: "The caller's registered devices", tags: TAGS, security: BEARER, response: { 200: Type.Array(SyncDeviceResponseSchema), ...bearerErrors } } },
    async (req) => store.listDevices(owner(req)),
  );

  app.post<{ Body: Static<typeof RegisterDeviceRequestSchema> }>(
    '/api/v1/sync/devices',
    {
      schema: {
        operationId: 'register_device',
        summary: 'Registers a device, or updates the one of the same name (its id stays)',
        tags: TAGS,
        security: BEARER,
        body: RegisterDeviceRequestSchema,
        response: { 200: SyncDeviceResponseSchema, ...bearerErrors },
      },
    },
    async (req) => registerDevice(store, owner(req), { name: req.body.name, platform: req.body.platform, now: timestampNow(clock) }),
  );

  app.delete<{ Params: Static<typeof DeviceParams> }>(
    '/api/v1/sync/devices/:id',
    {
      schema: {
        operationId: 'delete_device',
        summary: 'Removes a device (it can no longer push or rotate)',
        tags: TAGS,
        security: BEARER,
        params: DeviceParams,
        response: { 204: Type.Null(), ...bearerErrors, 404: ErrorSchema },
      },
    },
    async (req, reply) => {
      if (!(await deleteDevice(store, owner(req), req.params.id))) throw new HttpError(404, `device ${quoteForError(req.params.id)} not found`);
      return reply.code(204).send();
    },
  );
}
