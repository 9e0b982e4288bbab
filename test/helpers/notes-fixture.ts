// A deterministic repository of many commits with one git note each, in the three shapes people
// keep data in notes (trailers in `review`, key=value lines in `ci`, JSON lines in `perf`), built
// in seconds by one `git fast-import` fed a stream we write, then pushed to a marketplace. Every
// note comes with the fields it carries, worked out here from how the note was built (not by the
// server's parser), so tests and the benchmark compare the server against an independent answer.
// Also the two ways the tests read it back: every page of an API search, and the built mkt binary.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SearchHit } from '../../src/schemas/notes.js';
import { gitUrl, type NotesServer } from './notes-server.js';

/** A field a note carries, as the contract's parser should find it: key as written, value trimmed. */
export interface FixtureField {
  key: string;
  value: string;
}

export interface Person {
  name: string;
  email: string;
}

/** A note as the fixture wrote it. */
export interface FixtureNote {
  namespace: string;
  text: string;
  fields: FixtureField[];
  /** The note's own author and time: those of the notes-ref commit that added it. */
  author: Person;
  /** ms since the epoch. */
  at: number;
  /** A message id (`<…@…>`) the note holds whole, if any. */
  messageId?: string;
  /** A URL the note holds whole, if any. */
  url?: string;
}

export interface FixtureCommit {
  sha: string;
  subject: string;
  author: Person;
  /** Author time, seconds since the epoch. */
  time: number;
  note: FixtureNote;
}

export interface NotesFixture {
  /** The local repository (a normal clone with a work tree-less history on `main`). */
  dir: string;
  /** Oldest first. */
  commits: FixtureCommit[];
  /** The namespaces written, in first-use order. */
  namespaces: string[];
}

/** What a custom note maker returns: the text and the fields the test expects the server to find. */
export interface NoteSpec {
  namespace: string;
  text: string;
  fields: FixtureField[];
  messageId?: string;
  url?: string;
}

export interface NotesFixtureOptions {
  /** Commits (one note each); default 10,000. */
  commits?: number;
  /** Seed of the generator; the same seed builds the same repository (and the same ids). */
  seed?: number;
  /** Notes added per notes-ref commit (each notes commit has its own author and time); default 25. */
  notesPerCommit?: number;
  /** Replaces the three built-in shapes: the note of commit `i`. */
  makeNote?: (i: number, rnd: () => number) => NoteSpec;
  /** Name of the repository directory under the parent; default `fixture`. */
  name?: string;
}

/** The people who review, sign off and write the notes. Names share no substrings across people. */
export const REVIEWERS: readonly Person[] = [
  { name: 'Alice Liddell', email: 'alice@example.com' },
  { name: 'Bob Stone', email: 'bob@example.com' },
  { name: 'Carol Ng', email: 'carol@example.org' },
  { name: 'Dave Okafor', email: 'dave@example.net' },
  { name: 'Erin Park', email: 'erin@example.com' },
];

/** The authors of the notes-ref commits, in turn. */
export const NOTE_AUTHORS: readonly Person[] = [
  { name: 'Ana', email: 'ana@example.com' },
  { name: 'ci-bot', email: 'ci@bots.example' },
  { name: 'Bo', email: 'bo@example.com' },
  { name: 'Perf Runner', email: 'perf@bots.example' },
];

/** The authors of the commits. */
export const COMMIT_AUTHORS: readonly Person[] = [
  { name: 'Grace Hopper', email: 'grace@example.com' },
  { name: 'Linus Pauling', email: 'linus@example.org' },
  { name: 'Ada Byron', email: 'ada@example.net' },
];

/** 2026-01-01T00:00:00Z: commit i is authored at BASE_TIME + 60 i seconds. */
export const BASE_TIME = 1_767_225_600;
/** Notes commit b is authored at NOTES_BASE_TIME + 3600 b seconds (2026-02-01 on). */
export const NOTES_BASE_TIME = 1_769_904_000;

const MEMBER_WORDS = ['parser', 'cache', 'router', 'index', 'daemon', 'client', 'schema', 'worker'];
const VERBS = ['fix', 'speed up', 'simplify', 'document', 'test', 'harden'];
const METRICS = ['latency', 'throughput', 'memory', 'startup'];
const PLATFORMS = ['arm64', 'x86_64', 'riscv64'];

