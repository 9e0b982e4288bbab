// Master-key envelope (get_sync_key 404, put_sync_key 409): the first put needs version 0 and gets
// key_version 1 / key_id 1; each later put needs the stored version, bumps key_version and keeps key_id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSyncServer, type SyncServer } from '../../helpers/sync-server.js';

let s: SyncServer;
let ana: string;
let bo: string;

beforeAll(async () => {
  s = await startSyncServer();
  const notes = await s.createApp('Notes');
  await s.addUser('ana', 'ana@example.com', 'pw-ana');
  await s.addUser('bo', 'bo@example.com', 'pw-bo');
  ana = await s.signIn(notes.apiKey, 'ana@example.com', 'pw-ana');
  bo = await s.signIn(notes.apiKey, 'bo@example.com', 'pw-bo');
});
afterAll(async () => {
  await s.close();
});

describe('keys', () => {
  it('404 before any key, then version-checked puts', async () => {
    expect(await s.call('GET', '/api/v1/sync/keys', { token: ana })).toEqual({ status: 404, body: { error: 'no key stored' } });
    const early = await s.call('PUT', '/api/v1/sync/keys', { token: ana, body: { encrypted_key: 'E1', expected_key_version: 1 } });
    expect(early).toEqual({ status: 409, body: { error: 'key version mismatch: the stored version is 0, not 1' } });
    expect(await s.call('PUT', '/api/v1/sync/keys', { token: ana, body: { encrypted_key: 'E1', expected_key_version: 0 } })).toEqual({ status: 204, body: null });
    expect(await s.call('GET', '/api/v1/sync/keys', { token: ana })).toEqual({ status: 200, body: { encrypted_key: 'E1', key_version: 1, key_id: 1, pending_key: null, retired_keys: [] } });

    // Two devices racing with the same expected version: one wins, the other gets 409, nothing is lost.
    const [a, b] = await Promise.all([
      s.call('PUT', '/api/v1/sync/keys', { token: ana, body: { encrypted_key: 'E2a', expected_key_version: 1 } }),
      s.call('PUT', '/api/v1/sync/keys', { token: ana, body: { encrypted_key: 'E2b', expected_key_version: 1 } }),
    ]);
    expect([a.status, b.status].sort()).toEqual([204, 409]);
    const winner = a.status === 204 ? 'E2a' : 'E2b';
    expect((await s.call('GET', '/api/v1/sync/keys', { token: ana })).body).toEqual({ encrypted_key: winner, key_version: 2, key_id: 1, pending_key: null, retired_keys: [] });
    expect((await s.call('PUT', '/api/v1/sync/keys', { token: ana, body: { encrypted_key: 'E-stale', expected_key_version: 1 } })).status).toBe(409);
    expect((await s.call('GET', '/api/v1/sync/keys', { token: ana })).body).toMatchObject({ encrypted_key: winner });
    expect((await s.call('GET', '/api/v1/sync/status', { token: ana })).body).toMatchObject({ key_version: 2, key_id: 1 });
  });

  it('keys are per user; bad input is 400 and changes nothing', async () => {
    expect((await s.call('GET', '/api/v1/sync/keys', { token: bo })).status).toBe(404);
    expect((await s.call('PUT', '/api/v1/sync/keys', { token: ana, body: { encrypted_key: '', expected_key_version: 2 } })).status).toBe(400);
    expect((await s.call('PUT', '/api/v1/sync/keys', { token: ana, body: { encrypted_key: 'E3' } })).status).toBe(400);
    expect((await s.call('PUT', '/api/v1/sync/keys', { token: ana, body: { encrypted_key: 'E3', expected_key_version: -1 } })).status).toBe(400);
    expect((await s.call('GET', '/api/v1/sync/keys', { token: ana })).body).toMatchObject({ key_version: 2 });
    expect((await s.call('PUT', '/api/v1/sync/keys', { body: { encrypted_key: 'E3', expected_key_version: 2 } })).status).toBe(401);
  });
});
