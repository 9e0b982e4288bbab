// sync_pull's hand-written answer against the schema's own serializer: the same bytes for every
// kind of stored data, and no field of the entry schema left out.
import { describe, expect, it } from 'vitest';
import fastJsonStringify from 'fast-json-stringify';
import { pullAnswer } from '../../../../../daemon/services/marketplace/sync/pull-answer.js';
import { PullResponseSchema, StoredChangeEntrySchema } from '../../../../../src/schemas/sync.js';
import { parsedPage, type StoredEntryText, type StoredPullPage } from '../../../../../src/store/sync.js';

/** What fastify wrote before: the route's response schema, compiled as fastify compiles it. */
const schemaSerializer = fastJsonStringify(PullResponseSchema as object);

/** An entry whose data is stored as push stores it: JSON.stringify of what the client sent. */
function entry(seq: number, data: unknown, more: Partial<StoredEntryText> = {}): StoredEntryText {
  return { seq, key_id: 3, device_id: 'dev-1', table: 'notes', op: 'update', row_id: `row-${seq}`, timestamp: '2026-11-30T12:00:00.000Z', data_json: data === undefined ? null : JSON.stringify(data), ...more };
}

describe('pullAnswer', () => {
  it('writes the bytes the schema serializer writes, for every kind of data', () => {
    const datas: unknown[] = [
      'c2VhbGVk',
      { iv: 'aXY=', ct: 'Y3Q=', nested: { list: [1, 2.5, -0, 1e21, true, null], empty: {} } },
      [{ a: 1 }, 'two', 3],
      'quote " backslash \\ newline \n tab \t nul \u0000 line sep \u2028 emoji 😀 lone surrogate \ud800',
      JSON.parse('{"__proto__":"an own key, as a client may send it","constructor":1}') as unknown,
      0,
      -12.75,
      false,
      null,
      undefined,
      '',
    ];
    const page: StoredPullPage = {
      entries: [
        ...datas.map((d, i) => entry(i + 1, d)),
        entry(99, { x: 1 }, { device_id: null, table: 't"able', op: 'insert', row_id: 'r\\1', timestamp: 'ts\u2028' }),
        // Each field outside plain printable ASCII: control characters, DEL, accents, astral and lone surrogates.
        entry(100, 1, { device_id: 'd\u0001\u001f', table: 'tab\u007f', op: 'caf\u00e9', row_id: '\ud83d\ude00 \udc00', timestamp: ' !#[]~' }),
      ],
      cursor: 100,
      has_more: true,
    };
    const answer = pullAnswer(page);
    expect(answer).toBe(schemaSerializer(parsedPage(page)));
    expect(JSON.parse(answer)).toEqual(JSON.parse(schemaSerializer(parsedPage(page))));
  });

  it('writes an empty page and its cursor', () => {
    const page: StoredPullPage = { entries: [], cursor: 42, has_more: false };
    expect(pullAnswer(page)).toBe(schemaSerializer(parsedPage(page)));
    expect(JSON.parse(pullAnswer(page))).toEqual({ entries: [], cursor: 42, has_more: false });
  });

  it('writes every field of the entry schema, in its order', () => {
    const [written] = (JSON.parse(pullAnswer({ entries: [entry(1, { a: 1 })], cursor: 1, has_more: false })) as { entries: object[] }).entries;
    // A field added to StoredChangeEntrySchema and not to pullAnswer fails here.
    expect(Object.keys(written!)).toEqual(Object.keys(StoredChangeEntrySchema.properties));
    expect(Object.keys(JSON.parse(pullAnswer({ entries: [], cursor: 0, has_more: false })) as object)).toEqual(Object.keys(PullResponseSchema.properties));
  });
});
