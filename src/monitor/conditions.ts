// Conditions on an HTTP answer (a subset of Gatus' language): `[PLACEHOLDER] OP VALUE`, parsed
// once when the configuration is read, evaluated against each answer. No eval: a small parser
// and a path walker over the parsed JSON body only.
import { MAX_ANSWER_JSON_DEPTH, jsonDepthExceeds } from '../util/json-depth.js';

/** What a condition can look at: one HTTP answer. */
export interface ConditionAnswer {
  status: number;
  responseTimeMs: number;
  /** The body as text (possibly cut at the check's body limit). */
  body: string;
  /** Why the body was not read (too large, another origin); [BODY] conditions then fail naming it. */
  bodyUnread?: string;
  /** Milliseconds until the server certificate expires; undefined when not https or unknown. */
  certificateExpiresInMs?: number;
}

export type Placeholder = 'STATUS' | 'RESPONSE_TIME' | 'BODY' | 'CERTIFICATE_EXPIRATION';
export type Operator = '==' | '!=' | '<' | '<=' | '>' | '>=';

/** A step of a [BODY] path: a key (`.name`) or an array index (`[0]`). */
export type PathStep = string | number;

/** The right-hand side: a value, `pat(glob)` or `any(a, b, ...)`. */
export type ConditionValue =
  /** `number` is set when the text reads as a number (or, for the time placeholders, a duration in ms). */
  | { kind: 'literal'; text: string; quoted: boolean; number?: number }
  | { kind: 'pattern'; glob: string }
  | { kind: 'any'; options: string[] };

/** A parsed condition; plain data (the engine compares configurations as JSON). */
export interface Condition {
  /** The condition as written (trimmed, the placeholder's name upper-cased), for error messages. */
  text: string;
  placeholder: Placeholder;
  /** Into the JSON body; empty for every placeholder but [BODY]. */
  path: PathStep[];
  op: Operator;
  value: ConditionValue;
}

export class ConditionSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConditionSyntaxError';
  }
}

const PLACEHOLDERS: readonly Placeholder[] = ['STATUS', 'RESPONSE_TIME', 'BODY', 'CERTIFICATE_EXPIRATION'];
/** Longest first, so `<=` is not read as `<` followed by `=`. */
const OPERATORS: readonly Operator[] = ['==', '!=', '<=', '>=', '<', '>'];
const ORDERING = new Set<Operator>(['<', '<=', '>', '>=']);
/** Characters that end a key in a [BODY] path (besides whitespace). */
const KEY_END = new Set(['.', '[', ']', '=', '!', '<', '>']);
const NUMBER = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;
const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/y;

/** A Go-style duration (`72h`, `48h30m`, `1.5s`, `500ms`, and `d` for 24h) in ms; undefined when it is not one. */
export function parseGoDuration(s: string): number | undefined {
  let i = 0;
  let sign = 1;
  if (s[0] === '-' || s[0] === '+') {
    sign = s[0] === '-' ? -1 : 1;
    i = 1;
  }
  if (i >= s.length) return undefined;
  let ms = 0;
  while (i < s.length) {
    DURATION_PART.lastIndex = i;
    const m = DURATION_PART.exec(s);
    if (!m) return undefined;
    ms += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    i = DURATION_PART.lastIndex;
  }
  return Number.isFinite(ms) ? sign * ms : undefined;
}

