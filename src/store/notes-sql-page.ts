// The notes index's filtered reads on either engine (issue 36): the SQL conditions of a
// NoteFilter and of the non-ranked matches (every note, an exact literal through the trigram
// index, regex candidates), pages of note ids in id order, the rows of a page (metadata, fields,
// content), counts per group and the commits without a note. Ranked word search stays in
// notes-sql.ts, which calls in here for the filter conditions and the rows of a page.
import type { Engine, SqlExecutor } from './sql.js';
import type { CountBy, FieldFilter, IndexMatch, IndexRow, NoteFilter, PageKey } from './notes.js';
import type { NoteField } from '../notes/fields.js';

/** A piece of SQL over the note alias `n`, with its bound parameters in text order. */
export interface Cond {
  sql: string;
  params: unknown[];
}

const TRUE: Cond = { sql: '1 = 1', params: [] };
/** Nothing matches (a literal holding NUL, which no engine can compare alike). */
const NONE: Cond = { sql: '1 = 0', params: [] };

export const and = (conds: Cond[]): Cond =>
  conds.length === 0 ? TRUE : { sql: conds.map((c) => `(${c.sql})`).join(' AND '), params: conds.flatMap((c) => c.params) };

/** A list bound as one parameter: a JSON array read by json_each (SQLite), a text array (PostgreSQL). */
function inList(engine: Engine, column: string, values: readonly (string | number)[], type: 'text' | 'bigint'): Cond {
  if (engine === 'sqlite') return { sql: `${column} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(values)] };
  return { sql: `${column} = ANY(?::${type}[])`, params: [values] };
}

/** One field condition: key case-insensitive; `=` the value exactly, `~` containing it case-insensitively. */
function fieldCond(engine: Engine, f: FieldFilter): Cond {
  const has = engine === 'sqlite' ? 'instr(f.value_lc, ?) > 0' : 'strpos(f.value_lc, ?) > 0';
  const test = f.op === '=' ? 'f.value = ?' : has;
  const value = f.op === '=' ? f.value : f.value.toLowerCase();
  return { sql: `EXISTS (SELECT 1 FROM note_fields f WHERE f.note_id = n.id AND f.key_lc = ? AND ${test})`, params: [f.key.toLowerCase(), value] };
}

/** The conditions of a filter (the repository's own condition is the caller's). */
export function filterCond(engine: Engine, filter: NoteFilter): Cond {
  // Nothing stored holds NUL (PostgreSQL text cannot; fields drop it on both engines), so a
  // filter holding it matches nothing, rather than failing on PostgreSQL alone.
  const texts = [filter.namespace, filter.author, ...(filter.fields ?? []).flatMap((f) => [f.key, f.value]), ...(filter.commits ?? [])];
  if (texts.some((t) => t?.includes('\0'))) return NONE;
  const conds: Cond[] = [];
  if (filter.namespace !== undefined) conds.push({ sql: 'n.namespace = ?', params: [filter.namespace] });
  if (filter.commitsOnly) conds.push({ sql: "n.object_type = 'commit'", params: [] });
  for (const f of filter.fields ?? []) conds.push(fieldCond(engine, f));
  if (filter.author !== undefined) {
    const a = filter.author.toLowerCase();
    conds.push({ sql: 'n.note_author_lc = ? OR n.note_email_lc = ?', params: [a, a] });
  }
  if (filter.since !== undefined) conds.push({ sql: 'n.note_at >= ?', params: [filter.since] });
  if (filter.until !== undefined) conds.push({ sql: 'n.note_at < ?', params: [filter.until] });
  if (filter.commits !== undefined) conds.push(inList(engine, 'n.target', filter.commits, 'text'));
  return and(conds);
}

/** Texts of at least this many characters go through the trigram index; shorter ones are only compared. */
export const TRIGRAM_MIN = 3;

const ftsString = (s: string) => `"${s.replace(/"/g, '""')}"`;
const likeEscape = (s: string) => s.replace(/[\\%_]/g, '\\$&');
const isAscii = (s: string) => [...s].every((c) => c.charCodeAt(0) < 0x80);

