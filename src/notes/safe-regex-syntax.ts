// The syntax half of the notes search's regular expressions (src/notes/safe-regex.ts): parses the
// supported subset of JavaScript's RegExp syntax (no `u` flag) into a tree, and refuses what a
// linear-time engine cannot run (backreferences, lookaround) with a message naming the construct.

/** A pattern the engine refuses: bad syntax or an unsupported construct (a 400 for the caller). */
export class RegexError extends Error {}

export const MAX_PATTERN_CHARS = 1000;
/** Largest count in `{m}`, `{m,}`, `{m,n}`. */
export const MAX_REPEAT = 100;

/** Character ranges as inclusive [lo, hi] pairs of UTF-16 code units, flattened. */
export type Ranges = number[];

export type Node =
  | { t: 'empty' }
  | { t: 'char'; c: number }
  | { t: 'any' } // `.`: anything but a line terminator
  | { t: 'class'; ranges: Ranges; neg: boolean }
  | { t: 'cat'; items: Node[] }
  | { t: 'alt'; alts: Node[] }
  | { t: 'rep'; body: Node; min: number; max: number; lazy: boolean } // max Infinity: unbounded
  | { t: 'assert'; k: 'bol' | 'eol' | 'wb' | 'nwb' };

export interface Parsed {
  node: Node;
  ignoreCase: boolean;
}

const DIGIT: Ranges = [0x30, 0x39];
const WORD: Ranges = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
// JavaScript's \s: WhiteSpace and LineTerminator.
const SPACE: Ranges = [0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff];

/** The complement of sorted, disjoint ranges within the code units. */
export function complement(r: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (let i = 0; i < r.length; i += 2) {
    if (r[i]! > next) out.push(next, r[i]! - 1);
    next = r[i + 1]! + 1;
  }
  if (next <= 0xffff) out.push(next, 0xffff);
  return out;
}

/** Sorted, merged ranges. */
export function normalize(r: Ranges): Ranges {
  const pairs: [number, number][] = [];
  for (let i = 0; i < r.length; i += 2) pairs.push([r[i]!, r[i + 1]!]);
  pairs.sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [lo, hi] of pairs) {
    const n = out.length;
    if (n && lo <= out[n - 1]! + 1) out[n - 1] = Math.max(out[n - 1]!, hi);
    else out.push(lo, hi);
  }
  return out;
}

