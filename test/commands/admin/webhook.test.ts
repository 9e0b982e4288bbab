// `mkt admin webhook add|list|rm` and `mkt admin key events` (issue 33, "Audit trail and
// webhooks") on the marketplace a running license server serves: the secret printed once verifies
// the server's deliveries at a receiver on 127.0.0.1; listings never show it; a key's events are
// listed by id, by the key on stdin, with --since and --json; bad input is one line and exit 2.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, type AdminCli } from '../../helpers/admin-cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { marketplaceDatabaseUrl } from '../../helpers/pg.js';
import { startLicenseServer, type LicenseServer } from '../../helpers/license-server.js';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.js';
import { waitFor } from '../../helpers/wait.js';

const dir = tempDir('mkt-webhook-admin-');
let s: LicenseServer;
let mkt: AdminCli;
let receiver: Receiver;
let secret = '';

beforeAll(async () => {
  const databaseUrl = await marketplaceDatabaseUrl();
  s = await startLicenseServer({ dataDir: join(dir.path, 'data'), databaseUrl, startJobs: true, flags: { licenseWebhookPollMs: 20, licenseWebhookRetryBaseMs: 50 } });
  mkt = adminCli(dir.path, join(dir.path, 'data'), { databaseUrl });
  receiver = await startReceiver(() => secret);
});
afterAll(async () => {
  await s?.close();
  await receiver?.close();
  dir.remove();
});

describe('mkt admin webhook and key events', () => {
  let hookId = '';
  let key = '';
  let keyId = '';

  it('webhook add prints the signing secret once, on stdout; a bad URL or pattern exits 2 with one line', async () => {
    const bad = await mkt(['webhook', 'add', 'ftp://vendor.example/x', '--events', 'license.*']);
    expect(bad.code).toBe(2);
    // One line of error (besides the line saying which marketplace was used).
    expect(bad.err.trim().split('\n').filter((l) => !l.startsWith('using the marketplace'))).toHaveLength(1);
    expect(bad.err).toMatch(/http:\/\/ or https:\/\//);
    expect((await mkt(['webhook', 'add', 'https://user:pw@vendor.example/x', '--events', 'license.*'])).code).toBe(2);
    const typo = await mkt(['webhook', 'add', receiver.url, '--events', 'license.revokd']);
    expect(typo.code).toBe(2);
    expect(typo.err).toMatch(/unknown event pattern "license.revokd"/);
    const r = await mkt(['webhook', 'add', receiver.url, '--events', 'license.*']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^whsec_[A-Za-z0-9_-]{43}\n$/);
    secret = r.out.trim();
    hookId = /added webhook (wh_[0-9a-f]+)/.exec(r.err)![1]!;
    expect(r.err).toContain('shown only this once');
  });

  it('webhook list shows the webhook and never a secret', async () => {
    const table = await mkt(['webhook', 'list']);
    expect(table.code, table.err).toBe(0);
    expect(table.out).toContain(hookId);
    expect(table.out).toContain(receiver.url);
    const json = await mkt(['webhook', 'list', '--json']);
    expect(JSON.parse(json.out)).toEqual([{ id: hookId, url: receiver.url, events: ['license.*'], created_at: expect.any(String) }]);
    expect(table.out + json.out).not.toContain('whsec_');
  });

  it("a key's revocation reaches the receiver, signed with the printed secret; key events lists it by id, by key on stdin, --since and --json", async () => {
    await mkt(['item', 'create', 'font-pro', '--name', 'Font Pro', '--max-activations', '3']);
    const issued = JSON.parse((await mkt(['key', 'issue', 'font-pro', '--json'])).out) as { id: string; key: string }[];
    key = issued[0]!.key;
    keyId = issued[0]!.id;
    const act = await s.app.inject({ method: 'POST', url: '/api/v1/keys/validate', payload: { key, machine_id: 'ci-runner-1', activate: true } });
    expect(act.json()).toMatchObject({ valid: true });
    expect((await mkt(['key', 'revoke', keyId])).code).toBe(0);
    await waitFor(async () => receiver.accepted.some((d) => d.type === 'license.revoked'), 'the revocation delivery');
    const revoked = receiver.accepted.find((d) => d.type === 'license.revoked')!;
    expect(revoked.data).toMatchObject({ key_id: keyId, item_id: 'font-pro' });
    expect(receiver.log).not.toContain('bad signature');
    // The activation came first, and arrived first (one key's events in order).
    expect(receiver.accepted.map((d) => d.type)).toEqual(['license.activated', 'license.revoked']);

    const table = await mkt(['key', 'events', keyId]);
    expect(table.code, table.err).toBe(0);
    expect(table.out).toMatch(/activated\s+ci-runner-1/);
    expect(table.out).toMatch(/revoked/);
    expect(table.out).toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/);
    const json = JSON.parse((await mkt(['key', 'events', '-', '--json'], { stdin: `${key}\n` })).out) as { type: string; machine_id: string | null; at: string; id: string }[];
    expect(json.map((e) => [e.type, e.machine_id])).toEqual([
      ['license.activated', 'ci-runner-1'],
      ['license.revoked', null],
    ]);
    expect(json.map((e) => e.id)).toEqual(receiver.accepted.map((d) => d.id));
    expect(JSON.parse((await mkt(['key', 'events', keyId, '--since', '2999-01-01T00:00:00Z', '--json'])).out)).toEqual([]);
    expect(JSON.parse((await mkt(['key', 'events', keyId, '--since', '1h', '--json'])).out)).toHaveLength(2);
  });

  it('key events: an unknown key exits 1, a bad --since exits 2', async () => {
    const none = await mkt(['key', 'events', 'lk_0000000000000000000f']);
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/no such license key/);
    expect((await mkt(['key', 'events', 'MKT-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA'])).code).toBe(1);
    const since = await mkt(['key', 'events', keyId, '--since', 'yesterday']);
    expect(since.code).toBe(2);
    expect(since.err).toMatch(/--since must be/);
  });

  it('webhook rm removes it once; a second rm exits 1, a malformed id exits 2', async () => {
    const r = await mkt(['webhook', 'rm', hookId]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(`removed ${hookId}\n`);
    expect((await mkt(['webhook', 'rm', hookId])).code).toBe(1);
    expect((await mkt(['webhook', 'rm', 'https://vendor.example'])).code).toBe(2);
    expect(JSON.parse((await mkt(['webhook', 'list', '--json'])).out)).toEqual([]);
  });
});
