// Issue 31, "Conditions on an HTTP answer": the parser (what is a condition, what is wrong with a
// malformed one) and the evaluation against one answer (every condition must hold; the first
// that fails is named with the value it saw; a path never reaches outside the parsed body).
import { describe, expect, it } from 'vitest';
import { ConditionSyntaxError, evaluateConditions, globMatch, needsCertificate, parseCondition, parseGoDuration, type ConditionAnswer } from '../../../src/monitor/conditions.js';

const answer = (a: Partial<ConditionAnswer> = {}): ConditionAnswer => ({ status: 200, responseTimeMs: 120, body: '', ...a });
const check = (conds: string[], a: Partial<ConditionAnswer> = {}): string | undefined => evaluateConditions(conds.map(parseCondition), answer(a));

describe('parseCondition', () => {
  it('reads placeholder, path, operator and value', () => {
    expect(parseCondition('[STATUS] == 200')).toEqual({ text: '[STATUS] == 200', placeholder: 'STATUS', path: [], op: '==', value: { kind: 'literal', text: '200', quoted: false, number: 200 } });
    expect(parseCondition('  [BODY].data[0].items[12].name != "x y"  ')).toMatchObject({ placeholder: 'BODY', path: ['data', 0, 'items', 12, 'name'], op: '!=', value: { kind: 'literal', text: 'x y', quoted: true } });
    expect(parseCondition('[BODY][1] == a')).toMatchObject({ path: [1] });
    expect(parseCondition('[RESPONSE_TIME]<=500')).toMatchObject({ placeholder: 'RESPONSE_TIME', op: '<=', value: { number: 500 } });
    expect(parseCondition('[RESPONSE_TIME] < 1.5s')).toMatchObject({ value: { number: 1500 } });
    expect(parseCondition('[CERTIFICATE_EXPIRATION] > 48h30m')).toMatchObject({ value: { number: 48.5 * 3_600_000 } });
    expect(parseCondition('[BODY].status == pat(*ok*)')).toMatchObject({ value: { kind: 'pattern', glob: '*ok*' } });
    expect(parseCondition('[STATUS] == any(200, 201 ,204)')).toMatchObject({ value: { kind: 'any', options: ['200', '201', '204'] } });
  });

  it('placeholder names are case-insensitive, canonical in the text; paths keep their case', () => {
    const c = parseCondition('[body].Data.Status == UP');
    expect(c).toMatchObject({ text: '[BODY].Data.Status == UP', placeholder: 'BODY', path: ['Data', 'Status'] });
    expect(parseCondition('[Status] == 200').text).toBe('[STATUS] == 200');
  });

  it.each([
    ['[FOO] == 1', 'unknown placeholder [FOO]'],
    ['[STATUS]', 'missing operator'],
    ['[STATUS] 200', 'missing operator before "200"'],
    ['[STATUS] = 200', 'unknown operator "="'],
    ['[STATUS] ==', 'missing value after =='],
    ['[BODY].a == any(a, b', 'unterminated any('],
    ['[BODY].a == pat(*ok', 'unterminated pat('],
    ['[BODY].a == any()', 'any() needs at least one value'],
    ['[BODY].a == any(a,,b)', 'any() has an empty value'],
    ['[BODY].a < pat(1*)', 'pat() works only with == and !='],
    ['[BODY].a > abc', '> compares numbers, not abc'],
    ['[BODY].a >= "5"', '>= compares numbers'],
    ['[STATUS] == ok', '[STATUS] is a number, not ok'],
    ['[STATUS] == any(200, ok)', 'any() holds "ok"'],
    ['[RESPONSE_TIME] < soon', '[RESPONSE_TIME] is a number of milliseconds'],
    ['[CERTIFICATE_EXPIRATION] > 3 days', 'is compared with a duration like 72h'],
    ['[CERTIFICATE_EXPIRATION] == any(1h, 2h)', 'is compared with a duration'],
    ['[STATUS].code == 200', '[STATUS] takes no path'],
    ['[BODY].a..b == 1', 'empty key in the [BODY] path'],
    ['[BODY].a[x] == 1', 'must be a number like [0], not [x]'],
    ['[BODY].a[*] == 1', 'must be a number like [0], not [*]'],
    ['[BODY].a[1 == 1', 'unterminated [ in the [BODY] path'],
    ['[BODY == 1', 'unterminated placeholder "[BODY == 1" (missing ])'],
    ['[BODY', 'unterminated placeholder'],
    ['STATUS == 200', 'must start with a placeholder'],
    ['len([BODY].a) == 1', 'must start with a placeholder'],
    ['', 'the condition is empty'],
    ['[BODY].a == "unterminated', 'unterminated string'],
    ['[BODY].a == "bad\\q"', 'is not a valid "string"'],
  ])('%j is refused: %s', (text, message) => {
    let err: unknown;
    try {
      parseCondition(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConditionSyntaxError);
    expect((err as Error).message).toContain(message);
  });

  it('needsCertificate only when a condition reads [CERTIFICATE_EXPIRATION]', () => {
    expect(needsCertificate(['[STATUS] == 200', '[BODY] == pat(*CERTIFICATE_EXPIRATION*)'].map(parseCondition))).toBe(false);
    expect(needsCertificate(['[STATUS] == 200', '[certificate_expiration] > 72h'].map(parseCondition))).toBe(true);
  });
});

describe('parseGoDuration and globMatch', () => {
  it('Go-style durations, plus d for 24 hours', () => {
    expect(parseGoDuration('72h')).toBe(72 * 3_600_000);
    expect(parseGoDuration('1h30m15s')).toBe(5_415_000);
    expect(parseGoDuration('250ms')).toBe(250);
    expect(parseGoDuration('1d12h')).toBe(36 * 3_600_000);
    expect(parseGoDuration('-2h')).toBe(-7_200_000);
    for (const bad of ['', '72', 'h', '1x', '1h 2m', '-', `${'9'.repeat(400)}h`]) expect(parseGoDuration(bad)).toBeUndefined();
  });

  it('* any run, ? one character, the whole value', () => {
    expect(globMatch('*ok*', 'all ok here')).toBe(true);
    expect(globMatch('ok', 'ok!')).toBe(false);
    expect(globMatch('v?.*', 'v2.10')).toBe(true);
    expect(globMatch('a*b*c', 'aXbYc')).toBe(true);
    expect(globMatch('a*b*c', 'aXbY')).toBe(false);
    expect(globMatch('', '')).toBe(true);
    // A hostile pattern over a long value stays fast: no regex backtracking.
    expect(globMatch('*a*a*a*a*a*a*a*b', 'a'.repeat(20_000))).toBe(false);
  });
});

describe('evaluateConditions', () => {
  it('all hold: undefined; the first failing one is named with the value it saw', () => {
    const body = JSON.stringify({ status: 'starting', checks: [{ name: 'db', ms: 12 }], version: '1.10', up: true, none: null });
    expect(check(['[STATUS] == 200', '[BODY].checks[0].name == db', '[BODY].checks[0].ms < 50', '[BODY].up == true', '[BODY].none == null'], { body })).toBeUndefined();
    expect(check(['[STATUS] == 200', '[BODY].status == ok', '[STATUS] == 201'], { body })).toBe('condition failed: [BODY].status == ok (was "starting")');
    expect(check(['[STATUS] == 200'], { status: 503 })).toBe('condition failed: [STATUS] == 200 (was 503)');
    expect(check(['[RESPONSE_TIME] < 100'], { responseTimeMs: 250 })).toBe('condition failed: [RESPONSE_TIME] < 100 (was 250)');
    expect(check(['[BODY].checks == x'], { body })).toBe('condition failed: [BODY].checks == x (was [{"name":"db","ms":12}])');
  });

  it('numbers compare numerically when the answer holds a number; strings as strings', () => {
    const body = JSON.stringify({ n: 5, s: '5', v: '1.10', free: '1024' });
    expect(check(['[BODY].n == 5.0', '[BODY].n == 5', '[BODY].s == 5', '[BODY].v == 1.10', '[BODY].v != 1.1'], { body })).toBeUndefined();
    expect(check(['[BODY].s == 5.0'], { body })).toBe('condition failed: [BODY].s == 5.0 (was "5")');
    expect(check(['[BODY].free > 1000', '[BODY].n >= 5', '[BODY].n <= 5', '[BODY].n > 4.5'], { body })).toBeUndefined();
    // A "quoted" value is compared as text: 5 reads "5", not "5.0".
    expect(check(['[BODY].n == "5"'], { body })).toBeUndefined();
    expect(check(['[BODY].n == "5.0"'], { body })).toBe('condition failed: [BODY].n == "5.0" (was 5)');
  });

  it('< and friends on a value that is not a number fail (no crash)', () => {
    expect(check(['[BODY].v > 1'], { body: '{"v":"high"}' })).toBe('condition failed: [BODY].v > 1 (was "high")');
    expect(check(['[BODY].v > 1'], { body: '{"v":{"a":1}}' })).toBe('condition failed: [BODY].v > 1 (was {"a":1})');
  });

  it('pat() and any(), with == and !=', () => {
    const body = '{"status":"all systems go","region":"eu-west-1"}';
    expect(check(['[BODY].status == pat(*go)', '[BODY].region == any(us-east-1, eu-west-1)', '[BODY].region != pat(us-*)', '[STATUS] == pat(2??)', '[STATUS] == any(200, 204)'], { body })).toBeUndefined();
    expect(check(['[BODY].region == any(us-east-1, us-west-2)'], { body })).toBe('condition failed: [BODY].region == any(us-east-1, us-west-2) (was "eu-west-1")');
    expect(check(['[STATUS] != any(500, 502)'], { status: 502 })).toBe('condition failed: [STATUS] != any(500, 502) (was 502)');
  });

  it('[BODY] alone is the whole body as text (trimmed), JSON or not', () => {
    expect(check(['[BODY] == pong', '[BODY] == pat(p*g)'], { body: 'pong\n' })).toBeUndefined();
    expect(check(['[BODY] == pong'], { body: 'ping' })).toBe('condition failed: [BODY] == pong (was "ping")');
    expect(check(['[BODY] == pat(*"ok"*)'], { body: '{"status":"ok"}' })).toBeUndefined();
    expect(check(['[BODY] == ""'], { body: '  ' })).toBeUndefined();
  });

  it('a missing path, a body that is not JSON, or one that was not read fail naming why', () => {
    expect(check(['[BODY].status == ok'], { body: '{}' })).toBe('condition failed: [BODY].status == ok (was missing)');
    expect(check(['[BODY].status != ok'], { body: '{}' })).toBe('condition failed: [BODY].status != ok (was missing)');
    expect(check(['[BODY].a[3] == 1'], { body: '{"a":[1]}' })).toBe('condition failed: [BODY].a[3] == 1 (was missing)');
    expect(check(['[BODY].status == ok'], { body: 'status: ok' })).toBe('condition failed: [BODY].status == ok (was missing: the body is not JSON)');
    const deep = `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    expect(check(['[BODY].a == x'], { body: deep })).toBe('condition failed: [BODY].a == x (was missing: the body nests too deep)');
    expect(check(['[BODY] == ok'], { body: '', bodyUnread: 'larger than 262144 bytes' })).toBe('condition failed: [BODY] == ok (was not read: larger than 262144 bytes)');
  });

  it('a path cannot reach outside the parsed body: prototype names are missing, own keys of those names are found', () => {
    const body = '{"status":"ok","list":[1,2],"name":"abc"}';
    for (const path of ['constructor.name', 'constructor', '__proto__', 'toString', 'hasOwnProperty', 'list.length', 'name.length', 'list.constructor', 'status.constructor.name', '__proto__.constructor']) {
      expect(check([`[BODY].${path} == pat(*)`], { body })).toBe(`condition failed: [BODY].${path} == pat(*) (was missing)`);
      expect(check([`[BODY].${path} != x`], { body })).toBe(`condition failed: [BODY].${path} != x (was missing)`);
    }
    expect(check(['[BODY].__proto__ == 1', '[BODY].constructor.name == mine'], { body: '{"__proto__":1,"constructor":{"name":"mine"}}' })).toBeUndefined();
  });

  it('[CERTIFICATE_EXPIRATION] compares the time left with a duration; unknown fails; shown as a duration', () => {
    const left = 50 * 3_600_000 + 61_000;
    expect(check(['[CERTIFICATE_EXPIRATION] > 48h', '[CERTIFICATE_EXPIRATION] < 51h'], { certificateExpiresInMs: left })).toBeUndefined();
    expect(check(['[CERTIFICATE_EXPIRATION] > 72h'], { certificateExpiresInMs: left })).toBe('condition failed: [CERTIFICATE_EXPIRATION] > 72h (was 50h1m1s)');
    expect(check(['[CERTIFICATE_EXPIRATION] > 48h'], { certificateExpiresInMs: 0 })).toBe('condition failed: [CERTIFICATE_EXPIRATION] > 48h (was 0s)');
    expect(check(['[CERTIFICATE_EXPIRATION] > 0s'], { certificateExpiresInMs: -3_600_000 })).toBe('condition failed: [CERTIFICATE_EXPIRATION] > 0s (was -1h0m0s)');
    expect(check(['[CERTIFICATE_EXPIRATION] > 48h'], {})).toBe('condition failed: [CERTIFICATE_EXPIRATION] > 48h (was unknown)');
  });

  it('a long value is cut in the message', () => {
    const msg = check(['[BODY] == x'], { body: 'y'.repeat(5000) })!;
    expect(msg.length).toBeLessThan(200);
    expect(msg).toMatch(/\(was "y+…"\)$/);
  });
});
