// `mkt license validate|status|deactivate|verify|check|text` against a real license server:
// the key sources (--key-file, MKT_LICENSE_KEY, stdin), CI exit codes (0 valid, 1 invalid
// with the code on stderr, 2 usage, 3 unreachable), and the offline check (issue 5 "Client").
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { startLicenseServer, type LicenseServer } from '../../helpers/license-server.js';
import { machineFingerprint, tokenDir } from '../../../src/client/license-offline.js';

const home = tempDir('mkt-license-cli-');
let s: LicenseServer;
let env: NodeJS.ProcessEnv;
let key = '';

beforeAll(async () => {
  s = await startLicenseServer();
  await s.admin.createItem({ id: 'font-pro', name: 'Font Pro', licenseTemplate: '{{item_name}} licensed to {{licensee}}, {{year}} ({{key_prefix}})', maxActivations: 2, verification: true });
  key = (await s.admin.issueKeys({ itemId: 'font-pro', count: 1, expiresAt: null, licensee: 'ACME CI' }))[0]!.key;
  // The vendor's public keys, pinned the way an app ships them (check never trusts the cache).
  const pinned = join(home.path, 'license-keys.jwks');
  writeFileSync(pinned, await (await fetch(`${s.url}/api/v1/license/jwks.json`)).text());
  env = { XDG_CONFIG_HOME: join(home.path, 'config'), XDG_CACHE_HOME: join(home.path, 'cache'), MKT_CREDENTIAL_STORE: 'file', MKT_MARKETPLACE_URL: s.url, MKT_LICENSE_PUBLIC_KEYS: pinned };
});
afterAll(async () => {
  await s?.close();
  home.remove();
});

async function mkt(args: string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env: { ...env, ...opts.env }, stdin: opts.stdin });
  const code = await run(['license', ...args], io);
  return { code, out: io.out(), err: io.err() };
}

describe('mkt license: key sources and exit codes', () => {
  it('reads the key from MKT_LICENSE_KEY, --key-file and stdin; exit 0 when valid', async () => {
    const viaEnv = await mkt(['status'], { env: { MKT_LICENSE_KEY: key } });
    expect(viaEnv.code, viaEnv.err).toBe(0);
    expect(viaEnv.out).toMatch(/^item\tfont-pro$/m);
    const file = join(home.path, 'license.key');
    writeFileSync(file, `${key}\n`);
    expect((await mkt(['status', '--key-file', file])).code).toBe(0);
    const viaStdin = await mkt(['status', '--json'], { stdin: `${key}\n` });
    expect(viaStdin.code).toBe(0);
    expect(JSON.parse(viaStdin.out)).toMatchObject({ valid: true, code: 'VALID', license: { item_id: 'font-pro', max_activations: 2 } });
  });

  it('an invalid key exits 1 with its code on stderr; --json still prints the response', async () => {
    const typo = key.slice(0, 6) + (key[6] === 'A' ? 'B' : 'A') + key.slice(7);
    const r = await mkt(['validate', '--json'], { env: { MKT_LICENSE_KEY: typo } });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^mkt: MALFORMED_KEY: /);
    expect(JSON.parse(r.out)).toMatchObject({ valid: false, code: 'MALFORMED_KEY' });
    expect(r.err).not.toContain(typo);
  });

  it('usage errors exit 2: no key at all, --activate without --machine', async () => {
    const none = await mkt(['status']);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/no license key/);
    expect((await mkt(['validate', '--activate'], { env: { MKT_LICENSE_KEY: key } })).code).toBe(2);
    // The server refuses the body's machine_id; the error names the flag that set it (issue 30, item 7).
    const long = await mkt(['validate', '--machine', 'm'.repeat(300)], { env: { MKT_LICENSE_KEY: key } });
    expect(long.code).toBe(2);
    expect(long.err).toBe('mkt: --machine must not have more than 256 characters\n');
  });

  it('an unreachable server exits 3', async () => {
    const r = await mkt(['status', '--server', 'http://127.0.0.1:9'], { env: { MKT_LICENSE_KEY: key } });
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/cannot reach/);
  });
});

