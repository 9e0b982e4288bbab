// `mkt license check` trusts only the vendor's pinned public keys (issue 11, defect 4): a token
// minted with the user's own key and its JWK planted in the cache is refused, and so are another
// issuer, token type, item, machine, an expired or future-dated token. A real server signs.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { startLicenseServer, type LicenseServer } from '../../helpers/license-server.js';
import { saveToken, tokenDir } from '../../../src/client/license-offline.js';
import { fingerprintHash } from '../../../src/crypto/signing.js';

const home = tempDir('mkt-license-check-');
const MACHINE = 'runner-1';
let s: LicenseServer;
let env: NodeJS.ProcessEnv;
let pinned = '';
let jwksText = '';
/** The claims of a token the server really issued, for tokens minted with one claim changed. */
let real: Record<string, unknown> = {};

async function mkt(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  const io = fakeIO({ env: { ...env, ...extra }, cwd: home.path });
  const code = await run(['license', ...args], io);
  return { code, out: io.out(), err: io.err() };
}

let signer: { kid: string; key: KeyObject } | undefined;

/** The server's current signing key, read from its database as only the vendor can (loaded in beforeAll). */
function serverKey(): { kid: string; key: KeyObject } {
  return signer!;
}

async function loadServerKey(): Promise<void> {
  const k = (await s.license.signingKeys()).filter((x) => x.retired_at === null && x.private_key).at(-1)!;
  signer = { kid: k.kid, key: createPrivateKey({ key: Buffer.from(k.private_key!, 'base64url'), format: 'der', type: 'pkcs8' }) };
}

function mint(claims: Record<string, unknown>, signer: { kid: string; key: KeyObject }, typ = 'JWT'): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', typ, kid: signer.kid }).sign(signer.key);
}

/** Plants a token in the cache as `item`, as a user editing their own cache file can. */
function plant(item: string, token: string, extra: Record<string, unknown> = {}): void {
  saveToken(env, { server: s.url, item, license: String(real.license), token, saved_at: new Date().toISOString(), ...extra });
}

const nowS = (): number => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  s = await startLicenseServer();
  await loadServerKey();
  await s.admin.createItem({ id: 'font-pro', name: 'Font Pro', licenseTemplate: null, maxActivations: 5, verification: true });
  await s.admin.createItem({ id: 'font-lite', name: 'Font Lite', licenseTemplate: null, maxActivations: 5, verification: true });
  const pro = (await s.admin.issueKeys({ itemId: 'font-pro', count: 1, expiresAt: null, licensee: null }))[0]!.key;
  const lite = (await s.admin.issueKeys({ itemId: 'font-lite', count: 1, expiresAt: null, licensee: null }))[0]!.key;
  env = { XDG_CONFIG_HOME: join(home.path, 'config'), XDG_CACHE_HOME: join(home.path, 'cache'), MKT_CREDENTIAL_STORE: 'file', MKT_MARKETPLACE_URL: s.url };
  jwksText = await (await fetch(`${s.url}/api/v1/license/jwks.json`)).text();
  pinned = join(home.path, 'vendor-keys.jwks');
  writeFileSync(pinned, jwksText);
  const v = await mkt(['verify', '--machine', MACHINE], { MKT_LICENSE_KEY: pro });
  expect(v.code, v.err).toBe(0);
  expect(v.err).toContain(`${s.url}/api/v1/license/jwks.json`);
  const l = await mkt(['verify', '--machine', MACHINE], { MKT_LICENSE_KEY: lite });
  expect(l.code, l.err).toBe(0);
  const token = JSON.parse(readFileSync(join(tokenDir(env), 'font-pro.json'), 'utf8')).token as string;
  real = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
});
afterAll(async () => {
  await s?.close();
  home.remove();
});

