// The notes search's regular expressions: a linear-time engine (a Pike VM over a compiled NFA,
// as in RE2) for a subset of JavaScript's syntax, so no pattern can backtrack catastrophically.
// Work is counted in VM steps against a per-request budget: deterministic, unlike a timer.
import { type Node, type Ranges, parsePattern, RegexError } from './safe-regex-syntax.js';

export { RegexError } from './safe-regex-syntax.js';

/** VM steps one search request may spend over all its lines. */
export const REGEX_STEP_BUDGET = 50_000_000;
export const MAX_INSTRUCTIONS = 10_000;
/** Literals handed to the index at most (the longest are the most selective). */
const MAX_REQUIRED_LITERALS = 8;
const MIN_LITERAL_CHARS = 3;
/** Nesting of repetitions whose body can match empty (each level multiplies the VM's states). */
export const MAX_CHECKED_DEPTH = 16;

export class RegexBudgetError extends Error {}

/** The steps a request may still spend; each match charges it as it runs. */
export class StepBudget {
  spent = 0;
  constructor(readonly steps: number) {}

  spend(n: number): void {
    this.spent += n;
    if (this.spent > this.steps) {
      throw new RegexBudgetError(`the regular expression ran over its budget of ${this.steps} steps; narrow the search with a literal or a filter`);
    }
  }
}

export interface SafeRegex {
  /** Whether the line (no line terminators expected) holds a match. */
  test(line: string, budget: StepBudget): boolean;
  /** The leftmost match as [start, end) in UTF-16 units, with JavaScript's priorities (greedy, lazy). */
  firstMatch(line: string, budget: StepBudget): [number, number] | null;
  /** Substrings (case-sensitive unless (?i)) every match contains: candidates for the literal index. */
  requiredLiterals: string[];
}

const enum Op {
  Char,
  Any,
  Class,
  Split, // a: preferred branch, b: the other
  Jmp,
  Assert,
  Match,
  Enter, // an optional iteration starts (a: its nesting depth)
  Check, // it ends: it fails if it consumed nothing (a: its nesting depth)
}
const enum Kind {
  Bol,
  Eol,
  WordBoundary,
  NotWordBoundary,
}

interface Program {
  op: Uint8Array;
  a: Int32Array;
  b: Int32Array;
  classes: { ranges: Ranges; neg: boolean }[];
  ignoreCase: boolean;
  /** Nesting levels of checked iterations (0 when none). */
  depths: number;
}

// ---- case folding, as JavaScript's RegExp does it without the u flag (Canonicalize) ----

let canon: Uint16Array | undefined;
let equivalents: Map<number, number[]> | undefined;

function fold(): { canon: Uint16Array; equivalents: Map<number, number[]> } {
  if (!canon || !equivalents) {
    const k = new Uint16Array(0x10000);
    for (let c = 0; c <= 0xffff; c++) {
      const u = String.fromCharCode(c).toUpperCase();
      const cu = u.length === 1 ? u.charCodeAt(0) : c;
      k[c] = c >= 128 && cu < 128 ? c : cu;
    }
    // Units that fold alike: a class matches a unit when it holds any of them.
    const groups = new Map<number, number[]>();
    for (let c = 0; c <= 0xffff; c++) {
      const g = groups.get(k[c]!);
      if (g) g.push(c);
      else groups.set(k[c]!, [c]);
    }
    equivalents = new Map();
    for (const g of groups.values()) if (g.length > 1) for (const c of g) equivalents.set(c, g);
    canon = k;
  }
  return { canon, equivalents };
}

function inRanges(r: Ranges, c: number): boolean {
  for (let i = 0; i < r.length; i += 2) {
    if (c < r[i]!) return false;
    if (c <= r[i + 1]!) return true;
  }
  return false;
}

// ---- compilation ----

