// The fields a note carries (issue 36): trailers, Gerrit votes, key=value lines, JSON-object
// lines, and the bounds that keep a hostile note's parse small.
import { describe, expect, it } from 'vitest';
import { MAX_NOTE_BYTES } from '../../../src/schemas/notes.js';
import { cutUtf8, fieldsObject, MAX_FIELDS, MAX_KEY_BYTES, MAX_VALUE_BYTES, parseFields } from '../../../src/notes/fields.js';

describe('parseFields', () => {
  it('reads trailers as git interpret-trailers writes them', () => {
    const note = 'Tested on staging.\n\nReviewed-by: Alice <alice@example.com>\nSigned-off-by:  Bob  \nAcked-by:\n';
    expect(parseFields(note)).toEqual([
      { key: 'Reviewed-by', value: 'Alice <alice@example.com>' },
      { key: 'Signed-off-by', value: 'Bob' },
      { key: 'Acked-by', value: '' },
    ]);
  });

  it("reads Gerrit's review notes: the vote belongs to the value", () => {
    const note = [
      'Code-Review+2: Jane Roe <jane@example.com>',
      'Verified+1: CI Bot <ci@example.com>',
      'Code-Review-1: Joe <joe@example.com>',
      'Workflow+1:',
      'Submitted-by: Jane Roe <jane@example.com>',
      'Reviewed-on: https://review.example.com/c/proj/+/1234',
    ].join('\n');
    expect(parseFields(note)).toEqual([
      { key: 'Code-Review', value: '+2 Jane Roe <jane@example.com>' },
      { key: 'Verified', value: '+1 CI Bot <ci@example.com>' },
      { key: 'Code-Review', value: '-1 Joe <joe@example.com>' },
      { key: 'Workflow', value: '+1' },
      { key: 'Submitted-by', value: 'Jane Roe <jane@example.com>' },
      { key: 'Reviewed-on', value: 'https://review.example.com/c/proj/+/1234' },
    ]);
  });

  it('does not read URLs, indented lines or prose as trailers', () => {
    expect(parseFields('https://example.com/x\n  Key: indented\nnot a key: x\nKey:nospace\n-Key: x\nTime: 12:30')).toEqual([
      { key: 'Time', value: '12:30' },
    ]);
  });

  it('reads key=value lines', () => {
    const note = 'closes-issues=12,14\r\nbuild.id = 3\nrun_time=  1.5s \nempty=\nnot key=x\n=v\nurl=https://x/?a=b';
    expect(parseFields(note)).toEqual([
      { key: 'closes-issues', value: '12,14' },
      { key: 'run_time', value: '1.5s' },
      { key: 'empty', value: '' },
      { key: 'url', value: 'https://x/?a=b' },
    ]);
  });

  it('reads one-line JSON objects: scalars, arrays of scalars; skips null and nested objects', () => {
    const line = JSON.stringify({ status: 'ok', n: 3, f: 1.5, pass: true, none: null, tags: ['a', 2, null, { x: 1 }, false], nested: { a: 1 }, deep: [[1]], s: ' sp ' });
    expect(parseFields(`${line}\n  {"timestamp": 1700000000}  \n[1,2]\n{broken\n{"a": 1} trailing`)).toEqual([
      { key: 'status', value: 'ok' },
      { key: 'n', value: '3' },
      { key: 'f', value: '1.5' },
      { key: 'pass', value: 'true' },
      { key: 'tags', value: 'a' },
      { key: 'tags', value: '2' },
      { key: 'tags', value: 'false' },
      { key: 's', value: ' sp ' },
      { key: 'timestamp', value: '1700000000' },
    ]);
  });

  it('keeps a JSON key such as __proto__ as a plain key', () => {
    const f = parseFields('{"__proto__": "x", "constructor": "y", "": "skipped"}');
    expect(f).toEqual([
      { key: '__proto__', value: 'x' },
      { key: 'constructor', value: 'y' },
    ]);
    const o = fieldsObject(f);
    expect(Object.keys(o)).toEqual(['__proto__', 'constructor']);
    expect(o['__proto__']).toEqual(['x']);
    expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
  });

  it('mixes shapes in line order', () => {
    expect(parseFields('Reviewed-by: a\nk=v\n{"j": "w"}')).toEqual([
      { key: 'Reviewed-by', value: 'a' },
      { key: 'k', value: 'v' },
      { key: 'j', value: 'w' },
    ]);
  });
});

