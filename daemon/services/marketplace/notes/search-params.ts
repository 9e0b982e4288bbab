// A notes search's query parameters read into what the index and the scanner take: the mode and
// its match, the filters, count_by, the page size, and the canonical form of the query that a
// cursor is bound to. Pure (no I/O); every refusal is a SearchParamError whose message is the
// 400's text.
import { MAX_QUERY_LENGTH, QueryError, parseQuery } from '../../../../src/notes/query.js';
import { checkNamespace } from '../../../../src/notes/namespace.js';
import { compileRegex, RegexError, type SafeRegex } from '../../../../src/notes/safe-regex.js';
import type { CountBy, FieldFilter, IndexMatch, NoteFilter } from '../../../../src/store/notes.js';
import {
  CONTENT_MAX_LIMIT,
  MAX_COMMITS,
  MAX_FIELD_FILTERS,
  SEARCH_DEFAULT_LIMIT,
  SEARCH_MAX_LIMIT,
  SEARCH_MODES,
  type SearchMode,
  type SearchQuery,
} from '../../../../src/schemas/notes.js';

export class SearchParamError extends Error {}

/** What a search asks for, checked; `match` is what the index narrows on (regex: its literals). */
export interface SearchRequest {
  mode: SearchMode;
  match: IndexMatch;
  /** Regex mode: the compiled expression every candidate line is tested with. */
  regex?: SafeRegex;
  /** Regex mode with `(?i)`: the literals narrow without regard to case. */
  caseInsensitive: boolean;
  filter: NoteFilter;
  /** Set when the filters can match nothing (an empty `commits=` list): no index read is needed. */
  matchesNothing: boolean;
  countBy?: CountBy;
  limit: number;
  content: boolean;
  cursor?: string;
  /** Every parameter but `cursor` and `limit`, normalised: what a cursor's hash is computed from. */
  canonical: Record<string, unknown>;
}

const FULL_ID = /^([0-9a-f]{40}|[0-9a-f]{64})$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * An RFC 3339 time, or a date (midnight UTC), as ms since the epoch. Date.parse alone would take
 * many other forms and roll `02-30` over into March; a script's typo should be a 400 instead.
 */
