// The opaque `cursor` of a notes search: where the next page starts, tied to the query it came
// from. Not signed: it only positions the caller's own query (every page re-checks visibility),
// so the hash exists to refuse a cursor pasted into a different search, not to resist forgery.
import { createHash } from 'node:crypto';

/** Where a page ended: owner-wide searches also name the repository. */
export interface CursorPosition {
  repo?: string;
  score?: number;
  id: number;
  /** The page ended inside a regex scan (after the last scanned note, not the last hit). */
  scan?: boolean;
}

/** A cursor that cannot be used for this search; the message is the 400 answer's text. */
export class CursorError extends Error {}

const VERSION = 1;
/** Longer input is not one of ours (a cursor is under 300 characters even with a long repo name). */
const MAX_CURSOR_CHARS = 1024;
const MAX_REPO_CHARS = 256;
const HASH = /^[0-9a-f]{16}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const KEYS = new Set(['v', 'h', 'r', 's', 'i', 'x']);

export const NOT_A_CURSOR = 'the cursor is not a valid cursor';
export const OTHER_SEARCH = 'the cursor does not belong to this search';

/** JSON with object keys sorted at every level, so equal queries hash equally. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((e) => (e === undefined ? 'null' : canonicalJson(e))).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, e]) => e !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, e]) => `${JSON.stringify(k)}:${canonicalJson(e)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * The first 16 hex digits of the SHA-256 of the canonical query: every parameter except `cursor`
 * and `limit`, normalised by the caller (field filters sorted, owner and repo included).
 */
export function queryHash(canonical: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(canonical)).digest('hex').slice(0, 16);
}

export function encodeCursor(hash: string, pos: CursorPosition): string {
  if (!HASH.test(hash)) throw new Error(`not a query hash: ${hash}`);
  if (!Number.isSafeInteger(pos.id) || pos.id < 0) throw new Error(`not a note id: ${pos.id}`);
  if (pos.score !== undefined && !Number.isFinite(pos.score)) throw new Error(`not a score: ${pos.score}`);
  const body: Record<string, unknown> = { v: VERSION, h: hash };
  if (pos.repo !== undefined) body.r = pos.repo;
  if (pos.score !== undefined) body.s = pos.score;
  body.i = pos.id;
  if (pos.scan) body.x = 1;
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** The position a cursor holds, if it is one of ours and was made for the query of `hash`. */
export function decodeCursor(cursor: string, hash: string): CursorPosition {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_CHARS || !BASE64URL.test(cursor)) throw new CursorError(NOT_A_CURSOR);
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new CursorError(NOT_A_CURSOR);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new CursorError(NOT_A_CURSOR);
  const b = body as Record<string, unknown>;
  if (Object.keys(b).some((k) => !KEYS.has(k))) throw new CursorError(NOT_A_CURSOR);
  if (b.v !== VERSION || typeof b.h !== 'string' || !HASH.test(b.h)) throw new CursorError(NOT_A_CURSOR);
  if (typeof b.i !== 'number' || !Number.isSafeInteger(b.i) || b.i < 0) throw new CursorError(NOT_A_CURSOR);
  if (b.s !== undefined && (typeof b.s !== 'number' || !Number.isFinite(b.s))) throw new CursorError(NOT_A_CURSOR);
  if (b.r !== undefined && (typeof b.r !== 'string' || b.r === '' || b.r.length > MAX_REPO_CHARS)) throw new CursorError(NOT_A_CURSOR);
  if (b.x !== undefined && b.x !== 1) throw new CursorError(NOT_A_CURSOR);
  if (b.h !== hash) throw new CursorError(OTHER_SEARCH);
  const pos: CursorPosition = { id: b.i };
  if (b.r !== undefined) pos.repo = b.r as string;
  if (b.s !== undefined) pos.score = b.s as number;
  if (b.x === 1) pos.scan = true;
  return pos;
}
