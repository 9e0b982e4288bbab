// `mkt admin item create`, `key issue|list|revoke`, `signing-key rotate` on the marketplace a
// license server serves at the same time (issue 5 "Administration"): on the test run's engine, and
// against a PostgreSQL URL with --database-url (issue 12); floating items, entitlements,
// suspension and deactivation budgets (issue 33).
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli, type AdminCli } from '../../helpers/admin-cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { freshDatabaseUrl, marketplaceDatabaseUrl } from '../../helpers/pg.js';
import { startLicenseServer, type LicenseServer } from '../../helpers/license-server.js';

const dir = tempDir('mkt-license-admin-');
let s: LicenseServer;
let mkt: AdminCli;

async function status(key: string, srv: LicenseServer = s): Promise<Record<string, unknown>> {
  return (await srv.app.inject({ method: 'POST', url: '/api/v1/keys/status', payload: { key } })).json();
}

async function jwksKids(srv: LicenseServer): Promise<string[]> {
  return ((await srv.app.inject({ method: 'GET', url: '/api/v1/license/jwks.json' })).json() as { keys: { kid: string }[] }).keys.map((k) => k.kid);
}

beforeAll(async () => {
  const databaseUrl = await marketplaceDatabaseUrl();
  s = await startLicenseServer({ dataDir: join(dir.path, 'data'), databaseUrl });
  mkt = adminCli(dir.path, join(dir.path, 'data'), { databaseUrl });
});
afterAll(async () => {
  await s?.close();
  dir.remove();
});

