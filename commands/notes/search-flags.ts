// Flag parsers of `mkt notes search|missing|export`: a bad --field, --since/--until or --count-by
// is a usage error at parse time (exit 2, with the usage hint), before anything runs. A leaf: it
// imports only commander, since it loads for `--help`.
import { InvalidArgumentError } from 'commander';

/** `KEY~text` (contains) or `KEY=value` (equals): the first `~` or `=` after a non-empty key splits. */
export const FIELD_FILTER = /^[^~=]+[~=]/;

/** --field, repeatable: each occurrence checked and collected. */
export function fieldFilter(value: string, previous: string[] = []): string[] {
  if (!FIELD_FILTER.test(value)) throw new InvalidArgumentError('give KEY~TEXT (a value of KEY contains TEXT) or KEY=VALUE (a value equals VALUE).');
  return [...previous, value];
}

/** RFC 3339 with a zone (`2026-11-29T13:00:00Z`, `...+01:00`, fractions allowed) or a date. */
const TIME = /^\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2}))?$/;

/** --since / --until: a time the server will read the same way; checked here to fail early. */
export function timeArg(value: string): string {
  if (!TIME.test(value) || Number.isNaN(Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value))) {
    throw new InvalidArgumentError('give an RFC 3339 time (2026-11-29T13:00:00Z) or a date (2026-11-29).');
  }
  return value;
}

/** --count-by: `namespace`, `note_author` or `field:KEY`. */
export function countByArg(value: string): string {
  if (value === 'namespace' || value === 'note_author' || /^field:.+$/.test(value)) return value;
  throw new InvalidArgumentError('give namespace, note_author or field:KEY.');
}

/** A revision range for --range and `missing`: never an option in disguise. */
export function rangeArg(value: string): string {
  if (value.trim() === '' || value.startsWith('-')) throw new InvalidArgumentError('give a revision range A..B (e.g. v1.0..HEAD).');
  return value;
}