/**
 * A note contains `text` exactly (case and all). SQLite: the FTS5 trigram table narrows (it
 * folds case), then the bytes are compared. PostgreSQL: `content_text LIKE` (what the pg_trgm GIN
 * index answers; content_text has NUL removed, which can only add candidates), then the bytes.
 */
function literalCond(engine: Engine, text: string): Cond {
  if (text.includes('\0')) return NONE;
  const bytes = Buffer.from(text, 'utf8');
  if (engine === 'sqlite') {
    const exact: Cond = { sql: 'instr(CAST(n.content AS BLOB), ?) > 0', params: [bytes] };
    if ([...text].length < TRIGRAM_MIN) return exact;
    return and([{ sql: 'n.id IN (SELECT rowid FROM notes_tri WHERE notes_tri MATCH ?)', params: [ftsString(text)] }, exact]);
  }
  const exact: Cond = { sql: 'position(?::bytea IN n.content) > 0', params: [bytes] };
  if ([...text].length < TRIGRAM_MIN) return exact;
  return and([{ sql: "n.content_text LIKE ? ESCAPE '\\'", params: [`%${likeEscape(text)}%`] }, exact]);
}

/**
 * A candidate for a case-insensitive regex's required text: only ASCII texts narrow (folded
 * as ASCII: SQLite's lower() folds nothing else), others add no condition. A superset of the
 * notes the regex can match; the regex decides.
 */
function foldedCond(engine: Engine, text: string): Cond | undefined {
  if (!isAscii(text) || text.includes('\0') || text.length === 0) return undefined;
  const lower = text.toLowerCase();
  if (engine === 'sqlite') {
    const exact: Cond = { sql: 'instr(lower(n.content), ?) > 0', params: [lower] };
    if (text.length < TRIGRAM_MIN) return exact;
    return and([{ sql: 'n.id IN (SELECT rowid FROM notes_tri WHERE notes_tri MATCH ?)', params: [ftsString(text)] }, exact]);
  }
  const exact: Cond = { sql: 'strpos(lower(n.content_text), ?) > 0', params: [lower] };
  if (text.length < TRIGRAM_MIN) return exact;
  return and([{ sql: "n.content_text ILIKE ? ESCAPE '\\'", params: [`%${likeEscape(text)}%`] }, exact]);
}

/** The condition of a non-ranked match. */
export function matchCond(engine: Engine, match: Exclude<IndexMatch, { kind: 'words' }>, caseInsensitive = false): Cond {
  switch (match.kind) {
    case 'all':
      return TRUE;
    case 'literal':
      return literalCond(engine, match.text);
    case 'literals':
      if (caseInsensitive) return and(match.texts.map((t) => foldedCond(engine, t)).filter((c): c is Cond => c !== undefined));
      return and(match.texts.map((t) => literalCond(engine, t)));
  }
}

/** Ids of one page in id order (every match but words). */
export async function idPage(x: SqlExecutor, repoId: string, cond: Cond, after: PageKey | undefined, limit: number): Promise<number[]> {
  const rows = await x.all<{ id: number }>(
    `SELECT n.id FROM notes n WHERE n.repo_id = ? AND n.id > ? AND ${cond.sql} ORDER BY n.id LIMIT ?`,
    [repoId, after?.id ?? -1, ...cond.params, limit],
  );
  return rows.map((r) => r.id);
}

type NoteColumns = Omit<IndexRow, 'score' | 'snippet' | 'fields' | 'content'> & { content?: string | Buffer };

/**
 * The rows of a page's notes, in the order of `page` (id with its score and snippet): metadata,
 * fields in their order, content when asked for.
 */
