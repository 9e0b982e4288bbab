// The auth plugin (ARCHITECTURE "One fastify plugin authenticates"): parsing of every scheme the
// services accept and of the session cookie, garbage and overlong input as malformed (a 401 of the
// service's shape, never a 500), verify once per request, and the notes API on a real marketplace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Authenticator, installAuth, MAX_COOKIE_HEADER_LENGTH, MAX_CREDENTIAL_LENGTH, parseAuthorization, parseCookie, type Problem } from '../../../daemon/plugins/auth.js';
import { HttpError } from '../../../daemon/plugins/errors.js';
import { buildServer } from '../../../daemon/server.js';
import { captureLog } from '../../helpers/log-capture.js';
import { startNotesServer, type NotesServer } from '../../helpers/notes-server.js';

const ALL = ['Bearer', 'token', 'Basic', 'License'] as const;
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const token = (scheme: string, t: string) => ({ kind: 'credential', credential: { kind: 'token', scheme, token: t } });

describe('parseAuthorization', () => {
  it('reads Bearer and token (any case of the scheme word, surrounding blanks ignored)', () => {
    expect(parseAuthorization('Bearer t1', ALL)).toEqual(token('Bearer', 't1'));
    expect(parseAuthorization('bearer  t1 ', ALL)).toEqual(token('Bearer', 't1'));
    expect(parseAuthorization('token t2', ALL)).toEqual(token('token', 't2'));
    expect(parseAuthorization('TOKEN\tt2', ALL)).toEqual(token('token', 't2'));
  });

  it('reads Basic as git sends it (user:token), a token alone as the user name, and a password with colons', () => {
    expect(parseAuthorization(`Basic ${b64('ana:mkt_abc')}`, ALL)).toEqual(token('Basic', 'mkt_abc'));
    expect(parseAuthorization(`Basic ${b64('mkt_abc')}`, ALL)).toEqual(token('Basic', 'mkt_abc'));
    expect(parseAuthorization(`Basic ${b64('mkt_abc:')}`, ALL)).toEqual(token('Basic', 'mkt_abc'));
    expect(parseAuthorization(`Basic ${b64('ana:a:b')}`, ALL)).toEqual(token('Basic', 'a:b'));
  });

  it('reads License <key>', () => {
    expect(parseAuthorization('License ABCD-EFGH-1234', ALL)).toEqual({ kind: 'credential', credential: { kind: 'license', key: 'ABCD-EFGH-1234' } });
  });

  it('no header (or a blank one) is no credential', () => {
    expect(parseAuthorization(undefined, ALL)).toEqual({ kind: 'none' });
    expect(parseAuthorization('', ALL)).toEqual({ kind: 'none' });
    expect(parseAuthorization('   ', ALL)).toEqual({ kind: 'none' });
  });

  it('garbage, a scheme the service does not accept, and a token with a second word are malformed', () => {
    for (const h of ['Bearer', 'Bearer ', 'garbage', 'Digest x', 'Bearer a b', '::::', 'Bearer\u0000x y', 'Basic']) {
      expect(parseAuthorization(h, ALL).kind, h).toBe('malformed');
    }
    expect(parseAuthorization('Basic eHl6', ['Bearer'])).toEqual({ kind: 'malformed', reason: 'Authorization header must be "Bearer <token>"' });
    expect(parseAuthorization('License K', ['Bearer', 'token']).kind).toBe('malformed');
  });

  it('bad base64, invalid UTF-8 and empty Basic credentials are malformed', () => {
    expect(parseAuthorization('Basic !!!notbase64', ALL)).toEqual({ kind: 'malformed', reason: 'Basic credentials are not valid base64' });
    expect(parseAuthorization('Basic a', ALL)).toEqual({ kind: 'malformed', reason: 'Basic credentials are not valid base64' });
    expect(parseAuthorization(`Basic ${Buffer.from([0x61, 0x3a, 0xff, 0xfe]).toString('base64')}`, ALL)).toEqual({ kind: 'malformed', reason: 'Basic credentials are not valid UTF-8' });
    expect(parseAuthorization(`Basic ${b64(':')}`, ALL)).toEqual({ kind: 'malformed', reason: 'Basic credentials carry no token' });
  });

  it('an overlong header is malformed without being decoded', () => {
    const long = `Bearer ${'x'.repeat(MAX_CREDENTIAL_LENGTH)}`;
    expect(parseAuthorization(long, ALL)).toEqual({ kind: 'malformed', reason: 'Authorization header is too long' });
    expect(parseAuthorization(`Basic ${'QUFB'.repeat(MAX_CREDENTIAL_LENGTH)}`, ALL).kind).toBe('malformed');
  });
});

describe('parseCookie', () => {
  it('finds the named cookie among others, percent-decoded, quoted or not', () => {
    expect(parseCookie('a=1; mkt_session=s%2B1; b=2', 'mkt_session')).toEqual({ kind: 'credential', credential: { kind: 'session', value: 's+1' } });
    expect(parseCookie('mkt_session="abc"', 'mkt_session')).toEqual({ kind: 'credential', credential: { kind: 'session', value: 'abc' } });
    expect(parseCookie('other=1', 'mkt_session')).toEqual({ kind: 'none' });
    expect(parseCookie('mkt_session=', 'mkt_session')).toEqual({ kind: 'none' });
    expect(parseCookie(undefined, 'mkt_session')).toEqual({ kind: 'none' });
  });

  it('malformed percent-encoding and overlong headers are malformed, never an exception', () => {
    expect(parseCookie('mkt_session=%ZZ', 'mkt_session')).toEqual({ kind: 'malformed', reason: 'the mkt_session cookie is not valid percent-encoding' });
    expect(parseCookie('mkt_session=%E0%A4%A', 'mkt_session').kind).toBe('malformed');
    expect(parseCookie(`mkt_session=${'a'.repeat(MAX_CREDENTIAL_LENGTH + 1)}`, 'mkt_session').kind).toBe('malformed');
    expect(parseCookie(`mkt_session=x; other=${'a'.repeat(MAX_COOKIE_HEADER_LENGTH)}`, 'mkt_session').kind).toBe('malformed');
  });

  it("a site's other cookies may make the header longer than one credential", () => {
    expect(parseCookie(`theme=${'a'.repeat(8000)}; mkt_session=s3ss10n`, 'mkt_session')).toEqual({ kind: 'credential', credential: { kind: 'session', value: 's3ss10n' } });
  });
});

