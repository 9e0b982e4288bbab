// The search cursor (issue 36): positions survive the round trip; a cursor forged, garbled, of
// another version or shape, or made for another query is refused with the 400 text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CursorError, decodeCursor, encodeCursor, queryHash, type CursorPosition } from '../../../src/notes/search-cursor.js';

const query = { owner: 'ana', repo: 'site', mode: 'words', q: 'deploy', fields: ['a~b', 'c=d'] };
const h = queryHash(query);
const raw = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('queryHash', () => {
  it('is 16 hex digits, independent of key order, sensitive to every value', () => {
    expect(h).toMatch(/^[0-9a-f]{16}$/);
    expect(queryHash({ q: 'deploy', fields: ['a~b', 'c=d'], repo: 'site', mode: 'words', owner: 'ana' })).toBe(h);
    expect(queryHash({ ...query, q: 'deploy ' })).not.toBe(h);
    expect(queryHash({ ...query, fields: ['c=d', 'a~b'] })).not.toBe(h);
    expect(queryHash({ ...query, repo: undefined })).toBe(queryHash({ owner: 'ana', mode: 'words', q: 'deploy', fields: ['a~b', 'c=d'] }));
    expect(queryHash({ a: { y: 1, x: 2 } })).toBe(queryHash({ a: { x: 2, y: 1 } }));
    // Distinct values that would print alike stay apart.
    expect(queryHash({ a: '1' })).not.toBe(queryHash({ a: 1 }));
    expect(queryHash({ a: null })).not.toBe(queryHash({}));
  });
});

describe('cursor round trip', () => {
  it('keeps each position exactly', () => {
    const positions: CursorPosition[] = [
      { id: 0 },
      { id: 42 },
      { id: 7, score: -3.141592653589793 },
      { id: 7, score: 0 },
      { repo: 'ana/site', id: 9 },
      { repo: 'ana/ü-😀', score: 1e-300, id: Number.MAX_SAFE_INTEGER },
      { id: 12, scan: true },
    ];
    for (const p of positions) {
      const c = encodeCursor(h, p);
      expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor(c, h)).toEqual(p);
    }
  });

  it('holds for any position (property)', () => {
    const pos = fc.record(
      {
        repo: fc.string({ minLength: 1, maxLength: 100 }),
        score: fc.double({ noNaN: true, noDefaultInfinity: true }),
        id: fc.nat(),
        scan: fc.constant(true),
      },
      { requiredKeys: ['id'] },
    );
    fc.assert(
      fc.property(pos, (p) => {
        const back = decodeCursor(encodeCursor(h, p), h);
        // JSON keeps no negative zero; a score of -0 positions like 0.
        expect(back).toEqual(p.score !== undefined && Object.is(p.score, -0) ? { ...p, score: 0 } : p);
      }),
    );
  });
});

describe('refused cursors', () => {
  const refuse = (c: string, msg: RegExp) => {
    let err: unknown;
    try {
      decodeCursor(c, h);
    } catch (e) {
      err = e;
    }
    expect(err, c).toBeInstanceOf(CursorError);
    expect((err as Error).message).toMatch(msg);
  };

  it('from another query: does not belong to this search', () => {
    const other = encodeCursor(queryHash({ ...query, q: 'other' }), { id: 5 });
    refuse(other, /^the cursor does not belong to this search$/);
  });

  it('garbled, forged or of the wrong shape: not a valid cursor', () => {
    const good = encodeCursor(h, { id: 5, score: 1 });
    const bad = [
      '',
      'not base64!',
      good + '=',
      good.slice(0, -3),
      'x'.repeat(2000),
      raw('just a string'),
      raw([1, 2]),
      raw(null),
      raw({ v: 2, h, i: 1 }),
      raw({ h, i: 1 }),
      raw({ v: '1', h, i: 1 }),
      raw({ v: 1, h: h.toUpperCase(), i: 1 }),
      raw({ v: 1, h: h.slice(0, 15), i: 1 }),
      raw({ v: 1, h }),
      raw({ v: 1, h, i: '1' }),
      raw({ v: 1, h, i: 1.5 }),
      raw({ v: 1, h, i: -1 }),
      raw({ v: 1, h, i: 2 ** 60 }),
      raw({ v: 1, h, i: 1, s: '1' }),
      raw({ v: 1, h, i: 1, s: null }),
      raw({ v: 1, h, i: 1, r: 5 }),
      raw({ v: 1, h, i: 1, r: '' }),
      raw({ v: 1, h, i: 1, r: 'x'.repeat(300) }),
      raw({ v: 1, h, i: 1, x: true }),
      raw({ v: 1, h, i: 1, extra: 1 }),
      Buffer.from('{"v":1,"h":"' + h + '","i":1').toString('base64url'),
      Buffer.from([0xff, 0xfe, 0x00]).toString('base64url'),
    ];
    for (const c of bad) refuse(c, /^the cursor is not a valid cursor$/);
  });

  it('never fails otherwise on arbitrary input (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.base64String(), fc.json().map((j) => Buffer.from(j).toString('base64url'))), (c) => {
        try {
          const p = decodeCursor(c, h);
          expect(Number.isSafeInteger(p.id)).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(CursorError);
        }
      }),
    );
  });

  it('refuses to make a cursor of an impossible position', () => {
    expect(() => encodeCursor('nothex', { id: 1 })).toThrow();
    expect(() => encodeCursor(h, { id: -1 })).toThrow();
    expect(() => encodeCursor(h, { id: 1, score: Number.NaN })).toThrow();
  });
});
