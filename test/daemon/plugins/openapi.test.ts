// The OpenAPI plugin's served parts (issue 30, "The API documents"): `servers` from the public URL
// or the socket, `security` from the service's live rule with its 401, and tuples written for the
// draft-07 validator served as 2020-12 `prefixItems` while the validator keeps refusing a third item.
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Writable } from 'node:stream';
import { get as httpGet } from 'node:http';
import { buildServer } from '../../../daemon/server.js';
import { createLogger } from '../../../daemon/logger.js';
import { BEARER, BEARER_SCHEME, toOpenApiSchema } from '../../../daemon/plugins/openapi.js';
import type { ServiceRuntime } from '../../../daemon/service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This test's own public marker. */
    open?: boolean;
  }
}

const PAIR = { type: 'array', items: [{ type: 'string' }, { type: 'string' }], minItems: 2, maxItems: 2 };
let apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const a of apps) await a.close();
  apps = [];
});

/** GET with a Host header of our choosing (fetch always sends the URL's own). */
function getWithHost(url: string, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { headers: { host } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve(text)).on('error', reject);
    });
    req.on('error', reject);
  });
}

async function serve(runtime: Partial<ServiceRuntime>): Promise<{ url: string; doc: () => Promise<any> }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- documents are inspected field by field
  const app = await buildServer({
    logger: createLogger({ level: 'silent', stream: new Writable({ write: (_c, _e, cb) => cb() }) }),
    service: {
      openapi: { title: 't', version: '1.2.3' },
      async register(a) {
        a.post('/pairs', { schema: { operationId: 'put_pair', body: { type: 'object', required: ['pair'], properties: { pair: PAIR } }, response: { 200: { type: 'object', properties: { pair: PAIR } } } } }, async (req) => req.body);
        a.get('/open', { config: { open: true }, schema: { operationId: 'open' } }, async () => ({}));
        a.get('/either', { schema: { operationId: 'either', security: [{}, { bearer: [] }] } }, async () => ({}));
      },
      async close() {},
      ...runtime,
    },
  });
  apps.push(app);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url, doc: async () => (await fetch(`${url}/openapi.json`)).json() };
}

describe('OpenAPI document', () => {
  it('names the configured public URL as its server, else the address the request reached', async () => {
    const proxied = await serve({ publicUrl: 'https://api.example.com/market/' });
    expect((await proxied.doc()).servers).toEqual([{ url: 'https://api.example.com/market' }]);
    const direct = await serve({});
    // The Host header is the client's word: a forged one does not change the document.
    const forged = JSON.parse(await getWithHost(`${direct.url}/openapi.json`, 'evil.example'));
    expect(forged.servers).toEqual([{ url: direct.url }]);
  });

  it("asks the service's rule for each operation's security when served, adds the 401 a credential brings, and lists only used schemes", async () => {
    let tokenSet = true;
    const basic = { basic: { type: 'http', scheme: 'basic' } };
    const s = await serve({ securitySchemes: { ...BEARER_SCHEME, ...basic }, operationSecurity: (c) => (c.open || !tokenSet ? [] : BEARER) });
    let doc = await s.doc();
    expect(doc.paths['/pairs'].post.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/pairs'].post.responses['401'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(doc.paths['/open'].get.security).toEqual([]);
    expect(doc.paths['/open'].get.responses['401']).toBeUndefined();
    expect(doc.components.securitySchemes).toEqual(BEARER_SCHEME);
    tokenSet = false; // as a SIGHUP that removes the monitor's token
    doc = await s.doc();
    expect(doc.paths['/pairs'].post.security).toEqual([]);
    expect(doc.paths['/pairs'].post.responses['401']).toBeUndefined();
    // `bearer` stays while /either names it; `basic`, which nothing names, was never listed.
    expect(doc.components.securitySchemes).toEqual(BEARER_SCHEME);
  });

  it('keeps the security a route declares over the rule; without a rule, undeclared stays undeclared', async () => {
    const ruled = await (await serve({ securitySchemes: BEARER_SCHEME, operationSecurity: () => BEARER })).doc();
    expect(ruled.paths['/either'].get.security).toEqual([{}, { bearer: [] }]);
    // A credential it may go without brings no 401 of its own.
    expect(ruled.paths['/either'].get.responses['401']).toBeUndefined();
    const unruled = await (await serve({ securitySchemes: BEARER_SCHEME })).doc();
    expect(unruled.paths['/open'].get.security).toBeUndefined();
    expect(unruled.info).toEqual({ title: 't', version: '1.2.3', license: { name: 'MIT', identifier: 'MIT' } });
  });

  it('serves tuples as prefixItems while the validator still reads the draft-07 form', async () => {
    const s = await serve({});
    const doc = await s.doc();
    const pair = { type: 'array', prefixItems: [{ type: 'string' }, { type: 'string' }], items: false, minItems: 2, maxItems: 2 };
    expect(doc.paths['/pairs'].post.requestBody.content['application/json'].schema.properties.pair).toEqual(pair);
    expect(doc.paths['/pairs'].post.responses['200'].content['application/json'].schema.properties.pair).toEqual(pair);
    const post = (pair: unknown): Promise<Response> => fetch(`${s.url}/pairs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pair }) });
    expect((await post(['a', 'b'])).status).toBe(200);
    expect((await post(['a', 'b', 'c'])).status).toBe(400);
    expect((await post(['a', 5])).status).toBe(400);
  });

  it('translates additionalItems and leaves open tuples open', () => {
    expect(toOpenApiSchema({ type: 'array', items: [{ type: 'string' }], additionalItems: { type: 'integer' } })).toEqual({ type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'integer' } });
    expect(toOpenApiSchema({ type: 'array', items: [{ type: 'string' }] })).toEqual({ type: 'array', prefixItems: [{ type: 'string' }] });
    expect(toOpenApiSchema({ type: 'array', items: { type: 'string' }, $id: 'X' })).toEqual({ type: 'array', items: { type: 'string' } });
  });
});
