// The notes search language (bare words all match, "quoted phrases", `or` between terms,
// `-excluded` terms) parsed into a NotesQuery that both index engines evaluate: SQLite turns it
// into an FTS5 MATCH expression (here), PostgreSQL into its own predicate (src/store/notes-sql.ts).
// Every term is reduced to word characters and re-quoted, so no input can inject FTS5 syntax.

export class QueryError extends Error {}

export const MAX_QUERY_LENGTH = 1000;
const MAX_TERMS = 64;

interface Term {
  words: string[];
  negated: boolean;
}

/**
 * A parsed query: every group must match (AND), a group matches when one of its phrases does
 * (OR), and no excluded phrase may match. A phrase is the words of one term, in order; each
 * engine tokenizes them as its index does (FTS5 unicode61 on both, see docs/notes-search.md).
 */
export interface NotesQuery {
  groups: string[][][];
  excluded: string[][];
}

type Token = { kind: 'term'; term: Term } | { kind: 'or' };

/** The word characters unicode61 indexes (letters, numbers), lower-cased. */
function words(text: string): string[] {
  return (text.match(/[\p{L}\p{N}\p{M}]+/gu) ?? []).map((w) => w.toLowerCase());
}

function tokenize(q: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    let negated = false;
    if (c === '-' && i + 1 < q.length && !/\s/.test(q[i + 1]!)) {
      negated = true;
      i++;
    }
    let raw: string;
    let quoted = false;
    if (q[i] === '"') {
      const end = q.indexOf('"', i + 1);
      raw = q.slice(i + 1, end < 0 ? q.length : end);
      i = end < 0 ? q.length : end + 1;
      quoted = true;
    } else {
      let j = i;
      while (j < q.length && !/\s/.test(q[j]!) && q[j] !== '"') j++;
      raw = q.slice(i, j);
      i = j;
    }
    if (!quoted && !negated && raw.toLowerCase() === 'or') {
      out.push({ kind: 'or' });
      continue;
    }
    const w = words(raw);
    if (w.length) out.push({ kind: 'term', term: { words: w, negated } });
  }
  return out;
}

const phrase = (words: string[]) => `"${words.join(' ')}"`;

/** Parses a user query; throws QueryError when nothing searchable is left. */
export function parseQuery(q: string): NotesQuery {
  if (q.length > MAX_QUERY_LENGTH) throw new QueryError(`query is longer than ${MAX_QUERY_LENGTH} characters`);
  const tokens = tokenize(q);
  const groups: Term[][] = [];
  const excluded: Term[] = [];
  let joinNext = false;
  for (const tok of tokens) {
    if (tok.kind === 'or') {
      joinNext = groups.length > 0;
      continue;
    }
    if (tok.term.negated) {
      excluded.push(tok.term);
      joinNext = false;
      continue;
    }
    if (joinNext) groups[groups.length - 1]!.push(tok.term);
    else groups.push([tok.term]);
    joinNext = false;
  }
  if (groups.flat().length + excluded.length > MAX_TERMS) throw new QueryError(`query has more than ${MAX_TERMS} terms`);
  if (groups.length === 0) {
    throw new QueryError(excluded.length ? 'query needs at least one word that is not excluded' : 'query has no words to search for');
  }
  return { groups: groups.map((g) => g.map((t) => t.words)), excluded: excluded.map((t) => t.words) };
}

/** The FTS5 MATCH expression of a parsed query (the SQLite index's form of it). */
export function ftsMatch(query: NotesQuery): string {
  const positive = query.groups.map((g) => (g.length === 1 ? phrase(g[0]!) : `(${g.map(phrase).join(' OR ')})`)).join(' AND ');
  return query.excluded.length ? `(${positive})${query.excluded.map((t) => ` NOT ${phrase(t)}`).join('')}` : positive;
}

/** The FTS5 expression for a user query; throws QueryError when nothing searchable is left. */
export function toFtsMatch(q: string): string {
  return ftsMatch(parseQuery(q));
}
