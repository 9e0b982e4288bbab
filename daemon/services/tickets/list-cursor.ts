// The `cursor` of `GET /tickets` and of split `/sync/pull` pages: the position after the last
// ticket of a page (its `updated_at` and its seq among tickets sharing that stamp), opaque to
// clients so that the order key may change without breaking them. A cursor that does not decode
// to that shape is refused, never guessed at.
import type { ListPosition } from '../../../src/store/tickets.js';

const STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SEQ = /^(0|[1-9]\d{0,4})$/;
const SEQ_MAX = 32767;

export function encodeCursor(p: ListPosition): string {
  return Buffer.from(`${p.updated_at}~${p.seq}`).toString('base64url');
}

/** The position, or undefined when `raw` is not a cursor this server wrote. */
export function decodeCursor(raw: string): ListPosition | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) return undefined;
  const text = Buffer.from(raw, 'base64url').toString('utf8');
  const sep = text.indexOf('~');
  const updated_at = text.slice(0, sep);
  const seq = text.slice(sep + 1);
  if (sep <= 0 || !STAMP.test(updated_at) || Number.isNaN(Date.parse(updated_at)) || !SEQ.test(seq) || Number(seq) > SEQ_MAX) return undefined;
  return { updated_at, seq: Number(seq) };
}

/** Orders two positions by stamp, then seq (both pull pages and list pages use these keys). */
export function comparePositions(a: ListPosition, b: ListPosition): number {
  return a.updated_at < b.updated_at ? -1 : a.updated_at > b.updated_at ? 1 : a.seq - b.seq;
}

/** History cursors start with this, so that a list cursor given to a history page is refused. */
const HISTORY_TAG = 'h1:';

/** The `cursor` of `GET /tickets/{id}/history`: the key of a page's last entry (HistoryPosition). */
export function encodeHistoryCursor(k: [string, string, string, string]): string {
  return Buffer.from(HISTORY_TAG + JSON.stringify(k)).toString('base64url');
}

/** The key, or undefined when `raw` is not a history cursor this server wrote. */
export function decodeHistoryCursor(raw: string): [string, string, string, string] | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) return undefined;
  const text = Buffer.from(raw, 'base64url').toString('utf8');
  if (!text.startsWith(HISTORY_TAG)) return undefined;
  let k: unknown;
  try {
    k = JSON.parse(text.slice(HISTORY_TAG.length));
  } catch {
    return undefined;
  }
  if (!Array.isArray(k) || k.length !== 4 || !k.every((x) => typeof x === 'string' && x.length <= 200)) return undefined;
  if (!STAMP.test(k[0] as string) || Number.isNaN(Date.parse(k[0] as string))) return undefined;
  return k as [string, string, string, string];
}