const classEscape: Record<string, Ranges> = {
  d: DIGIT,
  D: complement(DIGIT),
  w: WORD,
  W: complement(WORD),
  s: SPACE,
  S: complement(SPACE),
};

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isHex = (s: string) => /^[0-9A-Fa-f]+$/.test(s);

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  fail(msg: string, at = this.i): never {
    throw new RegexError(`invalid regular expression: ${msg} at character ${at + 1}`);
  }

  parse(): Node {
    const n = this.alt();
    if (this.i < this.s.length) this.fail('unmatched )'); // alt() stops only at `)` or the end
    return n;
  }

  private alt(): Node {
    const alts = [this.cat()];
    while (this.s[this.i] === '|') {
      this.i++;
      alts.push(this.cat());
    }
    return alts.length === 1 ? alts[0]! : { t: 'alt', alts };
  }

  private cat(): Node {
    const items: Node[] = [];
    while (this.i < this.s.length && this.s[this.i] !== '|' && this.s[this.i] !== ')') {
      const at = this.i;
      const atom = this.atom();
      const q = this.quantifier();
      if (q) {
        if (atom.t === 'assert') this.fail('nothing to repeat (an anchor or \\b cannot be repeated)', at);
        items.push({ t: 'rep', body: atom, ...q });
        if (this.quantifierAhead()) this.fail('nothing to repeat (a quantifier follows a quantifier)');
      } else items.push(atom);
    }
    if (items.length === 0) return { t: 'empty' };
    return items.length === 1 ? items[0]! : { t: 'cat', items };
  }

  /** `{m}`, `{m,}`, `{m,n}` at the cursor, or undefined when the brace is a literal (as in JS). */
  private braces(): { min: number; max: number; end: number } | undefined {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i, this.i + 16));
    if (!m) return undefined;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
    return { min, max, end: this.i + m[0].length };
  }

  private quantifierAhead(): boolean {
    const c = this.s[this.i];
    return c === '*' || c === '+' || c === '?' || (c === '{' && this.braces() !== undefined);
  }

  private quantifier(): { min: number; max: number; lazy: boolean } | undefined {
    const c = this.s[this.i];
    let min: number;
    let max: number;
    if (c === '*') [min, max] = [0, Infinity];
    else if (c === '+') [min, max] = [1, Infinity];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{') {
      const b = this.braces();
      if (!b) return undefined;
      if (b.max < b.min) this.fail('numbers out of order in {} quantifier');
      if (b.min > MAX_REPEAT || (b.max !== Infinity && b.max > MAX_REPEAT)) {
        throw new RegexError(`repetition counts above ${MAX_REPEAT} ({m,n} with m or n over ${MAX_REPEAT}) are not supported`);
      }
      [min, max] = [b.min, b.max];
      this.i = b.end - 1;
    } else return undefined;
    this.i++;
    const lazy = this.s[this.i] === '?';
    if (lazy) this.i++;
    return { min, max, lazy };
  }

  private atom(): Node {
    const c = this.s[this.i]!;
    switch (c) {
      case '(':
        return this.group();
      case '[':
        return this.charClass();
      case '.':
        this.i++;
        return { t: 'any' };
      case '^':
        this.i++;
        return { t: 'assert', k: 'bol' };
      case '$':
        this.i++;
        return { t: 'assert', k: 'eol' };
      case '\\':
        return this.escape();
      case '*':
      case '+':
      case '?':
        return this.fail('nothing to repeat');
      case '{':
        if (this.braces()) this.fail('nothing to repeat');
        this.i++;
        return { t: 'char', c: 0x7b };
      default:
        this.i++;
        return { t: 'char', c: c.charCodeAt(0) };
    }
  }

  private group(): Node {
    const at = this.i;
    const rest = this.s.slice(this.i, this.i + 4);
    if (rest.startsWith('(?=') || rest.startsWith('(?!')) throw new RegexError(`lookahead (${rest.slice(1, 3)}…) is not supported`);
    if (rest.startsWith('(?<=') || rest.startsWith('(?<!')) throw new RegexError(`lookbehind (${rest.slice(1)}…) is not supported`);
    if (rest.startsWith('(?:')) this.i += 3;
    else if (rest.startsWith('(?<')) {
      const m = /^\(\?<([A-Za-z_$][A-Za-z0-9_$]*)>/.exec(this.s.slice(this.i, this.i + 200));
      if (!m) this.fail('invalid group name');
      this.i += m[0].length;
    } else if (rest.startsWith('(?i)')) {
      throw new RegexError('the flag (?i) is accepted only at the start of the pattern');
    } else if (rest.startsWith('(?')) {
      throw new RegexError(`the group ${rest.slice(0, 3)}… is not supported (supported: ( ), (?: ), (?<name> ), and (?i) at the start)`);
    } else this.i++;
    const body = this.alt();
    if (this.s[this.i] !== ')') this.fail('missing )', at);
    this.i++;
    // A group is quantifiable even when it holds only an anchor: `(^)*` is valid, `^*` is not.
    return body.t === 'assert' ? { t: 'cat', items: [body] } : body;
  }

  /** An escape outside a class. */
  private escape(): Node {
    const at = this.i;
    const c = this.s[this.i + 1];
    if (c === undefined) this.fail('\\ at end of pattern');
    if (c === 'b' || c === 'B') {
      this.i += 2;
      return { t: 'assert', k: c === 'b' ? 'wb' : 'nwb' };
    }
    if (c in classEscape) {
      this.i += 2;
      return { t: 'class', ranges: classEscape[c]!, neg: false };
    }
    if (c >= '1' && c <= '9') throw new RegexError(`backreferences (\\${c}) are not supported`);
    if (c === 'k' && this.s[this.i + 2] === '<') throw new RegexError('backreferences (\\k<name>) are not supported');
    const unit = this.escapeUnit(false);
    if (unit === undefined) {
      // `\c` not followed by a letter is a backslash and a `c`, as JavaScript reads it.
      this.i = at + 1;
      return { t: 'char', c: 0x5c };
    }
    return { t: 'char', c: unit };
  }

  /**
   * The code unit of a character escape at the cursor (`\n`, `\x41`, `\u0041`, `\cJ`, `\.`…),
   * moving past it; undefined for a lone `\c`. Shared by escapes in and out of classes.
   */
  private escapeUnit(inClass: boolean): number | undefined {
    const c = this.s[this.i + 1]!;
    const simple: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09, f: 0x0c, v: 0x0b };
    if (c in simple) {
      this.i += 2;
      return simple[c];
    }
    if (c === '0') {
      if (isDigit(this.s[this.i + 2])) throw new RegexError('octal escapes (\\0 followed by a digit) are not supported');
      this.i += 2;
      return 0;
    }
    if (c >= '1' && c <= '9') throw new RegexError(`backreferences and octal escapes (\\${c}) are not supported`);
    if (c === 'x' || c === 'u') {
      const len = c === 'x' ? 2 : 4;
      const hex = this.s.slice(this.i + 2, this.i + 2 + len);
      if (hex.length === len && isHex(hex)) {
        this.i += 2 + len;
        return parseInt(hex, 16);
      }
      this.i += 2; // as JavaScript reads it without the u flag: the letter itself
      return c.charCodeAt(0);
    }
    if (c === 'c') {
      const l = this.s[this.i + 2];
      if (l !== undefined && /[A-Za-z]/.test(l)) {
        this.i += 3;
        return l.charCodeAt(0) % 32;
      }
      return undefined;
    }
    if (c === 'p' || c === 'P') throw new RegexError(`Unicode property escapes (\\${c}{…}) are not supported`);
    if (inClass && c === 'b') {
      this.i += 2;
      return 0x08;
    }
    this.i += 2; // an identity escape: `\.`, `\[`, `\/`…
    return c.charCodeAt(0);
  }

  private charClass(): Node {
    const at = this.i;
    this.i++;
    const neg = this.s[this.i] === '^';
    if (neg) this.i++;
    const ranges: Ranges = [];
    // One member: a code unit, or the ranges of a class escape (which cannot bound a range).
    const member = (): number | Ranges => {
      const c = this.s[this.i];
      if (c === undefined) this.fail('missing ]', at);
      if (c !== '\\') {
        this.i++;
        return c.charCodeAt(0);
      }
      const e = this.s[this.i + 1];
      if (e === undefined) this.fail('\\ at end of pattern');
      if (e in classEscape) {
        this.i += 2;
        return classEscape[e]!;
      }
      if (e === '-') {
        this.i += 2;
        return 0x2d;
      }
      const u = this.escapeUnit(true);
      if (u === undefined) {
        this.i++; // a lone `\c`: the backslash; the `c` is read next
        return 0x5c;
      }
      return u;
    };
    while (this.s[this.i] !== ']') {
      const lo = member();
      if (this.s[this.i] === '-' && this.s[this.i + 1] !== ']' && this.s[this.i + 1] !== undefined) {
        this.i++;
        const hi = member();
        if (typeof lo === 'number' && typeof hi === 'number') {
          if (hi < lo) this.fail('range out of order in character class');
          ranges.push(lo, hi);
        } else {
          // `[\d-z]`: a class escape cannot bound a range; JavaScript reads the `-` as itself.
          for (const m of [lo, 0x2d, hi]) {
            if (typeof m === 'number') ranges.push(m, m);
            else ranges.push(...m);
          }
        }
      } else if (typeof lo === 'number') ranges.push(lo, lo);
      else ranges.push(...lo);
    }
    this.i++;
    return { t: 'class', ranges: normalize(ranges), neg };
  }
}

/** Parses a pattern; `(?i)` at its very start makes it case-insensitive. */
export function parsePattern(pattern: string): Parsed {
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new RegexError(`the regular expression is longer than ${MAX_PATTERN_CHARS} characters`);
  }
  const ignoreCase = pattern.startsWith('(?i)');
  const body = ignoreCase ? pattern.slice(4) : pattern;
  return { node: new Parser(body).parse(), ignoreCase };
}
