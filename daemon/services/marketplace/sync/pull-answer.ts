// The answer of sync_pull written as JSON text by hand, each entry's `data` spliced in as the JSON
// text it was stored as. Parsing every entry's data only for fast-json-stringify to write it back
// cost a page of 500 entries 458-573 µs against 311-324 (bench/README.md, "Each row's own work",
// issue 37). The stored text is always JSON.stringify's own output (push and reseal write it), so
// the bytes are those the schema's serializer wrote; test/daemon/services/marketplace/sync/
// pull-answer.test.ts holds the two side by side and fails when the entry schema gains a field.
import type { StoredPullPage } from '../../../../src/store/sync.js';

/** Printable ASCII but `"` and `\\`: a string of only these is its own JSON text between quotes. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * A string, or null, as JSON. The fields here (ids, names, timestamps) are nearly always plain
 * ASCII, and a regular expression's test costs half of JSON.stringify's call into the runtime
 * (10 entries: 50 strings, ~4 µs a page); anything else is JSON.stringify's.
 */
function text(s: string | null): string {
  return s === null ? 'null' : PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** `{"entries":[…],"cursor":…,"has_more":…}`, field for field as PullResponseSchema orders them. */
export function pullAnswer(page: StoredPullPage): string {
  let out = '{"entries":[';
  for (let i = 0; i < page.entries.length; i++) {
    const e = page.entries[i]!;
    out += `${i === 0 ? '' : ','}{"seq":${e.seq},"key_id":${e.key_id},"device_id":${text(e.device_id)},"table":${text(e.table)},"op":${text(e.op)},"row_id":${text(e.row_id)},"timestamp":${text(e.timestamp)},"data":${e.data_json ?? 'null'}}`;
  }
  return `${out}],"cursor":${page.cursor},"has_more":${page.has_more}}`;
}