/** mulberry32: small, fast, and the same on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rnd: () => number, list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
const pad5 = (i: number): string => String(i).padStart(5, '0');
const ident = (p: Person): string => `${p.name} <${p.email}>`;

/** The message id of note i (unique: the padded index sits between dots, and `>` closes it). */
export function messageIdOf(i: number): string {
  return `<20260101120000.${pad5(i)}.r${i % 97}@mail.example.org>`;
}

/** The URL of note i (unique: the padded index ends the path, a query follows). */
export function urlOf(namespace: string, i: number): string {
  return `https://${namespace}.example.com/app/runs/${pad5(i)}?attempt=2&from=notes`;
}

/** Trailers in the `review` namespace: a free-text paragraph, then git-style trailers. */
function reviewNote(i: number, rnd: () => number): NoteSpec {
  const fields: FixtureField[] = [];
  const lines: string[] = [`Looks good, merging after the ${pick(rnd, MEMBER_WORDS)} checks.`, ''];
  const trailer = (key: string, value: string) => {
    lines.push(`${key}: ${value}`);
    fields.push({ key, value });
  };
  const first = pick(rnd, REVIEWERS);
  trailer('Reviewed-by', ident(first));
  if (rnd() < 0.3) {
    const second = pick(rnd, REVIEWERS.filter((p) => p !== first));
    trailer('Reviewed-by', ident(second));
  }
  trailer('Signed-off-by', ident(pick(rnd, REVIEWERS)));
  // Gerrit's votes: the label, then the vote glued to it, then the voter.
  const vote = rnd() < 0.7 ? '+2' : '+1';
  const voter = pick(rnd, REVIEWERS).name;
  lines.push(`Code-Review${vote}: ${voter}`);
  fields.push({ key: 'Code-Review', value: `${vote} ${voter}` });
  let messageId: string | undefined;
  let url: string | undefined;
  if (i % 7 === 0) {
    messageId = messageIdOf(i);
    trailer('Message-Id', messageId);
  }
  if (i % 5 === 0) {
    url = urlOf('review', i);
    trailer('Link', url);
  }
  return { namespace: 'review', text: `${lines.join('\n')}\n`, fields, messageId, url };
}

/** key=value lines in the `ci` namespace (GitLab #26266's closes-issues among them). */
function ciNote(i: number, rnd: () => number): NoteSpec {
  const fields: FixtureField[] = [];
  const lines: string[] = [];
  const kv = (key: string, value: string) => {
    lines.push(`${key}=${value}`);
    fields.push({ key, value });
  };
  kv('build', rnd() < 0.85 ? 'ok' : 'failed');
  kv('duration_ms', String(100 + Math.floor(rnd() * 9000)));
  if (rnd() < 0.4) {
    const a = 1 + Math.floor(rnd() * 30);
    kv('closes-issues', rnd() < 0.5 ? `${a},${a + 1}` : String(a));
  }
  kv('platform', pick(rnd, PLATFORMS));
  let url: string | undefined;
  if (i % 5 === 1) {
    url = urlOf('ci', i);
    kv('url', url);
  }
  return { namespace: 'ci', text: `${lines.join('\n')}\n`, fields, url };
}

/** One JSON object per line in the `perf` namespace (git-appraise's shape). */
function perfNote(i: number, rnd: () => number): NoteSpec {
  const fields: FixtureField[] = [];
  const lines: string[] = [];
  const run = `r-${i % 101}`;
  const count = 1 + Math.floor(rnd() * 3);
  let messageId: string | undefined;
  for (let k = 0; k < count; k++) {
    const value = Math.round(rnd() * 10_000) / 10;
    const obj: Record<string, unknown> = { metric: METRICS[(i + k) % METRICS.length], value, run };
    // Top-level scalars become fields (numbers and booleans as JSON text); arrays one field per
    // element; nested objects and null are skipped.
    fields.push({ key: 'metric', value: String(obj.metric) }, { key: 'value', value: JSON.stringify(value) }, { key: 'run', value: run });
    if (k === 0 && rnd() < 0.5) {
      obj.ok = rnd() < 0.9;
      fields.push({ key: 'ok', value: JSON.stringify(obj.ok) });
      const tags = [pick(rnd, PLATFORMS), 'nightly'];
      obj.tags = tags;
      for (const t of tags) fields.push({ key: 'tags', value: t });
      obj.env = { os: 'linux', cores: 2 };
      obj.comment = null;
    }
    if (k === 0 && i % 7 === 2) {
      messageId = messageIdOf(i);
      obj.message_id = messageId;
      fields.push({ key: 'message_id', value: messageId });
    }
    lines.push(JSON.stringify(obj));
  }
  return { namespace: 'perf', text: `${lines.join('\n')}\n`, fields, messageId };
}