/** A number as written in a condition or a JSON string; undefined when `s` is not one. */
function numberOf(s: string): number | undefined {
  if (!NUMBER.test(s)) return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

function isTime(p: Placeholder): boolean {
  return p === 'RESPONSE_TIME' || p === 'CERTIFICATE_EXPIRATION';
}

/** What a literal on the right stands for as a number: a number, or for the time placeholders also a duration. */
function literalNumber(p: Placeholder, text: string): number | undefined {
  return numberOf(text) ?? (isTime(p) ? parseGoDuration(text) : undefined);
}

function fail(message: string): never {
  throw new ConditionSyntaxError(message);
}

/** Reads `.key` and `[n]` steps from `s` at `i`; returns the steps and where they end. */
function readPath(s: string, i: number): { path: PathStep[]; end: number } {
  const path: PathStep[] = [];
  while (i < s.length && (s[i] === '.' || s[i] === '[')) {
    if (s[i] === '.') {
      let j = i + 1;
      while (j < s.length && !KEY_END.has(s[j]!) && !/\s/.test(s[j]!)) j++;
      if (j === i + 1) fail(`empty key in the [BODY] path at "${s.slice(0, i + 1)}"`);
      path.push(s.slice(i + 1, j));
      i = j;
    } else {
      const close = s.indexOf(']', i);
      if (close < 0) fail(`unterminated [ in the [BODY] path at "${s.slice(0, i + 1)}"`);
      const inner = s.slice(i + 1, close);
      if (!/^\d+$/.test(inner)) fail(`an index in the [BODY] path must be a number like [0], not [${inner}]`);
      const n = Number(inner);
      if (!Number.isSafeInteger(n)) fail(`the index [${inner}] in the [BODY] path is too large`);
      path.push(n);
      i = close + 1;
    }
  }
  return { path, end: i };
}

/** The value after the operator: `pat(...)`, `any(...)`, a "JSON string" or the text as written. */
function readValue(p: Placeholder, op: Operator, raw: string): ConditionValue {
  for (const fn of ['pat', 'any'] as const) {
    if (!raw.startsWith(`${fn}(`)) continue;
    if (!raw.endsWith(')')) fail(`unterminated ${fn}( (it must end with ")")`);
    if (op !== '==' && op !== '!=') fail(`${fn}() works only with == and !=, not ${op}`);
    if (p === 'CERTIFICATE_EXPIRATION') fail(`[${p}] is compared with a duration like 72h, not ${fn}()`);
    const inner = raw.slice(fn.length + 1, -1);
    if (fn === 'pat') return { kind: 'pattern', glob: inner.trim() };
    const options = inner.split(',').map((o) => o.trim());
    if (options.some((o) => o === '')) fail(inner.trim() === '' ? 'any() needs at least one value' : `any() has an empty value: "${raw}"`);
    if (p === 'STATUS' || p === 'RESPONSE_TIME') {
      const bad = options.find((o) => literalNumber(p, o) === undefined);
      if (bad !== undefined) fail(`[${p}] is a number: any() holds "${bad}"`);
    }
    return { kind: 'any', options };
  }
  let text = raw;
  let quoted = false;
  if (raw.startsWith('"')) {
    if (raw.length < 2 || !raw.endsWith('"')) fail(`unterminated string ${raw}`);
    try {
      text = JSON.parse(raw) as string;
    } catch {
      fail(`${raw} is not a valid "string" (write it as in JSON)`);
    }
    quoted = true;
  }
  const number = quoted ? undefined : literalNumber(p, text);
  if (number === undefined) {
    if (p === 'CERTIFICATE_EXPIRATION') fail(`[${p}] is compared with a duration like 72h or 48h30m, not ${raw}`);
    if (p === 'STATUS' || p === 'RESPONSE_TIME') fail(`[${p}] is a number${p === 'RESPONSE_TIME' ? ' of milliseconds (or a duration like 2s)' : ''}, not ${raw}`);
    if (ORDERING.has(op)) fail(`${op} compares numbers, not ${raw}`);
  }
  return number === undefined ? { kind: 'literal', text, quoted } : { kind: 'literal', text, quoted, number };
}

/** Parses one condition; throws ConditionSyntaxError saying what is wrong. */
export function parseCondition(text: string): Condition {
  if (typeof text !== 'string') fail('a condition must be a string like "[STATUS] == 200"');
  const s = text.trim();
  if (s === '') fail('the condition is empty (write it like "[STATUS] == 200")');
  if (s[0] !== '[') fail(`it must start with a placeholder ([STATUS], [RESPONSE_TIME], [BODY] or [CERTIFICATE_EXPIRATION]), not "${s.slice(0, 20)}"`);
  const close = s.indexOf(']');
  if (close < 0) fail(`unterminated placeholder "${s.slice(0, 30)}" (missing ])`);
  const name = s.slice(1, close);
  const placeholder = PLACEHOLDERS.find((p) => p === name.toUpperCase());
  if (!placeholder) fail(`unknown placeholder [${name}] (known: [STATUS], [RESPONSE_TIME], [BODY], [CERTIFICATE_EXPIRATION])`);
  let i = close + 1;
  let path: PathStep[] = [];
  if (s[i] === '.' || s[i] === '[') {
    if (placeholder !== 'BODY') fail(`[${placeholder}] takes no path (only [BODY] does, like [BODY].status)`);
    ({ path, end: i } = readPath(s, i));
  }
  while (i < s.length && /\s/.test(s[i]!)) i++;
  if (i >= s.length) fail(`missing operator after [${placeholder}] (one of == != < <= > >=)`);
  const op = OPERATORS.find((o) => s.startsWith(o, i));
  if (!op) {
    const seen = s.slice(i).split(/\s/)[0]!;
    fail(`${/^[=!<>]/.test(seen) ? 'unknown operator' : 'missing operator before'} "${seen.slice(0, 20)}" (one of == != < <= > >=)`);
  }
  const raw = s.slice(i + op.length).trim();
  if (raw === '') fail(`missing value after ${op}`);
  const value = readValue(placeholder, op, raw);
  return { text: `[${placeholder}]${s.slice(close + 1)}`, placeholder, path, op, value };
}

/** Whether any condition reads [CERTIFICATE_EXPIRATION] (the check then reads the certificate). */
export function needsCertificate(conditions: readonly Condition[]): boolean {
  return conditions.some((c) => c.placeholder === 'CERTIFICATE_EXPIRATION');
}

/** What a placeholder resolved to: a value from the answer, or why there is none. */
type Resolved = { found: true; value: unknown } | { found: false; why: string };

/** Walks `path` through own properties only: nothing on a prototype (`constructor`, `__proto__`, `toString`) is reached. */
function walk(root: unknown, path: readonly PathStep[]): Resolved {
  let cur = root;
  for (const step of path) {
    if (typeof step === 'number') {
      if (!Array.isArray(cur) || step >= cur.length) return { found: false, why: 'missing' };
      cur = cur[step] as unknown;
    } else {
      if (cur === null || typeof cur !== 'object' || Array.isArray(cur) || !Object.hasOwn(cur, step)) return { found: false, why: 'missing' };
      cur = (cur as Record<string, unknown>)[step];
    }
  }
  return { found: true, value: cur };
}

/** Parses the body once per answer (and only when a path needs it). */
class BodyView {
  private parsed: Resolved | undefined;
  constructor(private readonly answer: ConditionAnswer) {}
  json(): Resolved {
    if (this.parsed) return this.parsed;
    // A value nested this deep parses, but showing it (JSON.stringify) would overflow the stack.
    if (jsonDepthExceeds(this.answer.body, MAX_ANSWER_JSON_DEPTH)) return (this.parsed = { found: false, why: 'missing: the body nests too deep' });
    try {
      this.parsed = { found: true, value: JSON.parse(this.answer.body) as unknown };
    } catch {
      this.parsed = { found: false, why: 'missing: the body is not JSON' };
    }
    return this.parsed;
  }
}

function resolve(c: Condition, answer: ConditionAnswer, body: BodyView): Resolved {
  switch (c.placeholder) {
    case 'STATUS':
      return { found: true, value: answer.status };
    case 'RESPONSE_TIME':
      return { found: true, value: answer.responseTimeMs };
    case 'CERTIFICATE_EXPIRATION':
      return answer.certificateExpiresInMs === undefined ? { found: false, why: 'unknown' } : { found: true, value: answer.certificateExpiresInMs };
    case 'BODY': {
      if (answer.bodyUnread !== undefined) return { found: false, why: `not read: ${answer.bodyUnread}` };
      if (c.path.length === 0) return { found: true, value: answer.body.trim() };
      const root = body.json();
      return root.found ? walk(root.value, c.path) : root;
    }
  }
}

/** The value as compared by == and pat(): a string as is, anything else as JSON. */
function asText(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
}

/** The value as a number for < and friends: a JSON number, or a string that reads as one. */
function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  return typeof v === 'string' ? numberOf(v.trim()) : undefined;
}