describe('mkt admin item and key', () => {
  let keys: string[] = [];

  it('item create reads the license template; a second create of the same id exits 1; bad flags exit 2', async () => {
    writeFileSync(join(dir.path, 'LICENSE.tmpl'), '{{item_name}} (c) {{year}} {{licensee}}\n');
    const r = await mkt(['item', 'create', 'font-pro', '--name', 'Font Pro', '--license-template', 'LICENSE.tmpl', '--max-activations', '3', '--verification', 'on', '--json']);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ id: 'font-pro', name: 'Font Pro', max_activations: 3, verification_enabled: true });
    expect((await mkt(['item', 'create', 'font-pro', '--name', 'Again'])).code).toBe(1);
    expect((await mkt(['item', 'create', 'x', '--name', 'X', '--verification', 'maybe'])).code).toBe(2);
    expect((await mkt(['item', 'create', 'x', '--name', 'X', '--max-activations', '0'])).code).toBe(2);
    expect((await s.app.inject({ method: 'GET', url: '/api/v1/items/font-pro/license.txt' })).body).toMatch(/^Font Pro \(c\) \d{4} the licensee\n$/);
  });

  it('key issue prints the keys once (one per line in a pipe); the data dir holds only keyed hashes', async () => {
    const r = await mkt(['key', 'issue', 'font-pro', '--count', '3', '--licensee', 'ACME']);
    expect(r.code, r.err).toBe(0);
    keys = r.out.trim().split('\n');
    expect(keys).toHaveLength(3);
    for (const k of keys) expect(k).toMatch(/^MKT(-[0-9A-HJKMNP-TV-Z]{5}){5}$/);
    expect(r.err).toMatch(/shown only now/);
    expect(await status(keys[0]!)).toMatchObject({ valid: true, license: { item_id: 'font-pro', max_activations: 3 } });
    expect(statSync(join(dir.path, 'data', 'license-key-secret')).mode & 0o777).toBe(0o600);
    if (s.databaseUrl) return; // the database file check is SQLite's
    const files = ['marketplace.db', 'marketplace.db-wal'].map((f) => join(dir.path, 'data', f));
    const db = Buffer.concat(files.map((f) => readFileSync(f)));
    expect(db.length).toBeGreaterThan(4096);
    for (const k of keys) {
      expect(db.includes(Buffer.from(k))).toBe(false);
      expect(db.includes(Buffer.from(k.slice(4).replace(/-/g, '')))).toBe(false);
    }
  });

  it('key issue --max-activations unlimited --expires DATE; unknown item exits 1; bad date exits 2', async () => {
    const r = await mkt(['key', 'issue', 'font-pro', '--max-activations', 'unlimited', '--expires', '2099-01-01', '--json']);
    const [k] = JSON.parse(r.out);
    expect(k).toMatchObject({ max_activations: null, expires_at: '2099-01-01T00:00:00.000Z' });
    expect(await status(k.key)).toMatchObject({ valid: true, license: { max_activations: null, remaining_activations: null, expires_at: '2099-01-01T00:00:00.000Z' } });
    expect((await mkt(['key', 'issue', 'nope'])).code).toBe(1);
    expect((await mkt(['key', 'issue', 'font-pro', '--expires', 'tomorrow'])).code).toBe(2);
  });

  it('key list shows ids and prefixes, never keys; key revoke by id or by key on stdin', async () => {
    const list = JSON.parse((await mkt(['key', 'list', 'font-pro', '--json'])).out) as { id: string; key_prefix: string; revoked_at: string | null }[];
    expect(list).toHaveLength(4);
    expect(JSON.stringify(list)).not.toContain(keys[0]!.slice(10));
    expect(list.map((k) => k.key_prefix)).toContain(keys[0]!.slice(0, 9));
    const byPrefix = list.find((k) => k.key_prefix === keys[0]!.slice(0, 9))!;
    const r = await mkt(['key', 'revoke', byPrefix.id]);
    expect(r.code, r.err).toBe(0);
    expect(await status(keys[0]!)).toMatchObject({ valid: false, code: 'REVOKED' });
    expect((await mkt(['key', 'revoke', '-'], { stdin: `${keys[1]!.toLowerCase()}\n` })).code).toBe(0);
    expect(await status(keys[1]!)).toMatchObject({ valid: false, code: 'REVOKED' });
    expect((await mkt(['key', 'revoke', 'lk_0000'])).code).toBe(1);
    expect((await mkt(['key', 'list', 'nope'])).code).toBe(1);
  });

  it('signing-key rotate: a new kid signs, the old one stays in the JWKS; the keys live in the database, not in a file', async () => {
    const before = await jwksKids(s);
    const r = await mkt(['signing-key', 'rotate', '--json']);
    expect(r.code, r.err).toBe(0);
    const rotated = JSON.parse(r.out) as { kid: string; retired: string[] };
    expect(rotated.retired).toEqual(before);
    expect(existsSync(join(dir.path, 'data', 'license-signing-keys.json'))).toBe(false);
    // The server follows without a restart (a notification, or at the latest its next version check).
    await expect.poll(() => jwksKids(s), { timeout: 10_000, interval: 50 }).toContain(rotated.kid);
    expect((await jwksKids(s)).sort()).toEqual([...before, rotated.kid].sort());
    const v = (await s.app.inject({ method: 'POST', url: '/api/v1/license/verify', payload: { key: keys[2], machine_fingerprint: 'fp' } })).json() as { token: string };
    expect(JSON.parse(Buffer.from(v.token.split('.')[0]!, 'base64url').toString()).kid).toBe(rotated.kid);
  });

  it('key issue with a past --expires issues keys born expired, with a one-line warning (as Keygen accepts them; issue 30 item 13)', async () => {
    const r = await mkt(['key', 'issue', 'font-pro', '--expires', '2020-01-01']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^\S+\n$/);
    expect(r.err.split('\n').filter((l) => l.startsWith('mkt: warning: '))).toEqual(['mkt: warning: --expires 2020-01-01 is in the past: the keys are issued already expired']);
    expect(await status(r.out.trim())).toMatchObject({ valid: false, code: 'EXPIRED' });
    // A future one says nothing of the kind.
    expect((await mkt(['key', 'issue', 'font-pro', '--expires', '2099-01-01'])).err).not.toMatch(/warning/);
  });
});