/** The built-in note of commit i: the three shapes in turn. */
export function defaultNote(i: number, rnd: () => number): NoteSpec {
  switch (i % 3) {
    case 0:
      return reviewNote(i, rnd);
    case 1:
      return ciNote(i, rnd);
    default:
      return perfNote(i, rnd);
  }
}

/**
 * The environment of the fixture's git: no user or system config, a fixed identity, and glibc's
 * malloc told to keep freed memory (fast-import grows and trims its heap once per commit; on a
 * VM where brk is slow that made 10,000 commits take 10 s instead of 0.2 s). Ignored elsewhere.
 */
function gitEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GLIBC_TUNABLES: 'glibc.malloc.top_pad=67108864:glibc.malloc.trim_threshold=134217728', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', HOME: '/nonexistent', GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.com' };
}

/** git with an argument array, asynchronous (a server under test may live in this process). */
export function fixtureGit(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: { ...gitEnv(), ...env }, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`git ${args.join(' ')} failed: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

/** Runs `git fast-import` in `dir`, writing `chunks` to its stdin as they come (backpressure kept). */
function fastImport(dir: string, chunks: Iterable<string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['fast-import', '--quiet', '--done'], { cwd: dir, env: gitEnv(), stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git fast-import exited ${code}: ${stderr.trim()}`))));
    child.stdin.on('error', () => undefined);
    const it = chunks[Symbol.iterator]();
    const pump = (): void => {
      for (;;) {
        const next = it.next();
        if (next.done) {
          child.stdin.end();
          return;
        }
        if (!child.stdin.write(next.value)) {
          child.stdin.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
}

const data = (text: string): string => `data ${Buffer.byteLength(text)}\n${text}\n`;

/**
 * Builds the repository under `parent`: `main` with the commits (empty trees: only history and
 * notes matter), and one notes ref per namespace. Returns the reference the tests compare with.
 */
export async function buildNotesFixture(parent: string, opts: NotesFixtureOptions = {}): Promise<NotesFixture> {
  const n = opts.commits ?? 10_000;
  const perCommit = opts.notesPerCommit ?? 25;
  const rnd = seededRandom(opts.seed ?? 36);
  const makeNote = opts.makeNote ?? defaultNote;
  const dir = join(parent, opts.name ?? 'fixture');
  mkdirSync(dir, { recursive: true });
  await fixtureGit(dir, ['init', '-q', '--object-format=sha1', '-b', 'main']);

  interface Planned {
    subject: string;
    author: Person;
    time: number;
    spec: NoteSpec;
  }
  const planned: Planned[] = [];
  for (let i = 0; i < n; i++) {
    const author = pick(rnd, COMMIT_AUTHORS);
    const subject = `${pick(rnd, VERBS)} the ${pick(rnd, MEMBER_WORDS)} (change ${i})`;
    planned.push({ subject, author, time: BASE_TIME + 60 * i, spec: makeNote(i, rnd) });
  }
  // Notes are grouped per namespace into notes-ref commits of `perCommit` notes each; the k-th
  // notes commit overall has author NOTE_AUTHORS[k % 4] and time NOTES_BASE_TIME + 3600 k.
  const namespaces: string[] = [];
  const byNs = new Map<string, number[]>();
  planned.forEach((p, i) => {
    if (!byNs.has(p.spec.namespace)) {
      byNs.set(p.spec.namespace, []);
      namespaces.push(p.spec.namespace);
    }
    byNs.get(p.spec.namespace)!.push(i);
  });
  const noteMeta: { author: Person; at: number }[] = new Array(n);
  const batches: { ns: string; members: number[]; author: Person; time: number }[] = [];
  for (const ns of namespaces) {
    const members = byNs.get(ns)!;
    for (let b = 0; b < members.length; b += perCommit) {
      const k = batches.length;
      const batch = { ns, members: members.slice(b, b + perCommit), author: NOTE_AUTHORS[k % NOTE_AUTHORS.length]!, time: NOTES_BASE_TIME + 3600 * k };
      for (const i of batch.members) noteMeta[i] = { author: batch.author, at: batch.time * 1000 };
      batches.push(batch);
    }
  }

  function* stream(): Generator<string> {
    for (let i = 0; i < n; i++) {
      const p = planned[i]!;
      yield `commit refs/heads/main\nmark :${i + 1}\nauthor ${ident(p.author)} ${p.time} +0000\ncommitter ${ident(p.author)} ${p.time} +0000\n${data(p.subject)}${i > 0 ? `from :${i}\n` : ''}\n`;
    }
    for (const b of batches) {
      const who = `${ident(b.author)} ${b.time} +0000`;
      let chunk = `commit refs/notes/${b.ns}\nauthor ${who}\ncommitter ${who}\n${data(`Notes added by the fixture (${b.members.length})`)}`;
      // Later commits to the same ref continue it: fast-import keeps each branch's tip.
      for (const i of b.members) chunk += `N inline :${i + 1}\n${data(planned[i]!.spec.text)}`;
      yield `${chunk}\n`;
    }
    yield 'done\n';
  }
  await fastImport(dir, stream());

  const shas = (await fixtureGit(dir, ['rev-list', '--reverse', 'refs/heads/main'])).trim().split('\n');
  if (shas.length !== n) throw new Error(`fixture: expected ${n} commits, git lists ${shas.length}`);
  const commits: FixtureCommit[] = planned.map((p, i) => ({
    sha: shas[i]!,
    subject: p.subject,
    author: p.author,
    time: p.time,
    note: { namespace: p.spec.namespace, text: p.spec.text, fields: p.spec.fields, author: noteMeta[i]!.author, at: noteMeta[i]!.at, messageId: p.spec.messageId, url: p.spec.url },
  }));
  return { dir, commits, namespaces };
}

/** `git notes --ref NS list` in `dir`: note target -> note blob. */
export async function gitNotesList(dir: string, namespace: string): Promise<Map<string, string>> {
  const out = (await fixtureGit(dir, ['notes', '--ref', namespace, 'list'])).trim();
  const m = new Map<string, string>();
  for (const line of out ? out.split('\n') : []) {
    const [blob, target] = line.split(' ') as [string, string];
    m.set(target, blob);
  }
  return m;
}

/** Every note of a namespace as git has it in `dir`: target -> text (one `git cat-file --batch`). */
export async function gitNotesText(dir: string, namespace: string): Promise<Map<string, string>> {
  const list = await gitNotesList(dir, namespace);
  const blobs = [...list.values()];
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const child = spawn('git', ['cat-file', '--batch'], { cwd: dir, env: gitEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`git cat-file exited ${code}`))));
    child.stdin.end(blobs.map((b) => `${b}\n`).join(''));
  });
  // Each answer: `<oid> blob <size>\n<content>\n`, in the order asked.
  const texts: string[] = [];
  let at = 0;
  for (let i = 0; i < blobs.length; i++) {
    const eol = raw.indexOf(0x0a, at);
    const size = Number(raw.subarray(at, eol).toString('latin1').split(' ')[2]);
    texts.push(raw.subarray(eol + 1, eol + 1 + size).toString('utf8'));
    at = eol + 1 + size + 1;
  }
  const m = new Map<string, string>();
  [...list.keys()].forEach((target, i) => m.set(target, texts[i]!));
  return m;
}

