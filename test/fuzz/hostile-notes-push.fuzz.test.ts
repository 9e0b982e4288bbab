// Hostile notes pushes (issue 28, finding 5): random notes refs that are blobs, trees, tags, or
// commits of trees with files, upper-case or short or long names, symbolic links, submodules, odd
// or too deep fan-out, among good notes trees at any fan-out. The pre-receive hook
// (src/git/hooks.ts), run as git runs it, must refuse exactly the refs that are not a commit of a
// notes tree; the same refs written behind the server's back must never make the indexer throw,
// and it indexes exactly the commits. Objects are written in-process (loose objects), the hook
// judges a batch of refs in one run: one run of the fuzz is one ref. MKT_FUZZ_RUNS sets the count.
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { preReceiveScript } from '../../src/git/hooks.js';
import { gitEnv } from '../../src/git/run.js';
import { BLOB_MODE, TREE_MODE, encodeTree, withEntry, type TreeEntry } from '../../src/git/objects.js';
import { NotesIndexer } from '../../src/notes/indexer.js';
import { SqlNotesIndex } from '../../src/store/notes-sql.js';
import { openEmptyDatabase } from '../helpers/engines.js';
import { tempDir } from '../helpers/tmp.js';
import { settingsFromEnv } from './run.js';

const settings = settingsFromEnv(300);
/** Refs judged by one run of the hook (and caught up by one ensureCurrent). */
const BATCH = 50;

let dir: { path: string; remove(): void };
let gitDir: string;
let hook: string;

/** Writes a loose object in-process (no git process) and returns its id. */
function writeObject(type: 'blob' | 'tree' | 'commit' | 'tag', body: Buffer): string {
  const data = Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
  const id = createHash('sha1').update(data).digest('hex');
  const file = join(gitDir, 'objects', id.slice(0, 2), id.slice(2));
  if (!existsSync(file)) {
    mkdirSync(join(gitDir, 'objects', id.slice(0, 2)), { recursive: true });
    writeFileSync(file, deflateSync(data));
  }
  return id;
}

const MUTATIONS = ['none', 'exec', 'upper', 'short', 'long', 'nonhex', 'symlink', 'gitlink', 'odd-dir', 'too-deep'] as const;
type Mutation = (typeof MUTATIONS)[number];
/** The mutations that leave a note a note. */
const HARMLESS: ReadonlySet<Mutation> = new Set(['none', 'exec']);

interface NoteSpec {
  target: string;
  fanout: number;
  mutation: Mutation;
}
interface RefSpec {
  kind: 'commit' | 'blob' | 'tree' | 'tag';
  notes: NoteSpec[];
}

const hex40 = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => Buffer.from(b).toString('hex'));
const noteArb: fc.Arbitrary<NoteSpec> = fc.record({
  target: hex40,
  fanout: fc.integer({ min: 0, max: 3 }),
  // Mostly good notes, so that one bad entry among good ones is what is judged.
  mutation: fc.oneof({ weight: 6, arbitrary: fc.constant<Mutation>('none') }, { weight: 4, arbitrary: fc.constantFrom(...MUTATIONS) }),
});
const refArb: fc.Arbitrary<RefSpec> = fc.record({
  kind: fc.oneof({ weight: 7, arbitrary: fc.constant('commit' as const) }, { weight: 1, arbitrary: fc.constantFrom('blob' as const, 'tree' as const, 'tag' as const) }),
  notes: fc.array(noteArb, { maxLength: 6 }),
});

/** The path and mode of a note's entry in the notes tree, after its mutation. */
function placed(n: NoteSpec): { path: string[]; mode: string; gitlink: boolean } {
  let name = n.target;
  let mode = BLOB_MODE;
  let gitlink = false;
  let fanout = n.fanout;
  switch (n.mutation) {
    case 'exec': mode = '100755'; break;
    case 'upper': name = name.toUpperCase(); break;
    case 'short': name = name.slice(0, 38); break;
    case 'long': name = `${name}ab`; break;
    case 'nonhex': name = `${name.slice(0, 39)}g`; break;
    case 'symlink': mode = '120000'; break;
    case 'gitlink': mode = '160000'; gitlink = true; break;
    case 'too-deep': name = `${name}ab`; fanout = 20; break;
    default: break;
  }
  const path: string[] = [];
  if (n.mutation === 'odd-dir') {
    path.push(name.slice(0, 3));
    name = name.slice(3);
  }
  for (let i = 0; i < fanout && name.length > 2; i++) {
    path.push(name.slice(0, 2));
    name = name.slice(2);
  }
  path.push(name);
  return { path, mode, gitlink };
}

