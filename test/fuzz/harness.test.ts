// The fuzz harness itself (issue 11): a seed replays the same requests, valid requests keep
// their schema's required fields, the checks catch a 5xx and a non-JSON 4xx, secrets are masked.
import { describe, expect, it } from 'vitest';
import { judge, mask } from './check.js';
import { encode, operationsOf, validModelArb, type OpenApiDoc } from './openapi-requests.js';
import { requestAt } from './run.js';
import fc from 'fast-check';

const doc: OpenApiDoc = {
  components: { schemas: { Thing: { type: 'object', required: ['name', 'count'], additionalProperties: false, properties: { name: { type: 'string', minLength: 1, maxLength: 5 }, count: { type: 'integer', minimum: 1, maximum: 3 }, kind: { anyOf: [{ const: 'a' }, { const: 'b' }] }, hash: { type: 'string', pattern: '^[0-9a-f]{8}$' } } } } },
  paths: {
    '/things/{id}': {
      put: { operationId: 'put_thing', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }, { name: 'limit', in: 'query', required: true, schema: { type: 'integer', minimum: 1 } }], requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } } },
      get: { operationId: 'get_thing', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }] },
    },
  },
};
const target = { doc, ops: operationsOf(doc), hints: {}, credentials: [{ label: 'valid', headers: { authorization: 'Bearer secret-token-123' } }] };

describe('fuzz harness', () => {
  it('draws the same request for the same seed and index (MKT_FUZZ_SEED + MKT_FUZZ_ONLY replay)', () => {
    for (let i = 0; i < 50; i++) expect(requestAt(target, 42, i)).toEqual(requestAt({ ...target }, 42, i));
    const a = Array.from({ length: 30 }, (_, i) => requestAt(target, 1, i).path);
    const b = Array.from({ length: 30 }, (_, i) => requestAt(target, 2, i).path);
    expect(a).not.toEqual(b);
  });

  it('makes valid models that honour required fields, $ref, const, pattern and ranges', () => {
    const put = target.ops.find((o) => o.id === 'put_thing')!;
    for (const m of fc.sample(validModelArb(doc, put, {}, (_, v) => v !== 'seed'), { seed: 7, numRuns: 200 })) {
      const body = m.body as Record<string, unknown>;
      expect(typeof body.name === 'string' && body.name.length >= 1 && body.name.length <= 5).toBe(true);
      expect([1, 2, 3]).toContain(body.count);
      if ('kind' in body) expect(['a', 'b']).toContain(body.kind);
      if ('hash' in body) expect(body.hash).toMatch(/^[0-9a-f]{8}$/);
      expect(m.query.map(([k]) => k)).toContain('limit');
      expect(m.pathValues.id).not.toBe('seed');
    }
  });

  it('flags a 5xx, a 4xx without a JSON {"error"} body, and nothing else', () => {
    const req = requestAt(target, 3, 0);
    expect(judge(req, { status: 500, headers: {}, body: '{"error":"boom"}' })).toMatch(/500/);
    expect(judge(req, { status: 400, headers: {}, body: 'Bad Request' })).toMatch(/without a JSON body/);
    expect(judge(req, { status: 404, headers: {}, body: '{"message":"x"}' })).toMatch(/without \{"error"/);
    expect(judge(req, { status: 404, headers: {}, body: '{"error":"no route"}' })).toBeUndefined();
    expect(judge(req, { status: 400, headers: {}, body: JSON.stringify({ error: 'invalid status: ' + 'x'.repeat(5000) }) })).toMatch(/error text of 5016 characters/);
    expect(judge({ ...req, method: 'HEAD' }, { status: 404, headers: {}, body: '' })).toBeUndefined();
    expect(judge(req, { status: 200, headers: {}, body: 'anything' })).toBeUndefined();
  });

  it('masks secrets and encodes lone surrogates instead of throwing', () => {
    expect(mask('Bearer secret-token-123 and secret-token-123', ['secret-token-123'])).toBe('Bearer *** and ***');
    expect(encode('a\ud800b\u0000😀')).toBe('a%ED%A0%80b%00%F0%9F%98%80');
  });
});
