// Devices (spec endpoint rule 6, delete_device 404): register, same name updates (id kept), list,
// delete, unknown ids 404; devices are per user and app; a deleted device can no longer push.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSyncServer, type SyncServer } from '../../helpers/sync-server.js';

interface Device {
  id: string;
  name: string;
  platform: string | null;
  created_at: string;
  last_seen_at: string;
}

let s: SyncServer;
let ana: string;
let bo: string;
let anaOther: string;

beforeAll(async () => {
  s = await startSyncServer();
  const notes = await s.createApp('Notes');
  const other = await s.createApp('Other');
  await s.addUser('ana', 'ana@example.com', 'pw-ana');
  await s.addUser('bo', 'bo@example.com', 'pw-bo');
  ana = await s.signIn(notes.apiKey, 'ana@example.com', 'pw-ana');
  bo = await s.signIn(notes.apiKey, 'bo@example.com', 'pw-bo');
  anaOther = await s.signIn(other.apiKey, 'ana@example.com', 'pw-ana');
});
afterAll(async () => {
  await s.close();
});

describe('devices', () => {
  it('registers, updates the device of the same name, lists and deletes', async () => {
    const first = await s.call<Device>('POST', '/api/v1/sync/devices', { token: ana, body: { name: 'laptop', platform: 'linux' } });
    expect(first).toEqual({ status: 200, body: { id: expect.any(String) as string, name: 'laptop', platform: 'linux', created_at: '2026-03-01T12:00:00.000Z', last_seen_at: '2026-03-01T12:00:00.000Z' } });
    s.clock.advance(60_000);
    const again = await s.call<Device>('POST', '/api/v1/sync/devices', { token: ana, body: { name: 'laptop', platform: 'linux 6.8' } });
    expect(again.body).toEqual({ ...first.body, platform: 'linux 6.8', last_seen_at: '2026-03-01T12:01:00.000Z' });
    const phone = (await s.call<Device>('POST', '/api/v1/sync/devices', { token: ana, body: { name: 'phone' } })).body;
    expect(phone.platform).toBeNull();
    const list = await s.call<Device[]>('GET', '/api/v1/sync/devices', { token: ana });
    expect(list.status).toBe(200);
    expect(list.body.map((d) => [d.id, d.name])).toEqual([
      [first.body.id, 'laptop'],
      [phone.id, 'phone'],
    ]);

    // Per user and per app: the same name elsewhere is another device, and ids do not cross over.
    const boLaptop = (await s.call<Device>('POST', '/api/v1/sync/devices', { token: bo, body: { name: 'laptop' } })).body;
    expect(boLaptop.id).not.toBe(first.body.id);
    expect((await s.call<Device[]>('GET', '/api/v1/sync/devices', { token: anaOther })).body).toEqual([]);
    expect((await s.call('DELETE', `/api/v1/sync/devices/${first.body.id}`, { token: bo })).status).toBe(404);
    expect((await s.call('DELETE', `/api/v1/sync/devices/${first.body.id}`, { token: anaOther })).status).toBe(404);

    const del = await s.call('DELETE', `/api/v1/sync/devices/${phone.id}`, { token: ana });
    expect(del).toEqual({ status: 204, body: null });
    const gone = await s.call('DELETE', `/api/v1/sync/devices/${phone.id}`, { token: ana });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ error: `device ${JSON.stringify(phone.id)} not found` });
    expect((await s.call<Device[]>('GET', '/api/v1/sync/devices', { token: ana })).body.map((d) => d.name)).toEqual(['laptop']);
    expect((await s.call('GET', '/api/v1/sync/status', { token: ana })).body).toMatchObject({ device_count: 1 });
  });

  it('a deleted device can no longer push; pushing and pulling update last_seen_at', async () => {
    expect((await s.call('PUT', '/api/v1/sync/keys', { token: ana, body: { encrypted_key: 'E', expected_key_version: 0 } })).status).toBe(204);
    const tablet = (await s.call<Device>('POST', '/api/v1/sync/devices', { token: ana, body: { name: 'tablet' } })).body;
    const body = { device_id: tablet.id, batch_id: 'b1', key_id: 1, entries: [{ table: 't', op: 'insert', row_id: '1', timestamp: 'x' }] };
    s.clock.advance(60_000);
    expect((await s.call('POST', '/api/v1/sync/push', { token: ana, body })).status).toBe(200);
    const seen = (await s.call<Device[]>('GET', '/api/v1/sync/devices', { token: ana })).body.find((d) => d.id === tablet.id)!;
    expect(seen.last_seen_at).toBe(new Date(s.clock.now()).toISOString());
    s.clock.advance(60_000);
    await s.call('POST', '/api/v1/sync/pull', { token: ana, body: { cursor: 0, device_id: tablet.id } });
    expect((await s.call<Device[]>('GET', '/api/v1/sync/devices', { token: ana })).body.find((d) => d.id === tablet.id)!.last_seen_at).toBe(new Date(s.clock.now()).toISOString());
    expect((await s.call('DELETE', `/api/v1/sync/devices/${tablet.id}`, { token: ana })).status).toBe(204);
    expect((await s.call('POST', '/api/v1/sync/push', { token: ana, body: { ...body, batch_id: 'b2' } })).status).toBe(403);
  });

  it('validates names and needs a token', async () => {
    expect((await s.call('POST', '/api/v1/sync/devices', { token: ana, body: { name: '' } })).status).toBe(400);
    expect((await s.call('POST', '/api/v1/sync/devices', { token: ana, body: { name: 'x', extra: 1 } })).status).toBe(400);
    expect((await s.call('GET', '/api/v1/sync/devices')).status).toBe(401);
    expect((await s.call('DELETE', '/api/v1/sync/devices/x')).status).toBe(401);
  });
});