/** Whether the node can match the empty string. */
function nullable(n: Node): boolean {
  switch (n.t) {
    case 'empty':
    case 'assert':
      return true;
    case 'cat':
      return n.items.every(nullable);
    case 'alt':
      return n.alts.some(nullable);
    case 'rep':
      return n.min === 0 || nullable(n.body);
    default:
      return false;
  }
}

/** Instructions a node compiles to (Infinity when absurdly many), to refuse before building. */
function size(n: Node): number {
  switch (n.t) {
    case 'empty':
      return 0;
    case 'cat':
      return n.items.reduce((s, i) => s + size(i), 0);
    case 'alt':
      return n.alts.reduce((s, a) => s + size(a), 0) + 2 * (n.alts.length - 1);
    case 'rep': {
      const b = size(n.body);
      const checked = b + (nullable(n.body) ? 2 : 0);
      if (n.max === Infinity) return n.min * b + checked + 2;
      return n.min * b + (n.max - n.min) * (checked + 1);
    }
    default:
      return 1;
  }
}

class Compiler {
  op: number[] = [];
  a: number[] = [];
  b: number[] = [];
  classes: { ranges: Ranges; neg: boolean }[] = [];
  /** Checked iterations around the code being emitted, and the most seen. */
  private depth = 0;
  depths = 0;

  emit(op: Op, a = 0, b = 0): number {
    this.op.push(op);
    this.a.push(a);
    this.b.push(b);
    return this.op.length - 1;
  }

  /** A split whose preferred branch is `first` unless lazy. */
  patch(pc: number, next: number, other: number, lazy: boolean): void {
    this.a[pc] = lazy ? other : next;
    this.b[pc] = lazy ? next : other;
  }

  node(n: Node): void {
    switch (n.t) {
      case 'empty':
        return;
      case 'char':
        this.emit(Op.Char, n.c);
        return;
      case 'any':
        this.emit(Op.Any);
        return;
      case 'class':
        this.classes.push({ ranges: n.ranges, neg: n.neg });
        this.emit(Op.Class, this.classes.length - 1);
        return;
      case 'assert':
        this.emit(Op.Assert, { bol: Kind.Bol, eol: Kind.Eol, wb: Kind.WordBoundary, nwb: Kind.NotWordBoundary }[n.k]);
        return;
      case 'cat':
        for (const i of n.items) this.node(i);
        return;
      case 'alt': {
        // split L1, next; L1: alt0; jmp end; next: split L2, …; the last alternative falls through.
        const jumps: number[] = [];
        n.alts.forEach((alt, k) => {
          if (k < n.alts.length - 1) {
            const split = this.emit(Op.Split);
            this.node(alt);
            jumps.push(this.emit(Op.Jmp));
            this.patch(split, split + 1, this.op.length, false);
          } else this.node(alt);
        });
        for (const j of jumps) this.a[j] = this.op.length;
        return;
      }
      case 'rep':
        this.rep(n.body, n.min, n.max, n.lazy);
        return;
    }
  }

  /**
   * One iteration past the minimum. JavaScript fails such an iteration when it matches the empty
   * string (RepeatMatcher's check), which changes which match wins (`(|a)?` on "a" is "a"); a body
   * that cannot match empty needs no check.
   */
  private optional(body: Node): void {
    if (!nullable(body)) {
      this.node(body);
      return;
    }
    const d = this.depth++;
    this.depths = Math.max(this.depths, this.depth);
    this.emit(Op.Enter, d);
    this.node(body);
    this.emit(Op.Check, d);
    this.depth--;
  }

  private rep(body: Node, min: number, max: number, lazy: boolean): void {
    for (let k = 0; k < min; k++) this.node(body);
    if (max === Infinity) {
      // L: split body, out; body; jmp L
      const split = this.emit(Op.Split);
      this.optional(body);
      this.emit(Op.Jmp, split);
      this.patch(split, split + 1, this.op.length, lazy);
      return;
    }
    // Optional copies nest: (x(x)?)? as split c1, out; c1: x; split c2, out; c2: x; out.
    const splits: number[] = [];
    for (let k = min; k < max; k++) {
      splits.push(this.emit(Op.Split));
      this.optional(body);
    }
    for (const s of splits) this.patch(s, s + 1, this.op.length, lazy);
  }
}

