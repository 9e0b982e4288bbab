// SQL texts made once per call site: `sqlText\`... ${fragment} ...\`` answers the same string
// object every time its fragments are the same (an engine's clock expression, a FOR UPDATE).
// A template literal makes a new string at each call, which the statement cache (a Map keyed by
// the text) must then hash and compare character by character: about a microsecond of a hot
// request's statement (bench/README.md, "SQL texts made once"). The same string object carries
// its hash and compares by identity.

/** A text made from one set of fragments; a call site with several sets keeps a short list. */
interface Made {
  fragments: readonly unknown[];
  text: string;
  next: Made | undefined;
}

// Keyed by the call site's strings array, which JavaScript makes once per tagged template in the
// source and hands to every evaluation of it.
const made = new WeakMap<TemplateStringsArray, Made>();

function sameFragments(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The SQL text of a tagged template, the same string each time its fragments are. Fragments are
 * pieces of SQL of our own (never input: values go in bound parameters); a call site is expected
 * to see a handful of fragment sets at most (one per engine), each kept for the process's life.
 */
export function sqlText(strings: TemplateStringsArray, ...fragments: readonly (string | number)[]): string {
  const first = made.get(strings);
  for (let m = first; m; m = m.next) if (sameFragments(m.fragments, fragments)) return m.text;
  let text = strings[0]!;
  for (let i = 0; i < fragments.length; i++) text += String(fragments[i]) + strings[i + 1]!;
  made.set(strings, { fragments, text, next: first });
  return text;
}
