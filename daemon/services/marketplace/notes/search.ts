// The notes searches: search_notes (one repository), search_owner_notes (every repository of an
// owner the caller can see, in name order) and list_missing_notes. One code path serves every
// mode: pages of index rows (NotesIndex.searchPage, keyset on score and note id) turned into hits;
// regex pages scan literal-narrowed candidates in batches under one step budget per request.
// Answers are outcomes (outcomes.ts); nothing here knows HTTP.
import type { Repo } from '../../../../src/store/repos.js';
import type { OwnerRepos } from '../../../../src/store/repos-by-owner.js';
import type { CountBy, IndexRow, NotesIndex, PageKey } from '../../../../src/store/notes.js';
import type { NotesIndexer } from '../../../../src/notes/indexer.js';
import { repoDir } from '../../../../src/git/hosting.js';
import { CursorError, decodeCursor, encodeCursor, queryHash, type CursorPosition } from '../../../../src/notes/search-cursor.js';
import { REGEX_STEP_BUDGET, RegexBudgetError, StepBudget, type SafeRegex } from '../../../../src/notes/safe-regex.js';
import {
  COUNT_MAX_GROUPS,
  DEFAULT_NAMESPACE,
  HIT_MAX_LINES,
  type CountGroup,
  type CountResponse,
  type MatchedLine,
  type MissingQuery,
  type MissingResponse,
  type SearchHit,
  type SearchQuery,
  type SearchResponse,
} from '../../../../src/schemas/notes.js';
import type { Access, Caller } from './access.js';
import type { NotesOutcome } from './outcomes.js';
import { SearchParamError, checkNamespaceFilter, parseCommits, parseSearch, type SearchRequest } from './search-params.js';
import { buildHit, findLines, wordLines, type LineFinder } from './search-hits.js';

/**
 * Regex candidates a query fetches at once (ids, metadata and fields: each query of the literal
 * index evaluates its whole MATCH, so fewer, larger batches), and notes whose text a request
 * holds at once, up to 1 MiB each: a batch's candidates while they are tested, and a page's hits
 * while their lines are found.
 */
export const REGEX_BATCH = 500;
const TEXT_BATCH = 32;
export const REGEX_PAGE_SCAN = 5_000;
/** Groups one repository's count may hold before an owner-wide merge calls itself truncated. */
const MERGE_MAX_GROUPS = 100_000;

export interface SearchDeps {
  dataDir: string;
  index: NotesIndex;
  indexer: NotesIndexer;
  access: Access;
  ownerRepos: OwnerRepos;
}

type Answer = SearchResponse | CountResponse;
const ok = <T>(value: T): { kind: 'ok'; value: T } => ({ kind: 'ok', value });
const fullName = (r: Repo) => `${r.owner}/${r.name}`;
/** Repository names compared as the listing orders them (lower-cased, byte order; names are ASCII). */
const nameKey = (name: string) => name.toLowerCase();

/** One search of one or more repositories, with everything a page needs. */
interface Run {
  req: SearchRequest;
  hash: string;
  repos: Repo[];
  ownerWide: boolean;
  /** Where this page starts: the repository's index in `repos` and the key after which it resumes there. */
  start: number;
  after?: PageKey;
  lines: LineFinder;
  words: boolean;
}

/** Groups by count descending then key (byte order), at most COUNT_MAX_GROUPS. */
export function topGroups(counts: Map<string, number>, truncated: boolean): { groups: CountGroup[]; truncated: boolean } {
  const all = [...counts].map(([key, count]) => ({ key, count, b: Buffer.from(key) }));
  all.sort((x, y) => y.count - x.count || Buffer.compare(x.b, y.b));
  return { groups: all.slice(0, COUNT_MAX_GROUPS).map(({ key, count }) => ({ key, count })), truncated: truncated || all.length > COUNT_MAX_GROUPS };
}

/** The keys a row counts under (a note with a field twice counts once per distinct value). */
function rowKeys(row: IndexRow, by: CountBy): string[] {
  if (by === 'namespace') return [row.namespace];
  if (by === 'note_author') return row.note_author === null ? [] : [row.note_author];
  const key = by.field.toLowerCase();
  return [...new Set(row.fields.filter((f) => f.key.toLowerCase() === key).map((f) => f.value))];
}

