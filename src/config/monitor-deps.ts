// `depends_on` and `remind_every` in the monitor's config: the parents each target names (unknown
// names, self-dependencies and cycles refused with FILE:LINE) and the reminder interval.
import { parseDuration, type Reader } from './yaml-reader.js';

/** The shortest reminder interval: a sysadmin reminded more often than this is being paged, not reminded. */
export const MIN_REMIND_MS = 60_000;

/** `remind_every` at `path`: ms, 0 when switched off (`0`), undefined when absent or wrong (with a problem). */
export function readRemindEvery(r: Reader, path: (string | number)[]): number | undefined {
  if (!r.has(path)) return undefined;
  const v = r.get(path);
  if (v === 0 || v === '0') return 0;
  const ms = parseDuration(v);
  if (ms === undefined || ms < MIN_REMIND_MS) return r.fail(path, 'must be a duration of at least 1m (like 30m, 1h, 1d), or 0 for no reminders');
  return ms;
}

/**
 * Reads every target's `depends_on` and `remind_every` into `cfg.targets` (read already), and the
 * global `remind_every`. `names` are all the target names of the file, valid or not, so that a
 * parent with problems of its own is not also reported unknown.
 */
/** What of the config this reader fills: a structural type, so config/monitor.ts (which calls it) is not imported back. */
export interface DependencyFields {
  remindEveryMs?: number;
  targets: { name: string; remindEveryMs?: number; dependsOn?: string[] }[];
}

export function readDependencies(r: Reader, cfg: DependencyFields, names: readonly string[]): void {
  const global = readRemindEvery(r, ['remind_every']);
  if (global) cfg.remindEveryMs = global;
  const known = new Set(names);
  const parents = new Map<string, string[]>();
  for (const t of cfg.targets) {
    const own = readRemindEvery(r, ['targets', t.name, 'remind_every']);
    if (own !== undefined) t.remindEveryMs = own;
    const p = ['targets', t.name, 'depends_on'];
    if (!r.has(p)) continue;
    const raw = r.get(p);
    const list = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw : undefined;
    if (!list || list.length === 0) {
      r.fail(p, 'must list the targets this one depends on, like [router] (leave it out for none)');
      continue;
    }
    const deps: string[] = [];
    list.forEach((v, i) => {
      const at = typeof raw === 'string' ? p : [...p, i];
      if (typeof v !== 'string' || v.trim() === '') r.fail(at, 'must be a target name');
      else if (v === t.name) r.fail(at, `names the target itself: a cycle ${t.name} -> ${t.name}`);
      else if (!known.has(v)) r.fail(at, `names no configured target: ${v}`);
      else if (!deps.includes(v)) deps.push(v);
    });
    if (deps.length) {
      t.dependsOn = deps;
      parents.set(t.name, deps);
    }
  }
  for (const cycle of cycles(parents)) r.fail(['targets', cycle[0]!, 'depends_on'], `forms a cycle: ${cycle.join(' -> ')}`);
}

/**
 * Each cycle of the graph once, as the path that closes it (`a -> b -> a`), starting at the node the
 * walk entered it by. Iterative: a chain of 10,000 targets must not overflow the stack.
 */
function cycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const found: string[][] = [];
  for (const root of edges.keys()) {
    if (state.has(root)) continue;
    const path: string[] = [root];
    const next: number[] = [0];
    state.set(root, 'open');
    while (path.length) {
      const node = path[path.length - 1]!;
      const out = edges.get(node) ?? [];
      const i = next[next.length - 1]!;
      if (i >= out.length) {
        state.set(node, 'done');
        path.pop();
        next.pop();
        continue;
      }
      next[next.length - 1] = i + 1;
      const to = out[i]!;
      const seen = state.get(to);
      if (seen === 'open') found.push([...path.slice(path.indexOf(to)), to]);
      else if (seen === undefined) {
        state.set(to, 'open');
        path.push(to);
        next.push(0);
      }
    }
  }
  return found;
}