/** Builds the notes tree of the spec (a later entry colliding with an earlier one is left out); the notes kept. */
function buildTree(spec: RefSpec, blob: string): { tree: string; kept: NoteSpec[] } {
  type Dir = Map<string, Dir | { mode: string; oid: string }>;
  const root: Dir = new Map();
  const kept: NoteSpec[] = [];
  for (const n of spec.notes) {
    const { path, mode, gitlink } = placed(n);
    let d = root;
    let ok = true;
    for (const seg of path.slice(0, -1)) {
      const next = d.get(seg);
      if (next === undefined) d.set(seg, (d = new Map()));
      else if (next instanceof Map) d = next;
      else ok = false;
      if (!ok) break;
    }
    const leaf = path[path.length - 1]!;
    if (!ok || d.has(leaf)) continue;
    d.set(leaf, { mode, oid: gitlink ? n.target : blob });
    kept.push(n);
  }
  const write = (d: Dir): string => {
    let entries: TreeEntry[] = [];
    for (const [name, v] of d) entries = withEntry(entries, name, v instanceof Map ? { mode: TREE_MODE, name, oid: write(v) } : { mode: v.mode, name, oid: v.oid });
    return writeObject('tree', encodeTree(entries, 'sha1'));
  };
  return { tree: write(root), kept };
}

/** The object a ref of this spec points at, and whether it is a commit of a notes tree. */
function materialise(spec: RefSpec, blob: string): { oid: string; valid: boolean; commit: boolean } {
  const { tree, kept } = buildTree(spec, blob);
  const valid = spec.kind === 'commit' && kept.every((n) => HARMLESS.has(n.mutation));
  if (spec.kind === 'blob') return { oid: blob, valid, commit: false };
  if (spec.kind === 'tree') return { oid: tree, valid, commit: false };
  const commit = writeObject('commit', Buffer.from(`tree ${tree}\nauthor F <f@example.com> 1700000000 +0000\ncommitter F <f@example.com> 1700000000 +0000\n\nnotes\n`));
  if (spec.kind === 'commit') return { oid: commit, valid, commit: true };
  return { oid: writeObject('tag', Buffer.from(`object ${commit}\ntype commit\ntag t\ntagger F <f@example.com> 1700000000 +0000\n\na tag\n`)), valid, commit: false };
}

/** Runs the pre-receive hook as receive-pack does; the refs it refused. */
function runHook(lines: string): Promise<{ code: number; refused: Set<string>; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', [hook], { env: gitEnv({ GIT_DIR: gitDir }), stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, refused: new Set([...stderr.matchAll(/^mkt: refusing (refs\/notes\/\S+): /gm)].map((m) => m[1]!)), stderr }));
    child.stdin.end(lines);
  });
}

beforeAll(() => {
  dir = tempDir('mkt-fuzz-notes-push-');
  gitDir = join(dir.path, 'repo.git');
  execFileSync('git', ['init', '-q', '--bare', gitDir], { env: gitEnv() });
  hook = join(dir.path, 'pre-receive');
  writeFileSync(hook, preReceiveScript());
});
afterAll(() => dir?.remove());

it(`the hook refuses exactly the notes refs that are not commits of notes trees, and the indexer never throws on them (${settings.runs} refs, seed ${settings.seed})`, async () => {
  const specs = fc.sample(refArb, { seed: settings.seed, numRuns: settings.runs });
  const blob = writeObject('blob', Buffer.from('a fuzzed note\n'));
  const db = await openEmptyDatabase('sqlite');
  const index = await SqlNotesIndex.open(db.db);
  const indexer = new NotesIndexer(index, { warn: () => undefined });
  const repo = { id: 'fuzz', dir: gitDir };
  try {
    for (let start = 0; start < specs.length; start += BATCH) {
      const batch = specs.slice(start, start + BATCH).map((spec, i) => ({ spec, ref: `refs/notes/f${start + i}`, ...materialise(spec, blob) }));
      const zero = '0'.repeat(40);
      const judged = await runHook(batch.map((b) => `${zero} ${b.oid} ${b.ref}\n`).join(''));
      for (const b of batch) expect(judged.refused.has(b.ref), `${b.ref} ${JSON.stringify(b.spec)}\n${judged.stderr.slice(0, 2000)}`).toBe(!b.valid);
      expect(judged.code !== 0).toBe(batch.some((b) => !b.valid));

      // The same refs behind the server's back: caught up without a throw, the commits indexed.
      execFileSync('git', ['--git-dir', gitDir, 'update-ref', '--stdin'], { env: gitEnv(), input: batch.map((b) => `update ${b.ref} ${b.oid}\n`).join('') });
      await indexer.ensureCurrent(repo);
      const tips = await index.tips('fuzz');
      for (const b of batch) expect(tips.get(b.ref.slice('refs/notes/'.length)), `${b.ref} ${JSON.stringify(b.spec)}`).toBe(b.commit ? b.oid : undefined);
      execFileSync('git', ['--git-dir', gitDir, 'update-ref', '--stdin'], { env: gitEnv(), input: batch.map((b) => `delete ${b.ref}\n`).join('') });
    }
  } finally {
    await indexer.close();
    await db.dispose();
  }
  // Some 35 ms a ref here (the hook starts a few git processes per ref): 10,000 refs take minutes.
  // The limit only catches a hang: CI on a machine three times oversubscribed ran 300 refs past
  // 120 s, so it allows ten times the typical pace and never less than ten minutes.
}, Math.max(600_000, settings.runs * 360));