export class NotesSearch {
  constructor(private readonly deps: SearchDeps) {}

  private async current(repo: Repo): Promise<void> {
    await this.deps.indexer.ensureCurrent({ id: repo.id, dir: repoDir(this.deps.dataDir, repo.owner, repo.name) });
  }

  private async indexed(repos: Repo[]): Promise<boolean> {
    for (const r of repos) if (!(await this.deps.indexer.isIndexed(r.id))) return false;
    return true;
  }

  /** search_notes: one repository (404 when it does not exist or the caller cannot see it). */
  async search(caller: Caller, owner: string, name: string, q: SearchQuery): Promise<NotesOutcome<Answer>> {
    const repo = await this.deps.access.visibleRepo(owner, name, caller);
    if (!repo) return { kind: 'no_repo', repo: `${owner}/${name}` };
    return this.run([repo], q, { owner: nameKey(owner), repo: nameKey(name) }, false);
  }

  /** search_owner_notes: every repository of `owner` the caller can see; 404 when there is none. */
  async searchOwner(caller: Caller, owner: string, q: SearchQuery): Promise<NotesOutcome<Answer>> {
    const repos: Repo[] = [];
    for (const r of await this.deps.ownerRepos.listByOwner(owner)) if (await this.deps.access.canRead(r, caller)) repos.push(r);
    // The same answer as an unknown repository's: an owner with only private repositories is not revealed.
    if (repos.length === 0) return { kind: 'no_owner', owner };
    return this.run(repos, q, { owner: nameKey(owner), scope: 'owner' }, true);
  }

  private async run(repos: Repo[], q: SearchQuery, scope: Record<string, string>, ownerWide: boolean): Promise<NotesOutcome<Answer>> {
    let run: Run;
    try {
      const req = parseSearch(q);
      const hash = queryHash({ ...req.canonical, ...scope });
      run = { req, hash, repos, ownerWide, start: 0, lines: () => [], words: req.match.kind === 'words' };
      if (req.cursor !== undefined) this.position(run, decodeCursor(req.cursor, hash));
      run.lines = this.lineFinder(req);
    } catch (err) {
      if (err instanceof SearchParamError || err instanceof CursorError) return { kind: 'bad_query', reason: err.message };
      throw err;
    }
    try {
      if (run.req.countBy !== undefined) return ok(await this.count(run, run.req.countBy));
      return ok(run.req.regex ? await this.regexPage(run, run.req.regex) : await this.indexPage(run));
    } catch (err) {
      if (err instanceof RegexBudgetError) return { kind: 'bad_query', reason: err.message };
      throw err;
    }
  }

  /** Where a cursor resumes: its repository (or the first after it, if that one went away) and key. */
  private position(run: Run, pos: CursorPosition): void {
    // A ranked search's key is its score and id; a cursor without the score is not one it made.
    if (run.words && pos.score === undefined) throw new CursorError('the cursor is not a valid cursor');
    const key: PageKey = run.words ? { score: pos.score, id: pos.id } : { id: pos.id };
    if (!run.ownerWide) {
      if (pos.repo !== undefined) throw new CursorError('the cursor is not a valid cursor');
      run.after = key;
      return;
    }
    if (pos.repo === undefined) throw new CursorError('the cursor is not a valid cursor');
    const want = nameKey(pos.repo);
    const i = run.repos.findIndex((r) => nameKey(r.name) >= want);
    run.start = i < 0 ? run.repos.length : i;
    if (i >= 0 && nameKey(run.repos[i]!.name) === want) run.after = key;
  }

  private lineFinder(req: SearchRequest): LineFinder {
    const m = req.match;
    if (m.kind === 'words') return wordLines(m.query);
    if (m.kind === 'literal') {
      const text = m.text;
      return (content) => findLines(content, (line) => line.includes(text), HIT_MAX_LINES);
    }
    return () => [];
  }

