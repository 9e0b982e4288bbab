// Hostile values for the fuzz suite: strings that break parsers, loggers, databases and terminals,
// raw path segments and query strings, deep JSON, bad content types and malformed credentials.
import fc from 'fast-check';

/** 1 MiB, the size the specs name as a limit for texts (note content, ticket fields in errors). */
export const MIB = 1024 * 1024;

const CONTROLS = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('') + '\u007f';

/** Strings that are valid JSON string content but hostile to whatever stores, logs or prints them. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    'x'.repeat(10) + '\u0000',
    CONTROLS,
    '\r\nX-Injected: 1\r\n\r\n',
    '\u001b[31mred\u001b[0m\u001b]0;title\u0007',
    '\u2028\u2029',
    '\u202eevil\u202c',
    '\ufeffbom',
    '\u200b\u200c\u200d',
    '\ud800',
    '\udfff',
    'x\ud83d',
    '\ud83dx\ude00',
    '😀👩‍👩‍👧‍👦🏳️‍🌈',
    'e\u0301'.repeat(2000),
    'ǅǈﬀẞ İı',
    '日本語テキスト',
    '',
    ' ',
    '   \t  ',
    "' OR 1=1 --",
    '"; DROP TABLE tickets; --',
    '%s%s%s%n',
    '${jndi:ldap://x}',
    '<script>alert(1)</script>',
    '../../../../etc/passwd',
    '..',
    '.',
    '%00',
    '%ZZ',
    '__proto__',
    'constructor',
    'null',
    'undefined',
    'NaN',
    '1e309',
    '-0',
    '0x10',
    '9'.repeat(400),
    '*',
    '"',
    '\\',
    '\\u0000',
    'or',
    '-',
    '""',
    '"unterminated',
    'a or or b -',
  ),
  // long strings: around and past the 1 MiB limits (built lazily by fast-check's map)
  fc.constantFrom(64 * 1024, MIB - 1, MIB, MIB + 1).map((n) => 'A'.repeat(n)),
  fc.constantFrom(MIB / 2, MIB).map((n) => 'é'.repeat(n / 2)),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...CONTROLS.split(''), '\ud800', '\udc00', 'a', 'é', '😀'), maxLength: 30 }),
);

/** Values of every JSON type, for "wrong type" mutations. */
export const anyJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, -1e308, 1e308, 2 ** 53 + 1, '', 'x', '123', [], {}, [1, 'a'], { a: 1 }, [null], { '': null }),
  fc.jsonValue({ maxDepth: 2 }),
);

/** The JSON type name of a value, to pick a replacement of another type. */
export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Raw (already percent-encoded or deliberately malformed) path segments. */
export const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('%00', 'a%00b', '%ZZ', '%', '%%', '%E0%A4%A', '%C0%AE%C0%AE', '%FF%FE', '..', '.', '%2e%2e', '%2E%2E%2F%2E%2E', '%2F', '..%2F..%2Fetc%2Fpasswd', '%5C..%5C', ';', ';a=b', '%20', '%0D%0A', '%1B%5B31m', '%F0%9F%98%80', '%ED%A0%80', '~', '*', '@', '%40', 'a:b', '00000000', '0'.repeat(64), 'g'.repeat(40), '-1', '1e309', 'NaN', 'null', '__proto__', 'constructor'),
  fc.constantFrom(1000, 9000, 20_000, 70_000).map((n) => 'a'.repeat(n)),
  fc.string({ unit: 'binary', maxLength: 20 }).map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '?'))),
);

/** Raw query strings (without the leading `?`). */
export const hostileQuery: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('%ZZ', 'a=%ZZ', 'search=%00', 'q=%00', 'a=%', '%=%', '=', '&&&', '=&=', 'a', 'a&a&a', 'limit=1&limit=2', 'limit=-1', 'limit=1e400', 'limit=0x10', 'cursor=1.5', 'hours=0', 'hours=99999999999999999999', '__proto__=x', '__proto__[x]=1', 'constructor[prototype][x]=1', 'a[]=1&a[]=2', 'q=%22', 'q=%E0%A4%A', 'q=%ED%A0%80', 'since=%00', 'since=9999-99-99', 'namespace=..%2F..%2F', 'attribution=maybe', 'commits_only=%00'),
  fc.constantFrom(1000, 9000, 20_000, 70_000).map((n) => `q=${'b'.repeat(n)}`),
);

/** A JSON text `depth` levels deep, as arrays or objects. */
export function deepJson(depth: number, shape: 'array' | 'object'): string {
  return shape === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

export const deepJsonText: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(64, 511, 512, 513, 1000, 4_499, 4_500, 5_000, 20_000, 200_000), fc.constantFrom<'array' | 'object'>('array', 'object'))
  .map(([d, s]) => deepJson(d, s));

/** Texts that are not JSON, or not quite. */
export const malformedJson: fc.Arbitrary<string> = fc.constantFrom('', '{', '}', '{"a":', '{"a" 1}', "{'a':1}", '[1,]', '{"a":1,}', 'nul', 'undefined', 'NaN', '{"a":1}{"b":2}', '{"a":"\u0000"', '\u0000', '{"a":"\\uZZZZ"}', '{"a":"\\ud800"}', '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}', '"just a string"', '42', 'true', 'null', '[]', '\ufeff{}', ' '.repeat(1000), '{"a":1e999999}', '{"a":-0}', '{"a":' + '9'.repeat(10_000) + '}');

/** Bytes that are not UTF-8. */
export const badUtf8: fc.Arbitrary<Uint8Array> = fc.constantFrom(
  Uint8Array.from([0xff, 0xfe, 0x7b, 0x7d]),
  Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
  Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
  Uint8Array.from([0x00, 0x00, 0x00, 0x7b]),
);

/** Content types that are not the JSON the routes take (undefined: no header at all). */
export const badContentType: fc.Arbitrary<string | undefined> = fc.constantFrom(
  undefined,
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/octet-stream',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/jsonx',
  'application/json-patch+json',
  'application/vnd.api+json',
  'APPLICATION/JSON',
  'application/json;;;',
  '*/*',
  ';',
  'x'.repeat(5000),
);

/** Malformed or wrong Authorization header values (all legal header characters). */
export const badAuthorization: fc.Arbitrary<string> = fc.constantFrom(
  'Bearer',
  'Bearer ',
  'Bearer  ',
  'Bearer wrong-token-0123456789',
  'Bearer mkt_0000000000000000000000000000',
  'Bearer a b c',
  'Bearer %00',
  'Bearer %ZZ',
  'Bearer é',
  'Basic',
  'Basic %%%',
  'Basic ' + Buffer.from('nocolon').toString('base64'),
  'Basic ' + Buffer.from('x:wrong').toString('base64'),
  'Basic =',
  'Token abc',
  'bearer',
  'Digest username="x"',
  ',',
  'Bearer ' + 'x'.repeat(10_000),
  'Bearer ' + 'x'.repeat(20_000),
);

/** Malformed or wrong session cookies. */
export const badCookie: fc.Arbitrary<string> = fc.constantFrom(
  'mkt_session=%ZZ',
  'mkt_session=%',
  'mkt_session=%00',
  'mkt_session=',
  'mkt_session="',
  'mkt_session="unterminated',
  'mkt_session=%E0%A4%A',
  'mkt_session=a; mkt_session=b',
  'mkt_session',
  '=;;;',
  ';',
  'mkt_session=wrong-session-value',
  'mkt_session=' + 'a'.repeat(5000),
  '__proto__=x; constructor=y',
);