describe('mkt admin: floating items, entitlements, suspend and reinstate, budgets (issue 33)', () => {
  const post = async (path: string, body: unknown) => (await s.app.inject({ method: 'POST', url: path, payload: body as object })).json() as Record<string, unknown>;

  it('item create --activation floating --lease 15m and a budget; bad combinations and durations exit 2', async () => {
    const r = await mkt(['item', 'create', 'ci-tool', '--name', 'CI Tool', '--max-activations', '5', '--activation', 'floating', '--lease', '15m', '--max-deactivations', '3', '--per', '30d', '--verification', 'on', '--json']);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ id: 'ci-tool', activation_policy: 'floating', lease_seconds: 900, max_activations: 5, max_deactivations: 3, deactivation_window_seconds: 2_592_000 });
    const human = await mkt(['item', 'create', 'desk', '--name', 'Desk', '--max-activations', '2', '--max-deactivations', '1', '--per', '1h']);
    expect(human.code, human.err).toBe(0);
    expect(human.out).toMatch(/node-locked/);
    expect(human.out).toMatch(/1 per 3600 s/);
    for (const bad of [
      ['--activation', 'floating'],
      ['--lease', '15m'],
      ['--activation', 'floating', '--lease', '1.5s'],
      ['--activation', 'floating', '--lease', 'soon'],
      ['--max-deactivations', '3'],
      ['--per', '30d'],
      ['--max-deactivations', '0', '--per', '1d'],
    ]) {
      const x = await mkt(['item', 'create', 'bad', '--name', 'Bad', ...bad]);
      expect(x.code, `${bad.join(' ')}: ${x.err}`).toBe(2);
      expect(x.err.trim().split('\n')).toHaveLength(1);
    }
  });

  it('key issue --entitlements and a key budget; key entitlements --add/--remove; the server answers with them at once', async () => {
    const r = await mkt(['key', 'issue', 'ci-tool', '--entitlements', 'sso,export-pdf', '--max-deactivations', '1', '--per', '1d', '--json']);
    expect(r.code, r.err).toBe(0);
    const [k] = JSON.parse(r.out) as { id: string; key: string; entitlements: string[] }[];
    expect(k!.entitlements).toEqual(['export-pdf', 'sso']);
    expect(await status(k!.key)).toMatchObject({ valid: true, license: { entitlements: ['export-pdf', 'sso'], activation_policy: 'floating', lease_seconds: 900 } });
    const changed = await mkt(['key', 'entitlements', k!.id, '--add', 'api', '--remove', 'sso', '--json']);
    expect(changed.code, changed.err).toBe(0);
    expect(JSON.parse(changed.out)).toEqual({ id: k!.id, entitlements: ['api', 'export-pdf'], added: ['api'], removed: ['sso'] });
    const shown = await mkt(['key', 'entitlements', '-'], { stdin: `${k!.key}\n` });
    expect(shown).toMatchObject({ code: 0, out: 'api,export-pdf\n' });
    expect(await post('/api/v1/keys/validate', { key: k!.key, entitlements: ['sso'] })).toMatchObject({ valid: false, code: 'ENTITLEMENT_MISSING' });
    expect((await mkt(['key', 'entitlements', k!.id, '--add', 'Not Valid'])).code).toBe(2);
    expect((await mkt(['key', 'issue', 'ci-tool', '--entitlements', 'a,B'])).code).toBe(2);
    expect((await mkt(['key', 'entitlements', 'lk_0000', '--add', 'x'])).code).toBe(1);
  });

  it('key suspend / reinstate by id, by key on stdin; SUSPENDED on the server, activations kept; a revoked key cannot be reinstated', async () => {
    const [k] = JSON.parse((await mkt(['key', 'issue', 'font-pro', '--json'])).out) as { id: string; key: string }[];
    expect(await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'm1', activate: true })).toMatchObject({ valid: true });
    const suspended = await mkt(['key', 'suspend', k!.id]);
    expect(suspended).toMatchObject({ code: 0, out: `suspended ${k!.id}\n` });
    expect(await status(k!.key)).toMatchObject({ valid: false, code: 'SUSPENDED', license: { activation_count: 1 } });
    expect(JSON.parse((await mkt(['key', 'suspend', '-', '--json'], { stdin: `${k!.key}\n` })).out)).toEqual({ id: k!.id, suspended: true, changed: false });
    const back = await mkt(['key', 'reinstate', '-', '--json'], { stdin: `${k!.key}\n` });
    expect(JSON.parse(back.out)).toEqual({ id: k!.id, suspended: false, changed: true });
    expect(await post('/api/v1/keys/validate', { key: k!.key, machine_id: 'm1' })).toMatchObject({ valid: true, license: { activation_count: 1 } });
    expect((await mkt(['key', 'revoke', k!.id])).code).toBe(0);
    const refused = await mkt(['key', 'reinstate', k!.id]);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/revoked: revocation is final/);
    expect((await mkt(['key', 'suspend', 'lk_0000'])).code).toBe(1);
    expect((await mkt(['key', 'suspend', '-'], { stdin: '\n' })).code).toBe(2);
  });
});