function compile(node: Node, ignoreCase: boolean): Program {
  const n = size(node) + 1;
  if (n > MAX_INSTRUCTIONS) {
    throw new RegexError(`the regular expression compiles to more than ${MAX_INSTRUCTIONS} instructions (${Number.isFinite(n) ? n : 'too many'}); use smaller repetition counts`);
  }
  const c = new Compiler();
  c.node(node);
  c.emit(Op.Match);
  const a = Int32Array.from(c.a);
  if (ignoreCase) {
    // Literal units are stored folded; the VM folds each unit of the line before comparing.
    const k = fold().canon;
    c.op.forEach((op, pc) => {
      if (op === Op.Char) a[pc] = k[a[pc]!]!;
    });
  }
  if (c.depths > MAX_CHECKED_DEPTH) {
    throw new RegexError(`repetitions of groups that can match empty nest deeper than ${MAX_CHECKED_DEPTH}`);
  }
  return { op: Uint8Array.from(c.op), a, b: Int32Array.from(c.b), classes: c.classes, ignoreCase, depths: c.depths };
}

// ---- literals every match contains ----

interface Lits {
  /** The exact text the node always matches, or null when it varies. */
  exact: string | null;
  /** Substrings any match contains (already long enough). */
  required: string[];
}

/** Adds the parts of a run long enough to narrow candidates. */
function keep(run: string, ignoreCase: boolean, into: string[]): void {
  // Under (?i) only ASCII folds the same way here and in the index; other characters split runs.
  for (const part of ignoreCase ? run.split(/[^\x20-\x7e]+/) : [run]) if (part.length >= MIN_LITERAL_CHARS) into.push(part);
}

function literals(n: Node, ignoreCase: boolean): Lits {
  switch (n.t) {
    case 'empty':
    case 'assert': // zero width: the text on both sides stays contiguous
      return { exact: '', required: [] };
    case 'char':
      return { exact: String.fromCharCode(n.c), required: [] };
    case 'cat': {
      const required: string[] = [];
      let run = '';
      let exact = true;
      for (const item of n.items) {
        const l = literals(item, ignoreCase);
        if (l.exact !== null) {
          run += l.exact;
          continue;
        }
        exact = false;
        keep(run, ignoreCase, required);
        run = '';
        required.push(...l.required);
      }
      if (exact) return { exact: run, required: [] };
      keep(run, ignoreCase, required);
      return { exact: null, required };
    }
    case 'rep': {
      if (n.min === 0) return { exact: null, required: [] };
      const l = literals(n.body, ignoreCase);
      if (l.exact !== null && n.min === n.max) return { exact: l.exact.repeat(n.min), required: [] };
      const required = [...l.required];
      if (l.exact !== null) keep(l.exact.repeat(n.min), ignoreCase, required);
      return { exact: null, required };
    }
    default: // alternation, classes, `.`: nothing certain
      return { exact: null, required: [] };
  }
}

function requiredLiterals(node: Node, ignoreCase: boolean): string[] {
  const l = literals(node, ignoreCase);
  const all: string[] = [];
  if (l.exact !== null) keep(l.exact, ignoreCase, all);
  else all.push(...l.required);
  // Drop repeats and those inside a longer one; keep the longest few, in pattern order.
  const unique = [...new Set(all)].filter((s, _, arr) => !arr.some((o) => o !== s && o.includes(s)));
  const longest = new Set([...unique].sort((x, y) => y.length - x.length).slice(0, MAX_REQUIRED_LITERALS));
  return unique.filter((s) => longest.has(s));
}

