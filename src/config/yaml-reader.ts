// A YAML document reader that reports every problem as FILE:LINE: path message (the monitor's
// config loader uses it); durations are seconds or strings such as 30s, 5m, 2h, 7d.
import { LineCounter, isMap, isPair, isScalar, isSeq, type Document, type Node, type Pair, type YAMLMap } from 'yaml';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Seconds as a number, or a string such as `500ms`, `30s`, `5m`, `2h`, `7d`. */
export function parseDuration(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return Math.round(v * 1000);
  if (typeof v !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(v);
  if (!m) return undefined;
  const ms = Number(m[1]) * UNITS[m[2] ?? 's']!;
  return ms > 0 ? Math.round(ms) : undefined;
}

export class Reader {
  readonly problems: string[] = [];
  constructor(
    private readonly doc: Document,
    private readonly lines: LineCounter,
    private readonly file: string,
  ) {}

  /**
   * Each map's pairs by key, made the first time the map is read: the document's getIn scans a
   * map's items, so a configuration of n targets took O(n²) to read (80 s for 10,000).
   */
  private readonly indexes = new WeakMap<YAMLMap, Map<unknown, Pair>>();

  /** The node at `path` (scalars as nodes), as `doc.getIn(path, true)` finds it: the first pair of a key. */
  private nodeAt(path: readonly (string | number)[]): unknown {
    let node: unknown = this.doc.contents;
    for (const k of path) {
      if (isMap(node)) node = this.pairOf(node, k)?.value;
      else if (isSeq(node)) node = node.get(k, true);
      else return undefined;
    }
    return node;
  }

  private pairOf(map: YAMLMap, k: unknown): Pair | undefined {
    let index = this.indexes.get(map);
    if (!index) {
      index = new Map();
      for (const it of map.items) {
        if (!isPair(it)) continue;
        const key = isScalar(it.key) ? it.key.value : it.key;
        if (!index.has(key)) index.set(key, it);
      }
      this.indexes.set(map, index);
    }
    return index.get(k);
  }

  private line(path: (string | number)[]): number | undefined {
    for (let p = path; p.length > 0; p = p.slice(0, -1)) {
      const node = this.nodeAt(p) as Node | undefined;
      if (node && typeof node === 'object' && node.range) return this.lines.linePos(node.range[0]).line;
    }
    return undefined;
  }

  fail(path: (string | number)[], message: string): undefined {
    const line = this.line(path);
    this.problems.push(`${this.file}${line !== undefined ? `:${line}` : ''}: ${path.join('.') || '(top)'} ${message}`);
    return undefined;
  }

  get(path: (string | number)[]): unknown {
    const n = this.nodeAt(path);
    const v: unknown = isScalar(n) ? n.value : n;
    // Collections come back as YAML nodes; scalars as plain values.
    return v !== null && typeof v === 'object' && 'toJSON' in v ? (v as { toJSON(): unknown }).toJSON() : v;
  }

  has(path: (string | number)[]): boolean {
    if (path.length === 0) return this.doc.contents !== null && this.doc.contents !== undefined;
    const parent = this.nodeAt(path.slice(0, -1));
    const k = path[path.length - 1];
    if (isMap(parent)) return this.pairOf(parent, k) !== undefined;
    return isSeq(parent) ? parent.has(k) : false;
  }

  keys(path: (string | number)[], allowed: string[]): void {
    const node = this.nodeAt(path);
    if (!isMap(node)) return;
    for (const item of node.items) {
      const k = String((item.key as { value?: unknown })?.value ?? item.key);
      if (!allowed.includes(k)) this.fail([...path, k], `is not a known setting (known: ${allowed.join(', ')})`);
    }
  }

  string(path: (string | number)[], def?: string): string | undefined {
    const v = this.get(path);
    if (v === undefined || v === null) return def;
    if (typeof v !== 'string' || v.trim() === '') return this.fail(path, 'must be a non-empty string');
    return v;
  }

  int(path: (string | number)[], def: number, min: number, max: number): number {
    const v = this.get(path);
    if (v === undefined || v === null) return def;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      this.fail(path, `must be a whole number from ${min} to ${max}`);
      return def;
    }
    return v;
  }

  duration(path: (string | number)[], defMs: number): number {
    const v = this.get(path);
    if (v === undefined || v === null) return defMs;
    const ms = parseDuration(v);
    if (ms === undefined) {
      this.fail(path, 'must be a duration: seconds, or a string like 30s, 5m, 2h, 7d');
      return defMs;
    }
    return ms;
  }

  bool(path: (string | number)[], def: boolean): boolean {
    const v = this.get(path);
    if (v === undefined || v === null) return def;
    if (typeof v !== 'boolean') {
      this.fail(path, 'must be true or false');
      return def;
    }
    return v;
  }

  url(path: (string | number)[], required: boolean): string | undefined {
    const v = this.string(path);
    if (v === undefined) return required && !this.has(path) ? this.fail(path, 'is required') : undefined;
    try {
      const u = new URL(v);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      return v;
    } catch {
      return this.fail(path, `must be an http(s) URL, got ${JSON.stringify(v)}`);
    }
  }

  seq(path: (string | number)[]): unknown[] {
    const node = this.nodeAt(path);
    if (node === undefined || node === null) return [];
    if (!isSeq(node)) {
      this.fail(path, 'must be a list');
      return [];
    }
    return node.items;
  }

  mapKeys(path: (string | number)[]): string[] {
    const node = this.nodeAt(path);
    if (node === undefined || node === null) return [];
    if (!isMap(node)) {
      this.fail(path, 'must be a mapping');
      return [];
    }
    return node.items.map((i) => String((i.key as { value?: unknown })?.value ?? i.key));
  }
}
