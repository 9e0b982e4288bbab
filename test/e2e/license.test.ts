// A CI job's view of `mkt license` through the built binary (bin/mkt -> dist): the key from
// the environment or stdin, exit codes 0/1/2/3, and `check` offline. Needs `npm run build`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { startLicenseServer, type LicenseServer } from '../helpers/license-server.js';
import { tempDir } from '../helpers/tmp.js';
import { marketplaceEnvFor } from '../helpers/pg.js';

const mkt = join(import.meta.dirname, '../../bin/mkt');
const home = tempDir('mkt-license-e2e-');
let s: LicenseServer;
let key = '';

function runMkt(args: string[], env: NodeJS.ProcessEnv, stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [mkt, ...args],
      { env: { PATH: process.env.PATH, XDG_CONFIG_HOME: join(home.path, 'config'), XDG_CACHE_HOME: join(home.path, 'cache'), MKT_CREDENTIAL_STORE: 'file', ...env } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin ?? '');
  });
}

beforeAll(async () => {
  s = await startLicenseServer();
  await s.admin.createItem({ id: 'tool', name: 'Tool', licenseTemplate: null, maxActivations: 1, verification: true });
  key = (await s.admin.issueKeys({ itemId: 'tool', count: 1, expiresAt: null, licensee: null }))[0]!.key;
});
afterAll(async () => {
  await s?.close();
  home.remove();
});

describe('mkt license (built binary, CI exit codes)', () => {
  it('exit 0 for a valid key from MKT_LICENSE_KEY; exit 1 with the code on stderr for a revoked one', async () => {
    const ok = await runMkt(['license', 'validate', '--machine', 'auto', '--activate', '--json'], { MKT_MARKETPLACE_URL: s.url, MKT_LICENSE_KEY: key });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ valid: true, code: 'VALID' });
    const other = await runMkt(['license', 'validate', '--machine', 'another-runner', '--activate'], { MKT_MARKETPLACE_URL: s.url }, `${key}\n`);
    expect(other.code).toBe(1);
    expect(other.stderr).toBe('mkt: TOO_MANY_ACTIVATIONS: the license key has reached its activation maximum\n');
  });

  it('verify then check against the pinned vendor keys with no network at all (the server URL points nowhere)', async () => {
    const v = await runMkt(['license', 'verify'], { MKT_MARKETPLACE_URL: s.url, MKT_LICENSE_KEY: key });
    expect(v.code, v.stderr).toBe(0);
    expect(v.stderr).toContain('--public-key');
    const pinned = join(home.path, 'vendor.jwks');
    writeFileSync(pinned, await (await fetch(`${s.url}/api/v1/license/jwks.json`)).text());
    const c = await runMkt(['license', 'check', '--item', 'tool', '--public-key', pinned], { MKT_MARKETPLACE_URL: 'http://127.0.0.1:9' });
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toMatch(/^valid\tyes$/m);
    expect((await runMkt(['license', 'check'], { MKT_LICENSE_PUBLIC_KEYS: pinned })).code).toBe(0);
  });

  it('the forged-token attack: a token minted with an own key, its JWK put in the cache, exits 1 (pinned) or 2 (nothing pinned)', async () => {
    const file = join(home.path, 'cache', 'mkt', 'license', 'tool.json');
    const entry = JSON.parse(readFileSync(file, 'utf8')) as { token: string };
    const claims = JSON.parse(Buffer.from(entry.token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const own = generateKeyPairSync('ed25519');
    const forged = await new SignJWT({ ...claims, exp: Date.UTC(2100, 0, 1) / 1000 }).setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: 'mine' }).sign(own.privateKey);
    writeFileSync(file, JSON.stringify({ ...entry, token: forged, jwks: { keys: [{ ...own.publicKey.export({ format: 'jwk' }), kid: 'mine', alg: 'EdDSA', use: 'sig' }] } }));
    const pinned = await runMkt(['license', 'check', '--item', 'tool', '--json'], { MKT_LICENSE_PUBLIC_KEYS: join(home.path, 'vendor.jwks') });
    expect(pinned.code).toBe(1);
    expect(JSON.parse(pinned.stdout)).toMatchObject({ valid: false, code: 'UNKNOWN_KEY' });
    const unpinned = await runMkt(['license', 'check', '--item', 'tool'], {});
    expect(unpinned.code).toBe(2);
    expect(unpinned.stdout).toBe('');
    expect(unpinned.stderr).toMatch(/^mkt: no pinned license public key: /);
  });

  it('exit 2 for a usage error, exit 3 when the server cannot be reached', async () => {
    expect((await runMkt(['license', 'status'], { MKT_MARKETPLACE_URL: s.url })).code).toBe(2);
    const down = await runMkt(['license', 'status'], { MKT_MARKETPLACE_URL: 'http://127.0.0.1:9', MKT_LICENSE_KEY: key });
    expect(down.code).toBe(3);
    expect(down.stderr).not.toContain(key);
  });
});