/** The text every match starts with (assertions skipped), to skip ahead with indexOf. */
function prefix(n: Node): string {
  if (n.t === 'char') return String.fromCharCode(n.c);
  if (n.t !== 'cat') return '';
  let p = '';
  for (const item of n.items) {
    if (item.t === 'assert') continue;
    if (item.t !== 'char') break;
    p += String.fromCharCode(item.c);
  }
  return p;
}

// ---- the Pike VM ----

const isWord = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || (c >= 0x61 && c <= 0x7a);
const isLineTerminator = (c: number) => c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;

class Vm implements SafeRegex {
  readonly requiredLiterals: string[];
  private readonly prefix: string;
  private readonly n: number;
  // Thread lists, the visited marks of one position, and the closure's stack, reused by every call.
  private cur: { pc: Int32Array; start: Int32Array; len: number };
  private next: { pc: Int32Array; start: Int32Array; len: number };
  // Visited marks of one position's closure, per instruction and per nesting level of the
  // outermost iteration entered during it (see add); and the marks of threads already listed.
  private readonly mark: Uint32Array;
  private readonly listed: Uint32Array;
  private readonly levels: number;
  private gen = 0;
  private readonly stackPc: Int32Array;
  private readonly stackLevel: Int32Array;
  private steps = 0;

  constructor(
    private readonly p: Program,
    node: Node,
  ) {
    this.n = p.op.length;
    this.requiredLiterals = requiredLiterals(node, p.ignoreCase);
    this.prefix = p.ignoreCase ? '' : prefix(node);
    const list = () => ({ pc: new Int32Array(this.n), start: new Int32Array(this.n), len: 0 });
    this.cur = list();
    this.next = list();
    this.levels = p.depths + 1;
    this.mark = new Uint32Array(this.n * this.levels);
    this.listed = new Uint32Array(this.n);
    this.stackPc = new Int32Array(2 * this.n * this.levels + 2);
    this.stackLevel = new Int32Array(2 * this.n * this.levels + 2);
  }

  test(line: string, budget: StepBudget): boolean {
    return this.run(line, budget, true) !== null;
  }

  firstMatch(line: string, budget: StepBudget): [number, number] | null {
    return this.run(line, budget, false);
  }

  private assert(k: number, line: string, pos: number): boolean {
    switch (k) {
      case Kind.Bol:
        return pos === 0;
      case Kind.Eol:
        return pos === line.length;
      default: {
        const before = pos > 0 && isWord(line.charCodeAt(pos - 1));
        const after = pos < line.length && isWord(line.charCodeAt(pos));
        return (before !== after) === (k === Kind.WordBoundary);
      }
    }
  }

  /**
   * Adds the thread at `pc0` and everything it reaches without consuming, in priority order (a
   * depth-first walk). A path that enters an optional iteration and reaches its end within this
   * walk consumed nothing there, and fails as in JavaScript. The iterations such a path has
   * entered and not left are those enclosing it from the outermost one entered inward, so that
   * outermost level (`level`, 0 for none, else depth + 1) is all a path's future depends on
   * beyond its instruction: the walk visits each (instruction, level) once.
   */
  private add(list: { pc: Int32Array; start: Int32Array; len: number }, pc0: number, start: number, line: string, pos: number): void {
    const { op, a, b } = this.p;
    const { stackPc, stackLevel, levels } = this;
    let sp = 0;
    stackPc[sp] = pc0;
    stackLevel[sp++] = 0;
    while (sp > 0) {
      const pc = stackPc[--sp]!;
      const level = stackLevel[sp]!;
      const key = pc * levels + level;
      if (this.mark[key] === this.gen) continue;
      this.mark[key] = this.gen;
      this.steps++;
      switch (op[pc]) {
        case Op.Jmp:
          stackPc[sp] = a[pc]!;
          stackLevel[sp++] = level;
          break;
        case Op.Split:
          stackPc[sp] = b[pc]!;
          stackLevel[sp++] = level;
          stackPc[sp] = a[pc]!;
          stackLevel[sp++] = level;
          break;
        case Op.Assert:
          if (this.assert(a[pc]!, line, pos)) {
            stackPc[sp] = pc + 1;
            stackLevel[sp++] = level;
          }
          break;
        case Op.Enter:
          stackPc[sp] = pc + 1;
          stackLevel[sp++] = level === 0 ? a[pc]! + 1 : level;
          break;
        case Op.Check:
          // Entered during this walk (its depth at or inside the outermost entered): empty.
          if (level === 0 || a[pc]! + 1 < level) {
            stackPc[sp] = pc + 1;
            stackLevel[sp++] = level;
          }
          break;
        default:
          // Once it consumes, a thread's past no longer matters: one per instruction.
          if (this.listed[pc] !== this.gen) {
            this.listed[pc] = this.gen;
            list.pc[list.len] = pc;
            list.start[list.len++] = start;
          }
      }
    }
  }

