// SqlNotesIndex on both engines: rows and tips moved together, the compare-and-swap that keeps
// two instances from putting an older state of a ref back, drops, counts, search filters and
// notes holding NUL or non-ASCII text, change notifications, and rankings that follow every
// change, this instance's at once and another's once its notification arrives.
import { expect, it } from 'vitest';
import { describeEngines } from '../../helpers/engines.js';
import { SqlNotesIndex } from '../../../src/store/notes-sql.js';
import { parseQuery } from '../../../src/notes/query.js';

const T = (n: number) => n.toString(16).padStart(40, '0');
const note = (n: number, content: string, object_type = 'commit') => ({ target: T(n), object_type, blob: `b${n}-${content.length}`, content });

describeEngines('SqlNotesIndex', (open) => {
  it('applies changes with their tip, reads them back, counts per namespace', async () => {
    const index = await SqlNotesIndex.open(await open());
    expect(await index.tips('r')).toEqual(new Map());
    expect(await index.apply('r', 'commits', { from: null, to: 'tip1' }, [note(1, 'first'), note(2, 'second')], [])).toBe(true);
    expect(await index.apply('r', 'reviews', { from: null, to: 'rv1' }, [note(1, 'lgtm')], [])).toBe(true);
    expect(await index.get('r', 'commits', T(1))).toEqual({ namespace: 'commits', target: T(1), object_type: 'commit', blob: 'b1-5', content: 'first' });
    expect(await index.get('r', 'commits', T(9))).toBeUndefined();
    expect(await index.get('other', 'commits', T(1))).toBeUndefined();
    expect(await index.tips('r')).toEqual(new Map([['commits', 'tip1'], ['reviews', 'rv1']]));
    expect(await index.counts('r')).toEqual(new Map([['commits', 2], ['reviews', 1]]));

    expect(await index.apply('r', 'commits', { from: 'tip1', to: 'tip2' }, [note(2, 'second, edited'), note(3, 'third')], [T(1)])).toBe(true);
    expect(await index.get('r', 'commits', T(1))).toBeUndefined();
    expect((await index.get('r', 'commits', T(2)))?.content).toBe('second, edited');
    expect(await index.counts('r')).toEqual(new Map([['commits', 2], ['reviews', 1]]));
    expect((await index.tips('r')).get('commits')).toBe('tip2');
  });

  it('refuses a move from a tip the index no longer records, and accepts one already done', async () => {
    const index = await SqlNotesIndex.open(await open());
    await index.apply('r', 'ns', { from: null, to: 'a' }, [note(1, 'one')], []);
    // Another instance caught up to `b` first; a late catch-up from `a` to `c` must not apply.
    expect(await index.apply('r', 'ns', { from: 'a', to: 'b' }, [note(2, 'two')], [])).toBe(true);
    expect(await index.apply('r', 'ns', { from: 'a', to: 'c' }, [note(3, 'three')], [])).toBe(false);
    expect(await index.get('r', 'ns', T(3))).toBeUndefined();
    // The same move twice (two instances catching up the same change): the second is a no-op.
    expect(await index.apply('r', 'ns', { from: 'a', to: 'b' }, [note(2, 'two')], [])).toBe(true);
    expect(await index.replaceRef('r', 'ns', { from: null, to: 'z' }, [])).toBe(false);
    expect((await index.tips('r')).get('ns')).toBe('b');
    // No `from`: a rebuild replaces whatever is there.
    expect(await index.replaceRef('r', 'ns', { to: 'z' }, [note(7, 'seven')])).toBe(true);
    expect(await index.counts('r')).toEqual(new Map([['ns', 1]]));
    expect((await index.tips('r')).get('ns')).toBe('z');
  });

  it('serialises concurrent catch-ups of one ref: exactly one moves it', async () => {
    const index = await SqlNotesIndex.open(await open());
    await index.apply('r', 'ns', { from: null, to: 'a' }, [], []);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => index.apply('r', 'ns', { from: 'a', to: `t${i}` }, [note(i, `n${i}`)], [])));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect((await index.tips('r')).get('ns')).toBe(`t${winner}`);
    expect(await index.counts('r')).toEqual(new Map([['ns', 1]]));
  });

  it('drops a ref only at the tip it knows, drops a repository whole, and remembers indexed repositories', async () => {
    const index = await SqlNotesIndex.open(await open());
    await index.replaceRef('r', 'a', { from: null, to: 'ta' }, [note(1, 'x'), note(2, 'y')]);
    await index.replaceRef('r', 'b', { from: null, to: 'tb' }, [note(1, 'z')]);
    await index.replaceRef('s', 'a', { from: null, to: 'sa' }, [note(1, 'w')]);
    expect(await index.isIndexed('r')).toBe(false);
    await index.markIndexed('r');
    await index.markIndexed('r');
    expect(await index.isIndexed('r')).toBe(true);
    expect(await index.dropRef('r', 'a', 'other-tip')).toBe(false);
    expect(await index.dropRef('r', 'a', 'ta')).toBe(true);
    expect(await index.dropRef('r', 'a', 'ta')).toBe(true); // gone already
    expect(await index.tips('r')).toEqual(new Map([['b', 'tb']]));
    expect(await index.counts('r')).toEqual(new Map([['b', 1]]));
    await index.dropRepo('r');
    expect(await index.tips('r')).toEqual(new Map());
    expect(await index.isIndexed('r')).toBe(false);
    expect(await index.counts('s')).toEqual(new Map([['a', 1]]));
  });

  it('keeps contents byte for byte (NUL, non-ASCII, a note of 200 KiB) and finds them', async () => {
    const index = await SqlNotesIndex.open(await open());
    const odd = 'nul\0inside ünïcödé 日本語 🙂 end';
    const big = `${'filler '.repeat(30_000)}needle`;
    await index.apply('r', 'ns', { from: null, to: 't' }, [note(1, odd), note(2, big)], []);
    expect((await index.get('r', 'ns', T(1)))?.content).toBe(odd);
    expect((await index.get('r', 'ns', T(2)))?.content).toBe(big);
    const hits = async (q: string) => (await index.search('r', parseQuery(q), { limit: 10 })).map((h) => h.target);
    expect(await hits('unicode')).toEqual([T(1)]);
    expect(await hits('日本語')).toEqual([T(1)]);
    expect(await hits('inside')).toEqual([T(1)]);
    expect(await hits('needle')).toEqual([T(2)]);
    expect(await hits('"filler needle"')).toEqual([T(2)]);
  });

  it('filters search by repository, namespace and object type, honours the limit, and snippets the match', async () => {
    const index = await SqlNotesIndex.open(await open());
    await index.apply('r', 'a', { from: null, to: 't' }, [note(1, 'deploy the parser'), note(2, 'deploy on a tag', 'tag'), note(3, 'deploy deploy deploy now')], []);
    await index.apply('r', 'b', { from: null, to: 't' }, [note(4, 'deploy reviews')], []);
    await index.apply('s', 'a', { from: null, to: 't' }, [note(5, 'deploy elsewhere')], []);
    const q = parseQuery('deploy');
    expect((await index.search('r', q, { limit: 10 })).map((h) => h.target).sort()).toEqual([T(1), T(2), T(3), T(4)]);
    expect((await index.search('r', q, { namespace: 'b', limit: 10 })).map((h) => h.target)).toEqual([T(4)]);
    expect((await index.search('r', q, { commitsOnly: true, limit: 10 })).map((h) => h.target).sort()).toEqual([T(1), T(3), T(4)]);
    expect(await index.search('r', q, { limit: 2 })).toHaveLength(2);
    const [best] = await index.search('r', q, { limit: 1 });
    expect(best).toMatchObject({ target: T(3), namespace: 'a', object_type: 'commit', snippet: '[deploy] [deploy] [deploy] now' });
    expect(best!.score).toBeGreaterThan(0);
    expect((await index.search('r', parseQuery('parser'), { limit: 5 }))[0]!.snippet).toBe('deploy the [parser]');
  });

  it("ranks with the statistics of the index now: after this instance's change at once, after another's once it is announced", async () => {
    const db = await open();
    const index = await SqlNotesIndex.open(db);
    const other = await SqlNotesIndex.open(db);
    const q = parseQuery('deploy parser');
    /** What an instance that remembers nothing finds. */
    const truth = async () => (await SqlNotesIndex.open(db)).search('r', q, { limit: 10 });
    await index.apply('r', 'ns', { from: null, to: 't1' }, [note(1, 'deploy the parser'), note(2, 'deploy parser deploy'), note(3, 'unrelated')], []);
    await index.apply('r2', 'ns', { from: null, to: 't1' }, [note(1, 'deploy parser')], []);
    for (let i = 0; i < 3; i++) expect(await index.search('r', q, { limit: 10 })).toEqual(await truth());
    const before = await truth();

    await index.apply('r', 'ns', { from: 't1', to: 't2' }, [note(4, 'parser parser parser'), note(5, 'deploy deploy deploy parser')], []);
    expect(await index.search('r', q, { limit: 10 })).toEqual(await truth());
    expect(await truth()).not.toEqual(before);

    await other.apply('r', 'ns', { from: 't2', to: 't3' }, Array.from({ length: 20 }, (_, i) => note(10 + i, `deploy ${i}`)), ['0'.repeat(39) + '1']);
    await expect.poll(async () => index.search('r', q, { limit: 10 })).toEqual(await truth());
    await other.dropRef('r', 'ns', 't3');
    await expect.poll(async () => index.search('r', q, { limit: 10 })).toEqual([]);
  });

  it('tells every watcher which repository changed', async () => {
    const db = await open();
    const index = await SqlNotesIndex.open(db);
    const other = await SqlNotesIndex.open(db);
    const heard: string[] = [];
    const stop = await other.watch((repoId) => heard.push(repoId));
    await index.apply('r1', 'ns', { from: null, to: 't' }, [], []);
    await index.dropRepo('r2');
    await expect.poll(() => heard).toEqual(['r1', 'r2']);
    stop();
  });
});
