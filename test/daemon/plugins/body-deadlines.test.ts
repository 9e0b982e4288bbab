// The deadlines of bodies being read (daemon/plugins/body.ts): a list threaded through the reads,
// swept by one timer. Driven by vitest's fake clock: every read past its deadline is finished with
// a 408 once, a read taken off the list (its body arrived) never is, whatever the order of adds
// and deletes, and a read deleted twice or never added leaves the list as it was.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BodyDeadlines, type PendingBody } from '../../../daemon/plugins/body.js';

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-11-30T00:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A read whose finish() records its name and takes it off the list, as BodyRead's does. */
function read(deadlines: BodyDeadlines, name: string, finished: string[], deadline = Date.now() + deadlines.timeoutMs): PendingBody {
  const r: PendingBody = {
    deadline,
    prev: undefined,
    next: undefined,
    finish(err: Error & { statusCode?: number }) {
      finished.push(`${name} ${err.statusCode}`);
      deadlines.delete(r);
    },
  };
  return r;
}

describe('BodyDeadlines', () => {
  it('finishes each read past its deadline once with a 408, never one deleted, in any order of adds and deletes', () => {
    const d = new BodyDeadlines(1000);
    const finished: string[] = [];
    const reads = ['a', 'b', 'c', 'd', 'e'].map((n) => read(d, n, finished));
    for (const r of reads) d.add(r);
    // The head, a middle one and the tail: each unlinked alone.
    d.delete(reads[4]!);
    d.delete(reads[2]!);
    d.delete(reads[0]!);
    // Deleted twice, or never added: nothing changes.
    d.delete(reads[2]!);
    d.delete(read(d, 'stranger', finished));
    vi.advanceTimersByTime(999);
    expect(finished).toEqual([]);
    vi.advanceTimersByTime(1000);
    expect(finished.sort()).toEqual(['b 408', 'd 408']);
    // A later read, added after the list emptied: watched again.
    const late = read(d, 'late', finished);
    d.add(late);
    vi.advanceTimersByTime(3000);
    expect(finished.sort()).toEqual(['b 408', 'd 408', 'late 408']);
  });

  it('a sweep finishes the expired reads and keeps the rest, linked as before', () => {
    const d = new BodyDeadlines(1000);
    const finished: string[] = [];
    const now = Date.now();
    const reads = [read(d, 'soon', finished, now + 500), read(d, 'later', finished, now + 5000), read(d, 'sooner', finished, now + 100)];
    for (const r of reads) d.add(r);
    vi.advanceTimersByTime(750);
    expect(finished.sort()).toEqual(['soon 408', 'sooner 408']);
    expect(reads[1]!.prev).toBeUndefined();
    expect(reads[1]!.next).toBeUndefined();
    d.delete(reads[1]!);
    vi.advanceTimersByTime(10_000);
    expect(finished.sort()).toEqual(['soon 408', 'sooner 408']);
  });
});