describe('mkt license validate --activate and deactivate', () => {
  it('--machine auto activates a stable fingerprint (idempotent), deactivate frees it', async () => {
    const fp = machineFingerprint();
    expect(fp).toMatch(/^[0-9a-f]{64}$/);
    expect(machineFingerprint()).toBe(fp);
    const first = JSON.parse((await mkt(['validate', '--machine', 'auto', '--activate', '--json'], { env: { MKT_LICENSE_KEY: key } })).out);
    expect(first).toMatchObject({ valid: true, activated: true, license: { activation_count: 1 } });
    const again = JSON.parse((await mkt(['validate', '--machine', 'auto', '--activate', '--json'], { env: { MKT_LICENSE_KEY: key } })).out);
    expect(again).toMatchObject({ valid: true, activated: false, license: { activation_count: 1 } });
    expect((await mkt(['deactivate', '--machine', 'auto'], { env: { MKT_LICENSE_KEY: key } })).code).toBe(0);
    const gone = await mkt(['deactivate', '--machine', 'auto'], { env: { MKT_LICENSE_KEY: key } });
    expect(gone.code).toBe(1);
    expect(gone.err).toMatch(/MACHINE_NOT_ACTIVATED/);
    expect((await mkt(['validate', '--machine', 'auto'], { env: { MKT_LICENSE_KEY: key } })).err).toMatch(/MACHINE_NOT_ACTIVATED/);
  });
});

describe('mkt license verify and the offline check', () => {
  it('verify stores the token; check passes offline against the pinned keys with the server gone from the picture', async () => {
    const v = await mkt(['verify'], { env: { MKT_LICENSE_KEY: key } });
    expect(v.code, v.err).toBe(0);
    const stored = JSON.parse(readFileSync(join(tokenDir(env), 'font-pro.json'), 'utf8'));
    expect(stored).toMatchObject({ item: 'font-pro', token: expect.any(String) });
    // No network: point every server setting at a dead port.
    const c = await mkt(['check', '--json'], { env: { MKT_MARKETPLACE_URL: 'http://127.0.0.1:9' } });
    expect(c.code, c.err).toBe(0);
    expect(JSON.parse(c.out)).toMatchObject({ valid: true, code: 'VALID', item: 'font-pro' });
  });

  it('check rejects another machine (MACHINE_MISMATCH), a tampered token (BAD_SIGNATURE) and an expired one (TOKEN_EXPIRED)', async () => {
    expect((await mkt(['check', '--machine', 'other-machine'])).err).toMatch(/^mkt: MACHINE_MISMATCH/);
    const file = join(tokenDir(env), 'font-pro.json');
    const good = readFileSync(file, 'utf8');
    const entry = JSON.parse(good);
    const [h, p, sig] = entry.token.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    claims.exp += 365 * 24 * 3600;
    writeFileSync(file, JSON.stringify({ ...entry, token: `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}` }));
    const tampered = await mkt(['check']);
    expect(tampered.code).toBe(1);
    expect(tampered.err).toMatch(/^mkt: BAD_SIGNATURE/);

    // A token issued 8 days ago (server clock held back) has expired.
    const now = s.clock.now();
    s.clock.set(now - 8 * 24 * 3600 * 1000);
    expect((await mkt(['verify'], { env: { MKT_LICENSE_KEY: key } })).code).toBe(0);
    s.clock.set(now);
    const expired = await mkt(['check']);
    expect(expired.code).toBe(1);
    expect(expired.err).toMatch(/^mkt: TOKEN_EXPIRED/);
  });

  it('check with no stored token exits 1 (NO_TOKEN)', async () => {
    const r = await mkt(['check'], { env: { XDG_CACHE_HOME: join(home.path, 'empty-cache') } });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/NO_TOKEN/);
  });
});

describe('mkt license text', () => {
  it('prints the rendered text, personalised when a key is available; a missing item exits 1', async () => {
    const plain = await mkt(['text', 'font-pro']);
    expect(plain.code).toBe(0);
    expect(plain.out).toMatch(/^Font Pro licensed to the licensee, \d{4} \(\(no key\)\)\n$/);
    const mine = await mkt(['text', 'font-pro'], { env: { MKT_LICENSE_KEY: key } });
    expect(mine.out).toContain(`Font Pro licensed to ACME CI`);
    expect(mine.out).toContain(key.slice(0, 9));
    const missing = await mkt(['text', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/not found/);
  });
});