describe('license keys in `mkt serve marketplace` (startService)', () => {
  it('serves the license routes in the one marketplace OpenAPI document, with admin on the same data dir', async () => {
    const { startService } = await import('../../daemon/start.js');
    const { createLogger } = await import('../../daemon/logger.js');
    const { LicenseAdmin } = await import('../../daemon/services/marketplace/license/admin.js');
    const { Writable } = await import('node:stream');
    const dir = tempDir('mkt-license-serve-');
    let log = '';
    const logger = createLogger({ level: 'trace', pretty: false, stream: new Writable({ write: (c: Buffer, _e, cb) => ((log += c.toString()), cb()) }) });
    // The run's engine: MKT_DATABASE_URL for the service, the same database for the admin.
    const dbEnv = await marketplaceEnvFor(dir.path);
    const svc = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: dir.path, options: {}, env: dbEnv, logger, out: { write: () => true } as unknown as NodeJS.WritableStream });
    const admin = await LicenseAdmin.open({ dataDir: dir.path, databaseUrl: dbEnv.MKT_DATABASE_URL });
    try {
      await admin.createItem({ id: 'app', name: 'App', licenseTemplate: 'App for {{licensee}}', maxActivations: 2, verification: true });
      const [k] = await admin.issueKeys({ itemId: 'app', count: 1, expiresAt: null, licensee: 'Grace' });
      const doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as { info: { version: string }; paths: Record<string, unknown> };
      expect(doc.info.version).toBe('0.16.0');
      expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/v1/keys/validate', '/api/v1/keys/status', '/api/v1/keys/{key_code}/status', '/api/v1/keys/deactivate', '/api/v1/license/deactivate', '/api/v1/license/verify', '/api/v1/items/{item_id}/license.txt']));
      const env = { MKT_MARKETPLACE_URL: svc.url, MKT_LICENSE_KEY: k!.key, XDG_CACHE_HOME: join(dir.path, 'cache') };
      expect((await runMkt(['license', 'verify', '--machine', 'runner-1'], env)).code).toBe(0);
      writeFileSync(join(dir.path, 'vendor.jwks'), await (await fetch(`${svc.url}/api/v1/license/jwks.json`)).text());
      const check = await runMkt(['license', 'check', '--machine', 'runner-1', '--item', 'app'], { ...env, MKT_MARKETPLACE_URL: 'http://127.0.0.1:9', MKT_LICENSE_PUBLIC_KEYS: join(dir.path, 'vendor.jwks') });
      expect(check.code, check.stderr).toBe(0);
      const text = await runMkt(['license', 'text', 'app'], env);
      expect(text.stdout).toBe('App for Grace\n');
      await fetch(`${svc.url}/api/v1/keys/${k!.key}/status`);
      expect(log).toContain('license keys ready');
      expect(log).not.toContain(k!.key);
    } finally {
      await admin.close();
      await svc.close();
      dir.remove();
    }
  });
});
