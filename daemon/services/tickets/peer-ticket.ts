// Checks one ticket copy received from a peer (push body element or pull result) and brings
// it to canonical form; anything that would not round-trip is refused, not half-stored.
import { parseChannel, parsePriority, parseStatus, type Ticket } from '../../../src/schemas/tickets.js';
import { normalizeTimestamp } from '../../../src/util/time.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function optString(v: unknown, max: number): string | null | undefined {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' && v.length <= max ? v : undefined;
}

/** The canonical ticket, or a reason it cannot be stored. */
export function parsePeerTicket(raw: unknown): Ticket | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not an object';
  const r = raw as Record<string, unknown>;
  const id = typeof r.id === 'string' ? r.id.toLowerCase() : '';
  if (!UUID.test(id)) return 'id is not a UUID';
  if (typeof r.title !== 'string' || r.title.trim() === '' || r.title.length > 500) return 'title missing or invalid';
  const status = parseStatus(r.status);
  const priority = parsePriority(r.priority);
  const channel = parseChannel(r.channel);
  if (!status || !priority || !channel) return 'status, priority or channel invalid';
  const updated = typeof r.updated_at === 'string' ? normalizeTimestamp(r.updated_at) : undefined;
  if (!updated) return 'updated_at is not an RFC 3339 timestamp';
  const created = typeof r.created_at === 'string' ? normalizeTimestamp(r.created_at) : updated;
  if (!created) return 'created_at is not an RFC 3339 timestamp';
  const description = r.description === undefined ? '' : r.description;
  if (typeof description !== 'string' || description.length > 100_000) return 'description invalid';
  const source = r.source === undefined ? 'manual' : r.source;
  if (typeof source !== 'string' || source.length > 200) return 'source invalid';
  const requester = optString(r.requester, 500);
  const assignee = optString(r.assignee, 500);
  if (requester === undefined || assignee === undefined) return 'requester or assignee invalid';
  const tags = r.tags === undefined ? [] : r.tags;
  if (!Array.isArray(tags) || tags.length > 50 || !tags.every((t) => typeof t === 'string' && t.length > 0 && t.length <= 100)) return 'tags invalid';
  const updatedBy = r.updated_by === undefined ? '' : r.updated_by;
  if (typeof updatedBy !== 'string' || updatedBy.length > 100) return 'updated_by invalid';
  return {
    id,
    short_id: id.slice(0, 8),
    title: r.title,
    description,
    status,
    priority,
    channel,
    source,
    requester,
    assignee,
    tags: tags as string[],
    created_at: created,
    updated_at: updated,
    updated_by: updatedBy,
  };
}