describe('mkt admin --database-url (PostgreSQL)', () => {
  const pgDir = tempDir('mkt-license-admin-pg-');
  let srv: LicenseServer;
  let pg: AdminCli;
  let url = '';

  beforeAll(async () => {
    url = await freshDatabaseUrl();
    srv = await startLicenseServer({ dataDir: join(pgDir.path, 'data'), databaseUrl: url });
    pg = adminCli(pgDir.path, join(pgDir.path, 'data'), { databaseUrl: url });
  });
  afterAll(async () => {
    await srv?.close();
    pgDir.remove();
  });

  it('item create, key issue and signing-key rotate work against the PostgreSQL database a server uses', async () => {
    const item = await pg(['item', 'create', 'cli-tool', '--name', 'CLI Tool', '--max-activations', '2', '--verification', 'on', '--json']);
    expect(item.code, item.err).toBe(0);
    const issued = await pg(['key', 'issue', 'cli-tool', '--json']);
    expect(issued.code, issued.err).toBe(0);
    const [k] = JSON.parse(issued.out) as { key: string; id: string }[];
    expect(await status(k!.key, srv)).toMatchObject({ valid: true, license: { item_id: 'cli-tool', max_activations: 2 } });
    // MKT_DATABASE_URL selects the same database as the flag.
    const listed = await adminCli(pgDir.path, join(pgDir.path, 'data'))(['key', 'list', 'cli-tool', '--json'], { env: { MKT_DATABASE_URL: url } });
    expect(listed.code, listed.err).toBe(0);
    expect((JSON.parse(listed.out) as { id: string }[]).map((x) => x.id)).toEqual([k!.id]);
    // Nothing was written to a SQLite file in the data dir.
    expect(existsSync(join(pgDir.path, 'data', 'marketplace.db'))).toBe(false);

    const before = await jwksKids(srv);
    const r = await pg(['signing-key', 'rotate', '--json']);
    expect(r.code, r.err).toBe(0);
    const rotated = JSON.parse(r.out) as { kid: string; retired: string[] };
    expect(rotated.retired).toEqual(before);
    await expect.poll(() => jwksKids(srv), { timeout: 5_000, interval: 20 }).toContain(rotated.kid);
    const v = (await srv.app.inject({ method: 'POST', url: '/api/v1/license/verify', payload: { key: k!.key, machine_fingerprint: 'fp' } })).json() as { token: string };
    expect(JSON.parse(Buffer.from(v.token.split('.')[0]!, 'base64url').toString()).kid).toBe(rotated.kid);
    expect((await pg(['key', 'revoke', k!.id])).code).toBe(0);
    expect(await status(k!.key, srv)).toMatchObject({ valid: false, code: 'REVOKED' });
  });
});
