// sqlText: the SQL text of a tagged template, equal to what the template literal would make, for
// each fragment set a call site sees, in any order. (That it is one string object per set, which
// the statement cache then finds by identity, JavaScript cannot observe: bench/README.md measures it.)
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { sqlText } from '../../../src/store/sql-text.js';

const site = (now: string, n: number): string => sqlText`SELECT ${now} AS now_ms, ? FROM t WHERE a = ${n}`;
const plain = (now: string, n: number): string => `SELECT ${now} AS now_ms, ? FROM t WHERE a = ${n}`;

describe('sqlText', () => {
  it('makes what the template literal makes, for any fragments', () => {
    fc.assert(fc.property(fc.string(), fc.integer(), (now, n) => site(now, n) === plain(now, n)));
  });

  it('answers each fragment set its own text, however the sets alternate', () => {
    const a = site('julianday()', 1);
    expect(site('julianday()', 1)).toBe(a);
    const b = site('now()', 1);
    expect(b).toBe('SELECT now() AS now_ms, ? FROM t WHERE a = 1');
    expect(site('julianday()', 1)).toBe(a);
    expect(site('now()', 1)).toBe(b);
    expect(site('julianday()', 2)).toBe('SELECT julianday() AS now_ms, ? FROM t WHERE a = 2');
  });

  it('keeps call sites apart, and takes escapes as the literal does', () => {
    const one = sqlText`SELECT ${'x'}`;
    const other = sqlText`SELECT ${'x'} `;
    expect([one, other]).toEqual(['SELECT x', 'SELECT x ']);
    expect(sqlText`a\nb ${'c'}\t`).toBe('a\nb c\t');
  });
});
