// The ticket enumerations and their tolerant parsers, without TypeBox: the schemas validate with
// these lists and `mkt tickets` offers them as flag choices, so `mkt tickets --help` loads no schema.

/** Support-desk lifecycle (Zendesk's, with `on_hold` spelled out). */
export const STATUSES = ['open', 'pending', 'on_hold', 'solved', 'closed'] as const;
export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export const CHANNELS = ['email', 'web', 'chat', 'phone', 'api'] as const;
export type Status = (typeof STATUSES)[number];
export type Priority = (typeof PRIORITIES)[number];
export type Channel = (typeof CHANNELS)[number];

/** Case-insensitive, with `-` or a space accepted for `_` ("On Hold" parses as on_hold). */
function parser<T extends string>(values: readonly T[]): (raw: unknown) => T | undefined {
  return (raw) => {
    if (typeof raw !== 'string') return undefined;
    const v = raw.trim().toLowerCase().replace(/[\s-]+/g, '_');
    return (values as readonly string[]).includes(v) ? (v as T) : undefined;
  };
}
export const parseStatus = parser(STATUSES);
export const parsePriority = parser(PRIORITIES);
export const parseChannel = parser(CHANNELS);