  private cursorOf(run: Run, repo: Repo, row: IndexRow, scan = false): string {
    const pos: CursorPosition = { id: row.id };
    if (run.ownerWide) pos.repo = repo.name;
    if (run.words) pos.score = row.score;
    if (scan) pos.scan = true;
    return encodeCursor(run.hash, pos);
  }

  private hit(run: Run, repo: Repo, row: IndexRow, lines: MatchedLine[], text?: string): SearchHit {
    return buildHit(fullName(repo), row, lines, { words: run.words, content: run.req.content, text });
  }

  /**
   * Words (ranked or not) and literal: `limit` hits from the repositories in order. One row more
   * than needed is asked for, so the last page says null at once rather than after an empty page.
   */
  private async indexPage(run: Run): Promise<SearchResponse> {
    const { req, repos } = run;
    const data: SearchHit[] = [];
    let next: string | null = null;
    if (!req.matchesNothing) {
      for (let i = run.start; i < repos.length; i++) {
        const repo = repos[i]!;
        await this.current(repo);
        const want = req.limit - data.length;
        const rows = await this.deps.index.searchPage(repo.id, req.match, req.filter, { after: i === run.start ? run.after : undefined, limit: want + 1, withContent: req.content });
        const kept = rows.slice(0, want);
        // Lines and snippets need each note's text; unless the hits carry it (content=true, pages
        // of at most CONTENT_MAX_LIMIT), it is read a batch at a time and let go.
        for (let k = 0; k < kept.length; k += TEXT_BATCH) {
          const part = kept.slice(k, k + TEXT_BATCH);
          const texts = req.content ? undefined : await this.deps.index.contents(repo.id, part.map((r) => r.id));
          for (const row of part) {
            const text = row.content ?? texts?.get(row.id) ?? '';
            data.push(this.hit(run, repo, row, run.lines(text), text));
          }
        }
        const last = rows[Math.min(rows.length, want) - 1];
        if (rows.length > want) {
          next = this.cursorOf(run, repo, last!);
          break;
        }
        if (data.length === req.limit) {
          // The page is full and this repository done: a later one decides whether a next page exists.
          if (last && (await this.anyLater(run, i + 1))) next = this.cursorOf(run, repo, last);
          break;
        }
      }
    }
    return { data, next_cursor: next, indexed: await this.indexed(repos), total: data.length };
  }

  private async anyLater(run: Run, from: number): Promise<boolean> {
    for (let i = from; i < run.repos.length; i++) {
      const repo = run.repos[i]!;
      await this.current(repo);
      if ((await this.deps.index.searchPage(repo.id, run.req.match, run.req.filter, { limit: 1 })).length > 0) return true;
    }
    return false;
  }

  /**
   * Regex: candidates (every required literal contained, the filters met) in id order, fetched in
   * batches with their text and tested line by line. The page ends at `limit` hits or after
   * REGEX_PAGE_SCAN candidates, its cursor after the last note scanned; so a page may hold fewer
   * hits than `limit`, even none, and still have a next one.
   */
  private async regexPage(run: Run, regex: SafeRegex): Promise<SearchResponse> {
    const { req, repos } = run;
    const budget = new StepBudget(REGEX_STEP_BUDGET);
    const data: SearchHit[] = [];
    let scanned = 0;
    if (!req.matchesNothing) {
      for (let i = run.start; i < repos.length; i++) {
        const repo = repos[i]!;
        await this.current(repo);
        let after = i === run.start ? run.after : undefined;
        for (;;) {
          const batch = await this.deps.index.searchPage(repo.id, req.match, req.filter, { after, limit: REGEX_BATCH, caseInsensitive: req.caseInsensitive });
          for (let k = 0; k < batch.length; k += TEXT_BATCH) {
            const texts = await this.deps.index.contents(repo.id, batch.slice(k, k + TEXT_BATCH).map((r) => r.id));
            for (let j = k; j < Math.min(k + TEXT_BATCH, batch.length); j++) {
              const row = batch[j]!;
              const text = texts.get(row.id) ?? '';
              scanned++;
              const lines = regexLines(regex, text, budget);
              if (lines.length) data.push(this.hit(run, repo, row, lines, text));
              if (data.length === req.limit || scanned >= REGEX_PAGE_SCAN) {
                const more = j < batch.length - 1 || batch.length === REGEX_BATCH || i < repos.length - 1;
                const next = more ? this.cursorOf(run, repo, row, data.length < req.limit) : null;
                return { data, next_cursor: next, indexed: await this.indexed(repos), total: data.length };
              }
            }
          }
          if (batch.length < REGEX_BATCH) break;
          after = { id: batch[batch.length - 1]!.id };
        }
      }
    }
    return { data, next_cursor: null, indexed: await this.indexed(repos), total: data.length };
  }

