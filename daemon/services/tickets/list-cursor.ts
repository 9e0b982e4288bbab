// The `cursor` of `GET /tickets`: the position after the last ticket of a page (its
// `updated_at` and `id`), opaque to clients so that the order key may change without
// breaking them. A cursor that does not decode to that shape is refused, never guessed at.
import type { ListPosition } from '../../../src/store/tickets.js';

const STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ID = /^[0-9a-f-]{1,36}$/;

export function encodeCursor(p: ListPosition): string {
  return Buffer.from(`${p.updated_at}/${p.id}`).toString('base64url');
}

/** The position, or undefined when `raw` is not a cursor this server wrote. */
export function decodeCursor(raw: string): ListPosition | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) return undefined;
  const text = Buffer.from(raw, 'base64url').toString('utf8');
  const slash = text.indexOf('/');
  const updated_at = text.slice(0, slash);
  const id = text.slice(slash + 1);
  return slash > 0 && STAMP.test(updated_at) && ID.test(id) ? { updated_at, id } : undefined;
}