export async function pageRows(x: SqlExecutor, page: { id: number; score: number; snippet: string }[], withContent: boolean): Promise<IndexRow[]> {
  if (page.length === 0) return [];
  const ids = page.map((p) => p.id);
  const notes = await x.all<NoteColumns>(
    `SELECT n.id, n.namespace, n.target, n.object_type, n.note_author, n.note_email, n.note_at, n.commit_subject, n.commit_author${withContent ? ', n.content' : ''}
     FROM notes n WHERE ${inList(x.engine, 'n.id', ids, 'bigint').sql}`,
    inList(x.engine, 'n.id', ids, 'bigint').params,
  );
  const fields = await x.all<{ note_id: number; key: string; value: string }>(
    `SELECT f.note_id, f.key, f.value FROM note_fields f WHERE ${inList(x.engine, 'f.note_id', ids, 'bigint').sql} ORDER BY f.note_id, f.ord`,
    inList(x.engine, 'f.note_id', ids, 'bigint').params,
  );
  const byNote = new Map<number, NoteField[]>();
  for (const f of fields) {
    let list = byNote.get(f.note_id);
    if (!list) byNote.set(f.note_id, (list = []));
    list.push({ key: f.key, value: f.value });
  }
  const byId = new Map(notes.map((n) => [n.id, n]));
  const out: IndexRow[] = [];
  for (const p of page) {
    const n = byId.get(p.id);
    // Gone between the page's query and this one (a concurrent change): left out.
    if (!n) continue;
    const row: IndexRow = {
      id: n.id,
      namespace: n.namespace,
      target: n.target,
      object_type: n.object_type,
      score: p.score,
      snippet: p.snippet,
      note_author: n.note_author,
      note_email: n.note_email,
      note_at: n.note_at,
      commit_subject: n.commit_subject,
      commit_author: n.commit_author,
      fields: byNote.get(p.id) ?? [],
    };
    if (withContent) row.content = Buffer.isBuffer(n.content) ? n.content.toString('utf8') : (n.content ?? '');
    out.push(row);
  }
  return out;
}

/** Counts per group of the notes meeting `cond` (which includes the match), count desc then key in byte order. */
export async function countGroups(x: SqlExecutor, repoId: string, cond: Cond, by: CountBy, max: number): Promise<{ key: string; count: number }[]> {
  const order = (column: string, count: string) => `ORDER BY ${count} DESC, ${column}${x.engine === 'postgres' ? ' COLLATE "C"' : ''}`;
  if (typeof by === 'object') {
    return x.all(
      `SELECT f.value AS key, COUNT(DISTINCT n.id) AS count FROM notes n JOIN note_fields f ON f.note_id = n.id AND f.key_lc = ?
       WHERE n.repo_id = ? AND ${cond.sql} GROUP BY f.value ${order('f.value', 'COUNT(DISTINCT n.id)')} LIMIT ?`,
      [by.field.toLowerCase(), repoId, ...cond.params, max],
    );
  }
  // Fixed column names only: `by` is one of two literals.
  const column = by === 'namespace' ? 'n.namespace' : 'n.note_author';
  return x.all(
    `SELECT ${column} AS key, COUNT(*) AS count FROM notes n WHERE n.repo_id = ? AND ${column} IS NOT NULL AND ${cond.sql} GROUP BY ${column} ${order(column, 'COUNT(*)')} LIMIT ?`,
    [repoId, ...cond.params, max],
  );
}

/** Those of `commits` without a note in the namespace, in the given order. */
export async function missingTargets(x: SqlExecutor, repoId: string, namespace: string, commits: string[]): Promise<string[]> {
  if (commits.length === 0) return [];
  const list = inList(x.engine, 'n.target', [...new Set(commits)], 'text');
  const rows = await x.all<{ target: string }>(`SELECT n.target FROM notes n WHERE n.repo_id = ? AND n.namespace = ? AND ${list.sql}`, [repoId, namespace, ...list.params]);
  const noted = new Set(rows.map((r) => r.target));
  return commits.filter((c) => !noted.has(c));
}

/** The texts of some notes of a repository by id. */
export async function noteContents(x: SqlExecutor, repoId: string, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const list = inList(x.engine, 'n.id', ids, 'bigint');
  const rows = await x.all<{ id: number; content: string | Buffer }>(`SELECT n.id, n.content FROM notes n WHERE n.repo_id = ? AND ${list.sql}`, [repoId, ...list.params]);
  return new Map(rows.map((r) => [Number(r.id), Buffer.isBuffer(r.content) ? r.content.toString('utf8') : r.content]));
}
