// Commit times as the RFC 3339 date-times attribution answers with: whatever a commit says (git
// stores any number), the answer is a date-time from year 0000 to 9999.
import { describe, expect, it } from 'vitest';
import { commitTime } from '../../../src/git/notes-tree.js';

describe('commitTime', () => {
  it('writes ordinary times in UTC and clamps the rest to years 0000-9999; unreadable is the epoch', () => {
    expect(commitTime('1700000000')).toBe('2023-11-14T22:13:20.000Z');
    expect(commitTime('-86400')).toBe('1969-12-31T00:00:00.000Z');
    expect(commitTime('253402300799')).toBe('9999-12-31T23:59:59.000Z');
    expect(commitTime('253402300800')).toBe('9999-12-31T23:59:59.000Z');
    expect(commitTime('99999999999999')).toBe('9999-12-31T23:59:59.000Z');
    expect(commitTime('9'.repeat(400))).toBe('9999-12-31T23:59:59.000Z');
    expect(commitTime('-99999999999999')).toBe('0000-01-01T00:00:00.000Z');
    for (const junk of ['', 'garbage', '12x', '1e5', ' ']) expect(commitTime(junk)).toBe('1970-01-01T00:00:00.000Z');
  });
});