/**
 * Pushes `main` and every notes ref to `remote` (a smart-HTTP URL; a token may ride as the URL's
 * password, or as an extra header in `env`).
 */
export async function pushNotesFixture(fixture: NotesFixture, remote: string, env: NodeJS.ProcessEnv = {}): Promise<void> {
  await fixtureGit(fixture.dir, ['push', '-q', remote, 'refs/heads/main', ...fixture.namespaces.map((ns) => `refs/notes/${ns}`)], env);
}

/**
 * Waits until the marketplace's index holds every note of the fixture (list_namespaces catches the
 * index up and counts what it holds), bounded by `timeoutMs`.
 */
export async function waitForFixtureIndexed(baseUrl: string, repo: string, fixture: NotesFixture, token?: string, timeoutMs = 120_000): Promise<void> {
  const want = new Map<string, number>();
  for (const c of fixture.commits) want.set(c.note.namespace, (want.get(c.note.namespace) ?? 0) + 1);
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const res = await fetch(`${baseUrl}/api/git/${repo}/notes`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    const body = (await res.json()) as { data?: { name: string; notes: number }[] };
    last = `${res.status} ${JSON.stringify(body)}`;
    if (res.ok && body.data) {
      const got = new Map(body.data.map((d) => [d.name, d.notes]));
      if ([...want].every(([ns, count]) => got.get(ns) === count)) return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${repo}'s notes index: last answer ${last.slice(0, 500)}`);
}

/**
 * Hosts a built fixture on a running marketplace: creates `repo`, pushes the fixture with `token`
 * (ana's push token by default) and waits until the index holds every note, reading as that token.
 */
export async function hostFixture(server: NotesServer, repo: string, fixture: NotesFixture, opts: { private?: boolean; token?: string } = {}): Promise<void> {
  const token = opts.token ?? server.tokens.anaPush;
  await server.admin.createRepo(repo, { private: opts.private ?? false, objectFormat: 'sha1' });
  await pushNotesFixture(fixture, gitUrl(server, repo, token));
  await waitForFixtureIndexed(server.url, repo, fixture, token);
}

/** Fields as an API hit carries them: key -> values in order (the reference's own grouping). */
export function fieldsByKey(fields: FixtureField[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const f of fields) (out[f.key] ??= []).push(f.value);
  return out;
}

/** Whether a note carries a field `key` (case-insensitive) whose value contains (`~`) or equals (`=`) `value`. */
export function hasField(fields: FixtureField[], key: string, op: '~' | '=', value: string): boolean {
  const k = key.toLowerCase();
  return fields.some((f) => f.key.toLowerCase() === k && (op === '=' ? f.value === value : f.value.toLowerCase().includes(value.toLowerCase())));
}

/** A hit of the notes search API (the fields the tests read). */
export type ApiHit = SearchHit;

export interface SearchPage {
  data: ApiHit[];
  next_cursor: string | null;
  indexed: boolean;
  total: number;
}

/** Query parameters in order (`field` repeats). */
export type Params = [string, string][];

export async function getJson<T = Record<string, unknown>>(url: string, token?: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}

/**
 * Every hit of a search, following `next_cursor` until null (at most `maxPages` pages, so a
 * cursor that never ends fails the test instead of hanging it). `path` is the search path, such as
 * `/api/git/ana/app/notes/search`. Throws on a non-200 page.
 */
export async function searchAll(baseUrl: string, path: string, params: Params, opts: { token?: string; maxPages?: number } = {}): Promise<{ hits: ApiHit[]; pages: SearchPage[] }> {
  const hits: ApiHit[] = [];
  const pages: SearchPage[] = [];
  let cursor: string | null = null;
  const maxPages = opts.maxPages ?? 1000;
  for (let i = 0; i < maxPages; i++) {
    const qs: URLSearchParams = new URLSearchParams(cursor === null ? params : [...params, ['cursor', cursor]]);
    const { status, body }: { status: number; body: SearchPage } = await getJson<SearchPage>(`${baseUrl}${path}?${qs.toString()}`, opts.token);
    if (status !== 200) throw new Error(`search ${qs.toString().slice(0, 300)} answered ${status}: ${JSON.stringify(body).slice(0, 500)}`);
    pages.push(body);
    hits.push(...body.data);
    cursor = body.next_cursor;
    if (cursor === null) return { hits, pages };
  }
  throw new Error(`search ${new URLSearchParams(params).toString()} did not end within ${maxPages} pages`);
}

/** The built CLI (bin/mkt runs dist/; `npm run build` first). */
export const MKT_BIN = join(import.meta.dirname, '../../bin/mkt');

export interface MktResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built mkt binary with argument arrays, in `cwd`, with only PATH, a throwaway HOME and
 * the marketplace URL (and `env`) in its environment. Asynchronous: the server may be in-process.
 */
export function runMkt(args: string[], opts: { cwd: string; home: string; url: string; env?: NodeJS.ProcessEnv; stdin?: string }): Promise<MktResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [MKT_BIN, ...args],
      {
        cwd: opts.cwd,
        maxBuffer: 512 * 1024 * 1024,
        env: { PATH: process.env.PATH, HOME: opts.home, XDG_CONFIG_HOME: join(opts.home, 'config'), XDG_CACHE_HOME: join(opts.home, 'cache'), MKT_CREDENTIAL_STORE: 'file', MKT_MARKETPLACE_URL: opts.url, ...opts.env },
      },
      (err, stdout, stderr) => resolve({ code: err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0, stdout, stderr }),
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(opts.stdin ?? '');
  });
}