  private matches(pc: number, c: number): boolean {
    const { op, a, classes, ignoreCase } = this.p;
    if (c < 0) return false;
    switch (op[pc]) {
      case Op.Char:
        return (ignoreCase ? fold().canon[c] : c) === a[pc];
      case Op.Any:
        return !isLineTerminator(c);
      default: {
        const cls = classes[a[pc]!]!;
        let found: boolean;
        if (ignoreCase) {
          const eq = fold().equivalents.get(c);
          found = eq ? eq.some((d) => inRanges(cls.ranges, d)) : inRanges(cls.ranges, c);
        } else found = inRanges(cls.ranges, c);
        return found !== cls.neg;
      }
    }
  }

  private charge(budget: StepBudget): void {
    const n = this.steps;
    this.steps = 0;
    budget.spend(n);
  }

  private run(line: string, budget: StepBudget, anyMatch: boolean): [number, number] | null {
    // Every match contains the required literals: a line without one cannot match.
    if (!this.p.ignoreCase) for (const l of this.requiredLiterals) if (!line.includes(l)) return null;
    this.steps = 0;
    let found: [number, number] | null = null;
    let pos = 0;
    let seeded = -1; // the position of the last new attempt
    this.cur.len = 0;
    try {
      for (;;) {
        if (this.cur.len === 0) {
          if (found) return found;
          // No thread alive: the next match can start only where the prefix occurs.
          if (this.prefix) {
            pos = line.indexOf(this.prefix, pos);
            if (pos < 0) return null;
          }
          if (seeded !== pos) {
            this.gen++;
            this.add(this.cur, 0, pos, line, pos);
            seeded = pos;
          }
        }
        const c = pos < line.length ? line.charCodeAt(pos) : -1;
        this.gen++;
        this.next.len = 0;
        const { pc, start } = this.cur;
        for (let i = 0; i < this.cur.len; i++) {
          this.steps++;
          const t = pc[i]!;
          if (this.p.op[t] === Op.Match) {
            found = [start[i]!, pos];
            if (anyMatch) return found;
            break; // lower-priority threads lose to this match
          }
          if (this.matches(t, c)) this.add(this.next, t + 1, start[i]!, line, pos + 1);
        }
        if (pos >= line.length) return found;
        pos++;
        // A new attempt from this position, below every running one; none once a match is held.
        if (!found && !(this.prefix && this.next.len === 0)) {
          this.add(this.next, 0, pos, line, pos);
          seeded = pos;
        }
        [this.cur, this.next] = [this.next, this.cur];
        if (this.steps >= 4096) this.charge(budget);
      }
    } finally {
      this.charge(budget);
    }
  }
}

/** Compiles a pattern of the supported subset; throws RegexError naming what is refused. */
export function compileRegex(pattern: string): SafeRegex {
  const { node, ignoreCase } = parsePattern(pattern);
  return new Vm(compile(node, ignoreCase), node);
}