  /** count_by over every matching note of every repository searched (no paging). */
  private async count(run: Run, by: CountBy): Promise<CountResponse> {
    const { req, repos } = run;
    const counts = new Map<string, number>();
    let truncated = false;
    const add = (key: string, n: number) => counts.set(key, (counts.get(key) ?? 0) + n);
    if (!req.matchesNothing) {
      const budget = req.regex ? new StepBudget(REGEX_STEP_BUDGET) : undefined;
      for (const repo of repos) {
        await this.current(repo);
        if (req.regex) {
          // The index cannot run the expression: every candidate is scanned, under the request's budget.
          let after: PageKey | undefined;
          for (;;) {
            const batch = await this.deps.index.searchPage(repo.id, req.match, req.filter, { after, limit: REGEX_BATCH, caseInsensitive: req.caseInsensitive });
            for (let k = 0; k < batch.length; k += TEXT_BATCH) {
              const part = batch.slice(k, k + TEXT_BATCH);
              const texts = await this.deps.index.contents(repo.id, part.map((r) => r.id));
              for (const row of part) if (regexMatches(req.regex, texts.get(row.id) ?? '', budget!)) for (const key of rowKeys(row, by)) add(key, 1);
            }
            if (batch.length < REGEX_BATCH) break;
            after = { id: batch[batch.length - 1]!.id };
          }
        } else {
          // One repository's groups are exact; merged across repositories, only as exact as each one's first MERGE_MAX_GROUPS.
          const max = repos.length === 1 ? COUNT_MAX_GROUPS + 1 : MERGE_MAX_GROUPS;
          const groups = await this.deps.index.countBy(repo.id, req.match, req.filter, by, max);
          if (groups.length >= max) truncated = true;
          for (const g of groups) add(g.key, g.count);
        }
        if (counts.size > MERGE_MAX_GROUPS) truncated = true;
      }
    }
    return { ...topGroups(counts, truncated), indexed: await this.indexed(repos) };
  }

  /** list_missing_notes: the commits given that have no note in the namespace, in the order given. */
  async missing(caller: Caller, owner: string, name: string, q: MissingQuery): Promise<NotesOutcome<MissingResponse>> {
    const repo = await this.deps.access.visibleRepo(owner, name, caller);
    if (!repo) return { kind: 'no_repo', repo: `${owner}/${name}` };
    const namespace = q.namespace ?? DEFAULT_NAMESPACE;
    let commits: string[];
    try {
      checkNamespaceFilter(namespace);
      commits = parseCommits(q.commits);
    } catch (err) {
      if (err instanceof SearchParamError) return { kind: 'bad_query', reason: err.message };
      throw err;
    }
    await this.current(repo);
    const missing = commits.length ? await this.deps.index.missing(repo.id, namespace, commits) : [];
    return ok({ data: missing.map((object) => ({ object })), namespace, indexed: await this.deps.indexer.isIndexed(repo.id) });
  }
}

/** The matching lines of a note (at most HIT_MAX_LINES), each tested under the request's budget. */
function regexLines(regex: SafeRegex, content: string, budget: StepBudget): MatchedLine[] {
  return findLines(content, (line) => regex.test(line, budget), HIT_MAX_LINES);
}

function regexMatches(regex: SafeRegex, content: string, budget: StepBudget): boolean {
  return findLines(content, (line) => regex.test(line, budget), 1).length > 0;
}
