// Notes namespaces: `refs/notes/<name>` with `/`-separated segments that must be valid git ref
// components (the rules of git-check-ref-format), and the names reserved for mkt itself.

/** Namespaces whose first segment is one of these are reserved: put_note answers 422. */
export const RESERVED_FIRST_SEGMENTS = ['mkt', 'tmp'] as const;
const MAX_NAMESPACE_LENGTH = 200;

export type NamespaceCheck = { ok: true; ref: string } | { ok: false; reason: string; reserved?: boolean };

function segmentProblem(seg: string): string | undefined {
  if (seg === '') return 'has an empty segment';
  if (seg.startsWith('.')) return 'has a segment starting with "."';
  if (seg.endsWith('.lock')) return 'has a segment ending in ".lock"';
  if (seg.endsWith('.')) return 'has a segment ending in "."';
  if (seg === '@') return 'has a segment "@"';
  return undefined;
}

export function checkNamespace(name: string): NamespaceCheck {
  if (name.length === 0) return { ok: false, reason: 'namespace is empty' };
  if (name.length > MAX_NAMESPACE_LENGTH) return { ok: false, reason: `namespace is longer than ${MAX_NAMESPACE_LENGTH} characters` };
  // eslint-disable-next-line no-control-regex -- control characters are exactly what git forbids
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) return { ok: false, reason: 'namespace holds a character git forbids in ref names (space, control, ~ ^ : ? * [ \\)' };
  if (name.includes('..')) return { ok: false, reason: 'namespace holds ".."' };
  if (name.includes('@{')) return { ok: false, reason: 'namespace holds "@{"' };
  for (const seg of name.split('/')) {
    const p = segmentProblem(seg);
    if (p) return { ok: false, reason: `namespace ${p}` };
  }
  const first = name.split('/')[0]!.toLowerCase();
  if ((RESERVED_FIRST_SEGMENTS as readonly string[]).includes(first)) return { ok: false, reserved: true, reason: `namespace "${name}" is reserved (names starting with ${RESERVED_FIRST_SEGMENTS.map((s) => `"${s}"`).join(' or ')})` };
  return { ok: true, ref: `refs/notes/${name}` };
}

/** `refs/notes/a/b` → `a/b`. */
export function namespaceOfRef(ref: string): string {
  return ref.slice('refs/notes/'.length);
}

/**
 * An existing namespace that `name` cannot live beside: git keeps refs as paths, so
 * `refs/notes/a` and `refs/notes/a/b` cannot both exist. Undefined when there is none.
 */
export function collidingNamespace(name: string, existing: Iterable<string>): string | undefined {
  for (const other of existing) {
    if (other !== name && (other.startsWith(`${name}/`) || name.startsWith(`${other}/`))) return other;
  }
  return undefined;
}
