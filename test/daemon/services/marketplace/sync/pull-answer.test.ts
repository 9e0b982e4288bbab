// sync_pull's answer around the page the store wrote (test/src/store/sync.test.ts holds the page's
// bytes against the schema's serializer on both engines): the cursor and has_more as the schema
// writes them, and no field of the answer's schema left out.
import { describe, expect, it } from 'vitest';
import fastJsonStringify from 'fast-json-stringify';
import { pullAnswer } from '../../../../../daemon/services/marketplace/sync/pull-answer.js';
import { PullResponseSchema } from '../../../../../src/schemas/sync.js';
import { parsedPage, type StoredPullPage } from '../../../../../src/store/sync.js';

/** What fastify wrote before: the route's response schema, compiled as fastify compiles it. */
const schemaSerializer = fastJsonStringify(PullResponseSchema as object);

describe('pullAnswer', () => {
  it('writes the bytes the schema serializer writes around a page of entries', () => {
    const entry = { seq: 7, key_id: 3, device_id: 'dev-1', table: 'notes', op: 'update', row_id: 'r-7', timestamp: '2026-11-30T12:00:00.000Z', data: { iv: 'aXY=' } };
    for (const page of [
      { entries_json: JSON.stringify([entry]), cursor: 7, has_more: true },
      { entries_json: '[]', cursor: 42, has_more: false },
    ] satisfies StoredPullPage[]) {
      expect(pullAnswer(page)).toBe(schemaSerializer(parsedPage(page)));
    }
    expect(JSON.parse(pullAnswer({ entries_json: '[]', cursor: 42, has_more: false }))).toEqual({ entries: [], cursor: 42, has_more: false });
  });

  it('writes every field of the answer schema, in its order', () => {
    expect(Object.keys(JSON.parse(pullAnswer({ entries_json: '[]', cursor: 0, has_more: false })) as object)).toEqual(Object.keys(PullResponseSchema.properties));
  });
});