/** Numbers equal numerically when the answer's value is a number; everything else as text. */
function equals(v: unknown, text: string, number: number | undefined): boolean {
  if (typeof v === 'number' && number !== undefined) return v === number;
  return asText(v) === text;
}

/** `*` any run of characters, `?` one; the whole value must match. Linear backtracking to the last `*`, no regex. */
export function globMatch(glob: string, s: string): boolean {
  const g = Array.from(glob);
  const t = Array.from(s);
  let gi = 0;
  let ti = 0;
  let star = -1;
  let mark = 0;
  while (ti < t.length) {
    if (gi < g.length && (g[gi] === '?' || (g[gi] !== '*' && g[gi] === t[ti]))) {
      gi++;
      ti++;
    } else if (gi < g.length && g[gi] === '*') {
      star = gi++;
      mark = ti;
    } else if (star >= 0) {
      gi = star + 1;
      ti = ++mark;
    } else return false;
  }
  while (gi < g.length && g[gi] === '*') gi++;
  return gi === g.length;
}

function holds(c: Condition, v: unknown): boolean {
  const val = c.value;
  if (ORDERING.has(c.op)) {
    const a = asNumber(v);
    const b = val.kind === 'literal' ? val.number : undefined;
    if (a === undefined || b === undefined) return false;
    return c.op === '<' ? a < b : c.op === '<=' ? a <= b : c.op === '>' ? a > b : a >= b;
  }
  let eq: boolean;
  if (val.kind === 'pattern') eq = globMatch(val.glob, asText(v));
  else if (val.kind === 'any') eq = val.options.some((o) => equals(v, o, literalNumber(c.placeholder, o)));
  else eq = equals(v, val.text, val.quoted ? undefined : val.number);
  return c.op === '==' ? eq : !eq;
}