describe('mkt license check: the happy path with a pinned key', () => {
  it('a token the server issued is VALID with the JWKS pinned by --public-key', async () => {
    const r = await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', pinned, '--json'], { MKT_MARKETPLACE_URL: 'http://127.0.0.1:9' });
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ valid: true, code: 'VALID', item: 'font-pro', license: real.license });
  });

  it('the key may be pinned by $MKT_LICENSE_PUBLIC_KEYS as a path (relative to the working dir) or inline JWKS, or as a PEM file', async () => {
    expect((await mkt(['check', '--item', 'font-pro', '--machine', MACHINE], { MKT_LICENSE_PUBLIC_KEYS: 'vendor-keys.jwks' })).code).toBe(0);
    expect((await mkt(['check', '--item', 'font-pro', '--machine', MACHINE], { MKT_LICENSE_PUBLIC_KEYS: jwksText })).code).toBe(0);
    const { createPublicKey } = await import('node:crypto');
    const jwk = (JSON.parse(jwksText) as { keys: { x: string }[] }).keys[0]!;
    const pem = join(home.path, 'vendor-key.pem');
    writeFileSync(pem, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' }).export({ format: 'pem', type: 'spki' }));
    const r = await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', pem]);
    expect(r.code, r.err).toBe(0);
  });

  it('a custom issuer is accepted when the check expects it (--issuer), and only then', async () => {
    plant('font-pro', await mint({ ...real, iss: 'fonts.example' }, serverKey()));
    expect((await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', pinned, '--issuer', 'fonts.example'])).code).toBe(0);
    expect((await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', pinned], { MKT_LICENSE_ISSUER: 'fonts.example' })).code).toBe(0);
    const r = await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', pinned]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^mkt: WRONG_ISSUER: /);
  });
});

describe('mkt license check: the trust anchor is never the cache', () => {
  it('the forged-token attack: a token minted with an own Ed25519 key, its JWK planted in the cache, is not VALID', async () => {
    const own = generateKeyPairSync('ed25519');
    const ownJwk = { ...(own.publicKey.export({ format: 'jwk' }) as Record<string, unknown>), kid: 'mine', alg: 'EdDSA', use: 'sig' };
    const forged = await mint({ ...real, iat: nowS(), exp: Date.UTC(2100, 0, 1) / 1000 }, { kid: 'mine', key: own.privateKey });
    plant('font-pro', forged, { jwks: { keys: [ownJwk] } });
    const r = await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', pinned, '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ valid: false, code: 'UNKNOWN_KEY' });
    expect(r.err).toMatch(/^mkt: UNKNOWN_KEY: /);

    // The same forgery under the server's own kid fails the signature instead.
    const sameKid = await mint({ ...real, iat: nowS(), exp: Date.UTC(2100, 0, 1) / 1000 }, { kid: serverKey().kid, key: own.privateKey });
    plant('font-pro', sameKid, { jwks: { keys: [{ ...ownJwk, kid: serverKey().kid }] } });
    const b = await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', pinned]);
    expect(b.code).toBe(1);
    expect(b.err).toMatch(/^mkt: BAD_SIGNATURE: /);
  });

  it('a real token with its claims changed after signing, or re-signed as HS256 with the public key, is not VALID', async () => {
    const token = await mint({ ...real, iat: nowS(), exp: nowS() + 86400 }, serverKey());
    const [h, , sig] = token.split('.');
    const widened = Buffer.from(JSON.stringify({ ...real, item: 'font-max', iat: nowS(), exp: Date.UTC(2100, 0, 1) / 1000 })).toString('base64url');
    plant('font-pro', `${h}.${widened}.${sig}`);
    const tampered = await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', pinned]);
    expect(tampered.code).toBe(1);
    expect(tampered.err).toMatch(/^mkt: BAD_SIGNATURE: /);

    const { createHmac } = await import('node:crypto');
    const x = (JSON.parse(jwksText) as { keys: { x: string }[] }).keys[0]!.x;
    const input = `${Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: serverKey().kid })).toString('base64url')}.${Buffer.from(JSON.stringify(real)).toString('base64url')}`;
    plant('font-pro', `${input}.${createHmac('sha256', x).update(input).digest('base64url')}`);
    const hs = await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', pinned, '--json']);
    expect(hs.code).toBe(1);
    expect(JSON.parse(hs.out)).toMatchObject({ valid: false, code: 'MALFORMED_TOKEN', error: 'the token is not signed with EdDSA' });
  });

  it('several pinned keys: one that does not verify the token is passed over for the next', async () => {
    const { createPublicKey } = await import('node:crypto');
    const jwk = (JSON.parse(jwksText) as { keys: { x: string }[] }).keys[0]!;
    const pem = (key: KeyObject): string => key.export({ format: 'pem', type: 'spki' }).toString();
    const other = generateKeyPairSync('ed25519').publicKey;
    const both = join(home.path, 'two-keys.pem');
    writeFileSync(both, pem(other) + pem(createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' })));
    plant('font-pro', await mint({ ...real, iat: nowS(), exp: nowS() + 86400 }, serverKey()));
    const r = await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', both]);
    expect(r.code, r.err).toBe(0);
    const onlyOther = join(home.path, 'other-key.pem');
    writeFileSync(onlyOther, pem(other));
    expect((await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', onlyOther])).err).toMatch(/^mkt: BAD_SIGNATURE: /);
  });

  it('without a pinned key the check exits 2 with one readable line, even with a JWKS in the cache', async () => {
    const own = generateKeyPairSync('ed25519');
    const ownJwk = { ...(own.publicKey.export({ format: 'jwk' }) as Record<string, unknown>), kid: 'mine', alg: 'EdDSA', use: 'sig' };
    plant('font-pro', await mint({ ...real, iat: nowS(), exp: Date.UTC(2100, 0, 1) / 1000 }, { kid: 'mine', key: own.privateKey }), { jwks: { keys: [ownJwk] } });
    const r = await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--json']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.split('\n')[0]).toBe('mkt: no pinned license public key: pass --public-key FILE or set $MKT_LICENSE_PUBLIC_KEYS to the vendor\'s JWKS (the cached keys are never trusted)');
  });

  it('a pinned file that is unreadable, not a key, or a private key exits 2', async () => {
    expect((await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', join(home.path, 'missing.jwks')])).err).toMatch(/^mkt: cannot read the pinned public keys .*ENOENT/);
    const junk = join(home.path, 'junk.jwks');
    writeFileSync(junk, 'not a key');
    expect((await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', junk])).code).toBe(2);
    const priv = join(home.path, 'private.jwk');
    writeFileSync(priv, JSON.stringify(generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' })));
    const r = await mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', priv]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/is a private key/);
  });
});

describe('mkt license check: every claim is checked against what the caller expects', () => {
  const check = (extra: string[] = []) => mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', pinned, ...extra]);

  it('another item: the font-lite token copied under font-pro is ITEM_MISMATCH', async () => {
    copyFileSync(join(tokenDir(env), 'font-lite.json'), join(tokenDir(env), 'font-pro.json'));
    const r = await check();
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^mkt: ITEM_MISMATCH: the token licenses item "font-lite", not "font-pro"/);
  });

  it('another machine: MACHINE_MISMATCH', async () => {
    plant('font-pro', await mint({ ...real, fph: fingerprintHash('someone-else') }, serverKey()));
    expect((await check()).err).toMatch(/^mkt: MACHINE_MISMATCH: /);
    plant('font-pro', await mint(real, serverKey()));
    expect((await check(['--machine', 'runner-2'])).err).toMatch(/^mkt: MACHINE_MISMATCH: /);
  });

  it('expired: past exp, or issued more than 7 days ago whatever exp says (TOKEN_EXPIRED)', async () => {
    plant('font-pro', await mint({ ...real, iat: nowS() - 3600, exp: nowS() - 120 }, serverKey()));
    expect((await check()).err).toMatch(/^mkt: TOKEN_EXPIRED: /);
    plant('font-pro', await mint({ ...real, iat: nowS() - 8 * 86400, exp: Date.UTC(2100, 0, 1) / 1000 }, serverKey()));
    expect((await check()).err).toMatch(/^mkt: TOKEN_EXPIRED: the token was issued more than 7 days ago/);
  });

  it('a small clock skew is forgiven; a token issued in the future or not before a later time is NOT_YET_VALID', async () => {
    plant('font-pro', await mint({ ...real, iat: nowS() + 30, exp: nowS() + 7 * 86400 }, serverKey()));
    expect((await check()).code).toBe(0);
    plant('font-pro', await mint({ ...real, iat: nowS() + 3600, exp: nowS() + 7 * 86400 }, serverKey()));
    expect((await check()).err).toMatch(/^mkt: NOT_YET_VALID: /);
    plant('font-pro', await mint({ ...real, nbf: nowS() + 3600 }, serverKey()));
    expect((await check()).err).toMatch(/^mkt: NOT_YET_VALID: /);
  });

  it('another issuer (WRONG_ISSUER) and another token type (WRONG_TYPE), both signed with the real key', async () => {
    plant('font-pro', await mint({ ...real, iss: 'evil' }, serverKey()));
    expect((await check()).err).toMatch(/^mkt: WRONG_ISSUER: /);
    plant('font-pro', await mint(real, serverKey(), 'at+jwt'));
    expect((await check()).err).toMatch(/^mkt: WRONG_TYPE: /);
  });

  it('a token without the license claims, with alg none, or a cache file of the wrong shape is MALFORMED_TOKEN', async () => {
    const { fph: _fph, ...noFph } = real;
    plant('font-pro', await mint(noFph, serverKey()));
    expect((await check()).err).toMatch(/^mkt: MALFORMED_TOKEN: /);
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT', kid: serverKey().kid })).toString('base64url')}.${Buffer.from(JSON.stringify(real)).toString('base64url')}.`;
    plant('font-pro', none);
    expect((await check()).err).toMatch(/^mkt: MALFORMED_TOKEN: /);
    // A critical extension the check does not know, on a token the real key signed.
    const crit = `${Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'JWT', kid: serverKey().kid, crit: ['exp-policy'], 'exp-policy': 'lenient' })).toString('base64url')}.${Buffer.from(JSON.stringify(real)).toString('base64url')}`;
    const { sign } = await import('node:crypto');
    plant('font-pro', `${crit}.${sign(null, Buffer.from(crit), serverKey().key).toString('base64url')}`);
    expect((await check()).err).toMatch(/^mkt: MALFORMED_TOKEN: the token is not a well-formed signed JWT/);
    // A hand-edited cache file of the wrong shape is a failed check, not a crash.
    writeFileSync(join(tokenDir(env), 'font-pro.json'), 'null');
    const odd = await check(['--json']);
    expect(odd.code).toBe(1);
    expect(JSON.parse(odd.out)).toMatchObject({ valid: false, code: 'MALFORMED_TOKEN' });
  });
});

describe('mkt license check --entitlement: the features the license must carry, offline (issue 33)', () => {
  const check = (extra: string[] = []) => mkt(['check', '--item', 'font-pro', '--machine', MACHINE, '--public-key', pinned, ...extra], { MKT_MARKETPLACE_URL: 'http://127.0.0.1:9' });

  it("a token the server signed for a key issued with entitlements: the names it carries pass, another fails", async () => {
    await s.admin.createItem({ id: 'font-ent', name: 'Font Ent', licenseTemplate: null, maxActivations: 5, verification: true });
    const [k] = await s.admin.issueKeys({ itemId: 'font-ent', count: 1, expiresAt: null, licensee: null, entitlements: ['sso', 'export-pdf'] });
    expect((await mkt(['verify', '--machine', MACHINE], { MKT_LICENSE_KEY: k!.key })).code).toBe(0);
    const ok = await mkt(['check', '--item', 'font-ent', '--machine', MACHINE, '--public-key', pinned, '--entitlement', 'export-pdf', '--entitlement', 'sso', '--json'], { MKT_MARKETPLACE_URL: 'http://127.0.0.1:9' });
    expect(ok.code, ok.err).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ valid: true, entitlements: ['export-pdf', 'sso'] });
    const missing = await mkt(['check', '--item', 'font-ent', '--machine', MACHINE, '--public-key', pinned, '--entitlement', 'audit-log']);
    expect(missing).toMatchObject({ code: 1, err: 'mkt: ENTITLEMENT_MISSING: the license lacks the entitlement audit-log\n' });
  });

  it('every name asked for is in the signed claim: VALID, and --json lists the entitlements', async () => {
    plant('font-pro', await mint({ ...real, iat: nowS(), exp: nowS() + 3600, entitlements: ['export-pdf', 'sso'] }, serverKey()));
    expect((await check(['--entitlement', 'export-pdf'])).code).toBe(0);
    const r = await check(['--entitlement', 'sso', '--entitlement', 'export-pdf', '--json']);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ valid: true, code: 'VALID', entitlements: ['export-pdf', 'sso'] });
    expect((await check()).out).toMatch(/^entitlements\texport-pdf,sso$/m);
  });

  it('a name the claim lacks is ENTITLEMENT_MISSING, exit 1, naming each missing one', async () => {
    plant('font-pro', await mint({ ...real, iat: nowS(), exp: nowS() + 3600, entitlements: ['export-pdf'] }, serverKey()));
    const one = await check(['--entitlement', 'export-pdf', '--entitlement', 'sso']);
    expect(one).toMatchObject({ code: 1, out: '', err: 'mkt: ENTITLEMENT_MISSING: the license lacks the entitlement sso\n' });
    const two = await check(['--entitlement', 'sso', '--entitlement', 'audit-log', '--json']);
    expect(two.code).toBe(1);
    expect(JSON.parse(two.out)).toMatchObject({ valid: false, code: 'ENTITLEMENT_MISSING', error: 'the license lacks the entitlements sso, audit-log', entitlements: ['export-pdf'] });
  });

  it('a token with no entitlements claim (signed before issue 33) grants none', async () => {
    const { entitlements: _e, ...old } = real;
    plant('font-pro', await mint({ ...old, iat: nowS(), exp: nowS() + 3600 }, serverKey()));
    const plain = await check(['--json']);
    expect(plain.code, plain.err).toBe(0);
    expect(JSON.parse(plain.out)).toMatchObject({ valid: true, entitlements: null });
    expect((await check(['--entitlement', 'sso'])).err).toBe('mkt: ENTITLEMENT_MISSING: the license lacks the entitlement sso\n');
  });

  it('entitlements widened after signing fail the signature; a claim that is not a list of names is MALFORMED_TOKEN', async () => {
    const token = await mint({ ...real, iat: nowS(), exp: nowS() + 3600, entitlements: ['export-pdf'] }, serverKey());
    const [h, , sig] = token.split('.');
    const widened = Buffer.from(JSON.stringify({ ...real, iat: nowS(), exp: nowS() + 3600, entitlements: ['export-pdf', 'sso'] })).toString('base64url');
    plant('font-pro', `${h}.${widened}.${sig}`);
    expect((await check(['--entitlement', 'sso'])).err).toMatch(/^mkt: BAD_SIGNATURE: /);
    plant('font-pro', await mint({ ...real, iat: nowS(), exp: nowS() + 3600, entitlements: 'sso' }, serverKey()));
    expect((await check(['--entitlement', 'sso'])).err).toBe('mkt: MALFORMED_TOKEN: the token claim entitlements is not a list of names\n');
  });

  it('a name that cannot be an entitlement is a usage error (exit 2)', async () => {
    const r = await check(['--entitlement', 'Export PDF']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^mkt: --entitlement "Export PDF" is not an entitlement name/);
  });
});