export function parseTime(name: string, raw: string): number {
  const d = DATE_ONLY.exec(raw) ?? DATE_TIME.exec(raw);
  const bad = () => new SearchParamError(`${name} must be an RFC 3339 time (2026-11-29T13:00:00Z) or a date (2026-11-29)`);
  if (!d) throw bad();
  const [year, month, day] = [Number(d[1]), Number(d[2]), Number(d[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) throw bad();
  if (d.length > 4 && (Number(d[4]) > 23 || Number(d[5]) > 59 || Number(d[6]) > 60)) throw bad();
  const ms = Date.parse(d.length > 4 ? raw.replace(' ', 'T').replace(/[tz]/g, (c) => c.toUpperCase()) : `${raw}T00:00:00Z`);
  if (Number.isNaN(ms)) throw bad();
  return ms;
}

/** `KEY~text` (contains, any case) or `KEY=value` (equals): the first `~` or `=` splits. */
export function parseFieldFilter(raw: string): FieldFilter {
  const at = raw.search(/[~=]/);
  if (at < 0) throw new SearchParamError(`field filter ${JSON.stringify(raw)} must be KEY~text (contains) or KEY=value (equals)`);
  const key = raw.slice(0, at).trim();
  if (key === '') throw new SearchParamError(`field filter ${JSON.stringify(raw)} names no key`);
  return { key, op: raw[at] as '=' | '~', value: raw.slice(at + 1) };
}

/** A comma list of full object ids, lower-cased, duplicates dropped (first kept), order kept. */
export function parseCommits(raw: string): string[] {
  const out = new Set<string>();
  for (const part of raw.split(',')) {
    const id = part.trim().toLowerCase();
    if (id === '') continue;
    if (!FULL_ID.test(id)) throw new SearchParamError(`commits: ${JSON.stringify(part.trim().slice(0, 80))} is not a full object id (40 or 64 hex digits)`);
    out.add(id);
    if (out.size > MAX_COMMITS) throw new SearchParamError(`commits lists more than ${MAX_COMMITS} object ids`);
  }
  return [...out];
}

export function parseCountBy(raw: string): CountBy {
  if (raw === 'namespace' || raw === 'note_author') return raw;
  if (raw.startsWith('field:') && raw.length > 'field:'.length) return { field: raw.slice('field:'.length) };
  throw new SearchParamError('count_by must be namespace, note_author or field:KEY');
}

/** A namespace filter naming no possible namespace is a malformed query (400), not a missing repository. */
export function checkNamespaceFilter(ns: string): void {
  const c = checkNamespace(ns);
  if (!c.ok && !c.reserved) throw new SearchParamError(`namespace: ${c.reason}`);
}

function modeOf(raw: string | undefined): SearchMode {
  if (raw === undefined) return 'words';
  if ((SEARCH_MODES as readonly string[]).includes(raw)) return raw as SearchMode;
  throw new SearchParamError(`mode must be one of ${SEARCH_MODES.join(', ')}`);
}

/** Reads a search's parameters; throws SearchParamError (the 400's text) on anything malformed. */
export function parseSearch(q: SearchQuery): SearchRequest {
  const mode = modeOf(q.mode);
  const text = q.q ?? '';
  let match: IndexMatch;
  let regex: SafeRegex | undefined;
  let caseInsensitive = false;
  if (mode === 'words') {
    if (text.trim() === '') match = { kind: 'all' };
    else {
      try {
        match = { kind: 'words', query: parseQuery(text) };
      } catch (err) {
        if (err instanceof QueryError) throw new SearchParamError(err.message);
        throw err;
      }
    }
  } else if (mode === 'literal') {
    if (text === '') throw new SearchParamError('a literal search needs a non-empty q');
    if (text.length > MAX_QUERY_LENGTH) throw new SearchParamError(`q is longer than ${MAX_QUERY_LENGTH} characters`);
    match = { kind: 'literal', text };
  } else {
    if (text === '') throw new SearchParamError('a regex search needs a non-empty q');
    try {
      regex = compileRegex(text);
    } catch (err) {
      if (err instanceof RegexError) throw new SearchParamError(`regex: ${err.message}`);
      throw err;
    }
    caseInsensitive = text.startsWith('(?i)');
    match = { kind: 'literals', texts: regex.requiredLiterals };
  }

  const filter: NoteFilter = {};
  if (q.namespace !== undefined) {
    checkNamespaceFilter(q.namespace);
    filter.namespace = q.namespace;
  }
  if (q.commits_only === true) filter.commitsOnly = true;
  const rawFields = q.field ?? [];
  if (rawFields.length > MAX_FIELD_FILTERS) throw new SearchParamError(`at most ${MAX_FIELD_FILTERS} field filters`);
  if (rawFields.length) filter.fields = rawFields.map(parseFieldFilter);
  if (q.author !== undefined) {
    if (q.author.trim() === '') throw new SearchParamError('author is empty');
    filter.author = q.author.trim();
  }
  if (q.since !== undefined) filter.since = parseTime('since', q.since);
  if (q.until !== undefined) filter.until = parseTime('until', q.until);
  if (q.commits !== undefined) filter.commits = parseCommits(q.commits);
  const countBy = q.count_by === undefined ? undefined : parseCountBy(q.count_by);
  if (countBy !== undefined && q.cursor !== undefined) throw new SearchParamError('count_by answers every group at once; it takes no cursor');

  const canonical: Record<string, unknown> = {
    mode,
    q: mode === 'words' ? text.trim() : text,
    namespace: filter.namespace ?? null,
    commits_only: filter.commitsOnly === true,
    // Keys ignore case, so `Reviewed-by~x` and `reviewed-by~x` are one query; filters are ANDed, so their order is not part of it.
    field: (filter.fields ?? []).map((f) => `${f.key.toLowerCase()}${f.op}${f.value}`).sort(),
    author: filter.author?.toLowerCase() ?? null,
    since: filter.since ?? null,
    until: filter.until ?? null,
    commits: filter.commits ? [...filter.commits].sort() : null,
    count_by: q.count_by ?? null,
    content: q.content === true,
  };
  return {
    mode,
    match,
    regex,
    caseInsensitive,
    filter,
    matchesNothing: filter.commits !== undefined && filter.commits.length === 0,
    countBy,
    limit: Math.min(q.limit ?? SEARCH_DEFAULT_LIMIT, q.content === true ? CONTENT_MAX_LIMIT : SEARCH_MAX_LIMIT),
    content: q.content === true,
    cursor: q.cursor,
    canonical,
  };
}
