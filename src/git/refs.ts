// Reading the notes refs of a bare repository straight from its files (loose refs, then
// packed-refs): a check of "has this ref moved?" costs a file read, not a git process.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const NOTES_PREFIX = 'refs/notes/';
const OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

interface PackedCache {
  mtimeMs: number;
  size: number;
  refs: Map<string, string>;
}
const packedCache = new Map<string, PackedCache>();

function packedRefs(gitDir: string): Map<string, string> {
  const file = join(gitDir, 'packed-refs');
  let st;
  try {
    st = statSync(file);
  } catch {
    return new Map();
  }
  const hit = packedCache.get(gitDir);
  if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.refs;
  const refs = new Map<string, string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line || line.startsWith('#') || line.startsWith('^')) continue;
    const sp = line.indexOf(' ');
    if (sp > 0) refs.set(line.slice(sp + 1), line.slice(0, sp));
  }
  packedCache.set(gitDir, { mtimeMs: st.mtimeMs, size: st.size, refs });
  return refs;
}

function readLoose(gitDir: string, ref: string): string | undefined {
  try {
    const text = readFileSync(join(gitDir, ref), 'utf8').trim();
    return OID.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

/** The object id a ref points at, or undefined when the ref does not exist. */
export function readRef(gitDir: string, ref: string): string | undefined {
  return readLoose(gitDir, ref) ?? packedRefs(gitDir).get(ref);
}

function walkLoose(dir: string, prefix: string, out: Map<string, string>, gitDir: string): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const ref = prefix + e.name;
    if (e.isDirectory()) walkLoose(join(dir, e.name), `${ref}/`, out, gitDir);
    else if (e.isFile() && !e.name.endsWith('.lock')) {
      const oid = readLoose(gitDir, ref);
      if (oid) out.set(ref, oid);
    }
  }
}

/** Every ref under refs/notes/ with its tip (loose refs win over packed ones). */
export function listNotesRefs(gitDir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [ref, oid] of packedRefs(gitDir)) if (ref.startsWith(NOTES_PREFIX)) out.set(ref, oid);
  walkLoose(join(gitDir, NOTES_PREFIX), NOTES_PREFIX, out, gitDir);
  return out;
}