describe('installAuth on a real server', () => {
  let app: FastifyInstance;
  let verified = 0;

  beforeAll(async () => {
    const auth = new Authenticator<{ name: string }>({
      schemes: ['Bearer'],
      cookie: 'sid',
      verify(c) {
        verified++;
        if (c.kind === 'token' && c.token === 'good') return { name: 'tok' };
        if (c.kind === 'session' && c.value === 'ok') return { name: 'ses' };
        return undefined;
      },
      unauthorized: (p: Problem) => new HttpError(401, `refused: ${p.kind}`, { 'www-authenticate': 'Bearer realm="t"' }),
    });
    app = await buildServer({
      logger: captureLog().logger,
      service: {
        openapi: { title: 't', version: '0' },
        async register(a) {
          installAuth(a, auth, { required: true, applies: (req) => req.url !== '/open' });
          a.get('/who', async (req) => ({ caller: req.caller, again: await auth.required(req) }));
          a.get('/open', async (req) => ({ caller: (await auth.optional(req)) ?? null }));
        },
        close: async () => undefined,
      },
    });
  });
  afterAll(async () => {
    await app.close();
  });

  it('decorates the request with the caller, verifying it once per request', async () => {
    verified = 0;
    const r = await app.inject({ method: 'GET', url: '/who', headers: { authorization: 'Bearer good' } });
    expect(r.json()).toEqual({ caller: { name: 'tok' }, again: { name: 'tok' } });
    expect(verified).toBe(1);
    expect((await app.inject({ method: 'GET', url: '/who', headers: { cookie: 'sid=ok' } })).json()).toEqual({ caller: { name: 'ses' }, again: { name: 'ses' } });
  });

  it('answers the service 401 for missing, malformed and wrong credentials, and for /openapi.json and unknown routes', async () => {
    const cases: [Record<string, string>, string][] = [
      [{}, 'refused: missing'],
      [{ authorization: 'Basic eHl6' }, 'refused: malformed'],
      [{ authorization: 'Bearer bad' }, 'refused: invalid'],
      [{ cookie: 'sid=%ZZ' }, 'refused: malformed'],
      [{ authorization: `Bearer ${'x'.repeat(MAX_CREDENTIAL_LENGTH + 1)}` }, 'refused: malformed'],
    ];
    for (const [headers, error] of cases) {
      const r = await app.inject({ method: 'GET', url: '/who', headers });
      expect([r.statusCode, r.json(), r.headers['www-authenticate']], JSON.stringify(headers)).toEqual([401, { error }, 'Bearer realm="t"']);
    }
    expect((await app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/nowhere' })).statusCode).toBe(401);
  });

  it('optional: anonymous without a credential, still 401 for a bad one', async () => {
    expect((await app.inject({ method: 'GET', url: '/open' })).json()).toEqual({ caller: null });
    expect((await app.inject({ method: 'GET', url: '/open', headers: { cookie: 'sid=%ZZ' } })).statusCode).toBe(401);
  });
});

describe('the notes API and git with malformed credentials (issue 11: 500 for mkt_session=%ZZ)', () => {
  let s: NotesServer;
  beforeAll(async () => {
    s = await startNotesServer();
    await s.admin.createRepo('ana/app', { private: false, objectFormat: 'sha1' });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('a malformed session cookie is 401 {"error"}, not 500; a good one still reads', async () => {
    const note = `${s.url}/api/git/ana/app/notes/${'a'.repeat(40)}`;
    for (const cookie of ['mkt_session=%ZZ', 'mkt_session=%', 'mkt_session=%E0%A4%A']) {
      const r = await fetch(note, { headers: { cookie } });
      expect(r.status, cookie).toBe(401);
      expect((await r.json()) as unknown).toEqual({ error: 'the mkt_session cookie is not valid percent-encoding' });
    }
    const ok = await fetch(`${s.url}/api/git/ana/app/notes`, { headers: { cookie: `mkt_session=${encodeURIComponent(s.anaSession)}` } });
    expect(ok.status).toBe(200);
  });

  it('garbage and bad base64 in Authorization are 401; git gets its Basic challenge', async () => {
    const list = `${s.url}/api/git/ana/app/notes`;
    for (const authorization of ['Basic !!!', 'Bearer a b', `Bearer ${'x'.repeat(MAX_CREDENTIAL_LENGTH)}`]) {
      const r = await fetch(list, { headers: { authorization } });
      expect(r.status, authorization).toBe(401);
      expect(Object.keys((await r.json()) as object)).toEqual(['error']);
    }
    const git = await fetch(`${s.url}/ana/app.git/info/refs?service=git-upload-pack`, { headers: { authorization: 'Basic %%%' } });
    expect(git.status).toBe(401);
    expect(git.headers.get('www-authenticate')).toMatch(/^Basic realm="mkt"/);
  });
});