describe('limits', () => {
  it('keeps the first MAX_FIELDS of a note of the maximum size full of trailers', () => {
    const line = 'Reviewed-by: someone\n';
    const note = line.repeat(Math.floor(MAX_NOTE_BYTES / line.length));
    expect(note.length).toBeGreaterThan(1_000_000);
    const f = parseFields(note);
    expect(f).toHaveLength(MAX_FIELDS);
    expect(f[0]).toEqual({ key: 'Reviewed-by', value: 'someone' });
  });

  it('bounds one JSON line with more keys or elements than MAX_FIELDS', () => {
    const obj = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
    expect(parseFields(JSON.stringify(obj))).toHaveLength(MAX_FIELDS);
    expect(parseFields(JSON.stringify({ a: Array.from({ length: 5000 }, (_, i) => i) }))).toHaveLength(MAX_FIELDS);
  });

  it('skips keys longer than MAX_KEY_BYTES (counted in UTF-8)', () => {
    const ok = 'k'.repeat(MAX_KEY_BYTES);
    expect(parseFields(`${ok}: v\n${ok}x: v\n${ok}=v\n${ok}x=v`)).toEqual([
      { key: ok, value: 'v' },
      { key: ok, value: 'v' },
    ]);
    // 34 three-byte characters are 102 bytes though only 34 UTF-16 units.
    const wide = 'é'.repeat(50); // 100 bytes: kept
    const wider = '€'.repeat(34); // 102 bytes: skipped
    expect(parseFields(JSON.stringify({ [wide]: 1, [wider]: 2 }))).toEqual([{ key: wide, value: '1' }]);
  });

  it('cuts long values at a UTF-8 character boundary', () => {
    const ascii = parseFields(`k: ${'a'.repeat(5000)}`)[0]!;
    expect(ascii.value).toBe('a'.repeat(MAX_VALUE_BYTES));
    // 1023 ASCII bytes then a 2-byte character: the character does not fit, nothing is split.
    const v = parseFields(`k=${'a'.repeat(MAX_VALUE_BYTES - 1)}é tail`)[0]!.value;
    expect(v).toBe('a'.repeat(MAX_VALUE_BYTES - 1));
    // Emoji are surrogate pairs: 4 bytes each; 256 fit exactly, and a pair is never halved.
    const emoji = parseFields(JSON.stringify({ e: '😀'.repeat(300) }))[0]!.value;
    expect(emoji).toBe('😀'.repeat(256));
    const odd = parseFields(JSON.stringify({ e: `a${'😀'.repeat(300)}` }))[0]!.value;
    expect(odd).toBe(`a${'😀'.repeat(255)}`);
    for (const s of [v, emoji, odd]) expect(Buffer.byteLength(s)).toBeLessThanOrEqual(MAX_VALUE_BYTES);
  });

  it('cutUtf8 never exceeds the bound and never splits a character', () => {
    const samples = ['', 'abc', 'é€😀x', '😀'.repeat(10), `a${'\ud800'}b`];
    for (const s of samples) {
      for (let max = 0; max <= 40; max++) {
        const c = cutUtf8(s, max);
        expect(s.startsWith(c)).toBe(true);
        expect(Buffer.byteLength(c)).toBeLessThanOrEqual(max);
        const last = c.charCodeAt(c.length - 1);
        if (c.length < s.length) expect(last >= 0xd800 && last <= 0xdbff && s.charCodeAt(c.length) >= 0xdc00).toBe(false);
      }
    }
  });
});

describe('fieldsObject', () => {
  it('groups values by key in note order, keys as written', () => {
    const f = parseFields('Reviewed-by: a\nreviewed-by: b\nReviewed-by: c\nk=1');
    expect(fieldsObject(f)).toEqual({ 'Reviewed-by': ['a', 'c'], 'reviewed-by': ['b'], k: ['1'] });
    expect(fieldsObject([])).toEqual({});
  });
});