const SHOWN_MAX = 100;

/** A Go-like duration for a certificate's time left: `71h59m58s`, `-3h0m0s`, `0s`. */
function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  let s = Math.floor(Math.abs(ms) / 1000);
  if (s === 0) return '0s';
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return sign + (h ? `${h}h${m}m${s}s` : m ? `${m}m${s}s` : `${s}s`);
}

/** The actual value in a failure message: strings JSON-quoted, numbers bare, long values cut. */
function shown(c: Condition, r: Resolved): string {
  if (!r.found) return r.why;
  if (c.placeholder === 'CERTIFICATE_EXPIRATION' && typeof r.value === 'number') return formatDuration(r.value);
  const v = r.value;
  if (typeof v === 'string') return JSON.stringify(v.length > SHOWN_MAX ? `${v.slice(0, SHOWN_MAX)}…` : v);
  const t = asText(v);
  return t.length > SHOWN_MAX ? `${t.slice(0, SHOWN_MAX)}…` : t;
}

/** The first failing condition's message (`condition failed: ... (was ...)`), or undefined when all hold. */
export function evaluateConditions(conditions: readonly Condition[], answer: ConditionAnswer): string | undefined {
  const body = new BodyView(answer);
  for (const c of conditions) {
    const r = resolve(c, answer, body);
    if (r.found && holds(c, r.value)) continue;
    return `condition failed: ${c.text} (was ${shown(c, r)})`;
  }
  return undefined;
}
