// Notes search for scripts (issue 36), a phase of bench/notes.ts: every hit of a 10,000-hit search
// paged through the real server (limit=200, next_cursor) and written as NDJSON, as a ratio to
// reading the same rows and columns from the SQLite index in-process; owner-wide search over 100
// repositories, p50/p99; and the index's size with note_fields and notes_tri against without.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { AccountsAdmin } from '../daemon/services/marketplace/accounts/admin.js';
import { fieldsObject, type NoteField } from '../src/notes/fields.js';
import { buildNotesFixture, fixtureGit, messageIdOf, type NotesFixture } from '../test/helpers/notes-fixture.js';
import { median, ratio, spawnListening, type ServerProcess } from './_util.js';

const ROOT = join(import.meta.dirname, '..');
const OWNER = 'bench';
const REPO = 'scripts';
const WIDE_OWNER = 'wide';
const WIDE_REPOS = 100;
const PAGE = 200;

/** A sink that counts bytes and keeps none: the NDJSON goes nowhere, as into `> /dev/null`. */
function sink(): Writable & { bytes: number } {
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      w.bytes += chunk.length;
      cb();
    },
  }) as Writable & { bytes: number };
  w.bytes = 0;
  return w;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}


/** `mkt serve marketplace` from the sources, in a process of its own (the client is this one). */
function serve(dataDir: string): Promise<ServerProcess> {
  const args = ['--import', 'tsx', join(ROOT, 'commands/root/main.ts'), 'serve', 'marketplace', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir];
  return spawnListening('mkt serve marketplace', args, { MKT_LOG_LEVEL: 'info' });
}

/** Pushes the fixture's main and notes refs straight into a hosted bare repository. */
async function pushInto(fixture: NotesFixture, bare: string): Promise<void> {
  await fixtureGit(fixture.dir, ['push', '-q', bare, 'refs/heads/main', ...fixture.namespaces.map((ns) => `refs/notes/${ns}`)]);
}

interface Hit {
  namespace: string;
  target: string;
}

/** Every page of a search, each hit written as one NDJSON line into `out`; the hits' keys. */
async function streamSearch(url: string, params: Record<string, string>, out: Writable): Promise<{ keys: string[]; pages: number }> {
  const keys: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const qs = new URLSearchParams({ ...params, limit: String(PAGE), ...(cursor ? { cursor } : {}) });
    const res = await request(`${url}?${qs.toString()}`);
    const body = (await res.body.json()) as { data: Hit[]; next_cursor: string | null };
    if (res.statusCode !== 200) throw new Error(`search answered ${res.statusCode}: ${JSON.stringify(body).slice(0, 300)}`);
    for (const h of body.data) {
      out.write(`${JSON.stringify(h)}\n`);
      keys.push(`${h.namespace} ${h.target}`);
    }
    cursor = body.next_cursor;
    pages++;
  } while (cursor !== null);
  return { keys, pages };
}

interface NoteRow {
  id: number;
  namespace: string;
  target: string;
  object_type: string;
  note_author: string | null;
  note_email: string | null;
  note_at: number | null;
  commit_subject: string | null;
  commit_author: string | null;
  content: string;
}

/**
 * The same hits read from the index in-process: the SQLite file with better-sqlite3, pages of
 * 200 notes in id order and their fields, each made into the API's hit object and written as NDJSON.
 */
function readIndex(file: string, out: Writable): { keys: string[] } {
  const db = new Database(file, { readonly: true });
  try {
    const repoId = (db.prepare('SELECT repo_id FROM notes GROUP BY repo_id ORDER BY COUNT(*) DESC LIMIT 1').get() as { repo_id: string }).repo_id;
    const page = db.prepare(
      `SELECT id, namespace, target, object_type, note_author, note_email, note_at, commit_subject, commit_author, CAST(content AS TEXT) AS content
       FROM notes WHERE repo_id = ? AND id > ? ORDER BY id LIMIT ?`,
    );
    const fields = db.prepare('SELECT note_id, key, value FROM note_fields WHERE note_id IN (SELECT value FROM json_each(?)) ORDER BY note_id, ord');
    const keys: string[] = [];
    let after = 0;
    for (;;) {
      const rows = page.all(repoId, after, PAGE) as NoteRow[];
      if (!rows.length) break;
      const byNote = new Map<number, NoteField[]>();
      for (const f of fields.all(JSON.stringify(rows.map((r) => r.id))) as { note_id: number; key: string; value: string }[]) {
        const list = byNote.get(f.note_id);
        if (list) list.push({ key: f.key, value: f.value });
        else byNote.set(f.note_id, [{ key: f.key, value: f.value }]);
      }
      for (const r of rows) {
        const hit = {
          repo: `${OWNER}/${REPO}`,
          namespace: r.namespace,
          git_ref: `refs/notes/${r.namespace}`,
          target: r.target,
          object: r.target,
          object_type: r.object_type,
          note_author: r.note_author,
          note_email: r.note_email,
          note_at: r.note_at === null ? null : new Date(r.note_at).toISOString(),
          commit_subject: r.commit_subject,
          commit_author: r.commit_author,
          snippet: r.content.split('\n', 1)[0]!.slice(0, 200),
          score: 0,
          lines: [],
          fields: fieldsObject(byNote.get(r.id) ?? []),
        };
        out.write(`${JSON.stringify(hit)}\n`);
        keys.push(`${r.namespace} ${r.target}`);
      }
      after = rows[rows.length - 1]!.id;
    }
    return { keys };
  } finally {
    db.close();
  }
}

/** Bytes per object of the notes index (SQLite's dbstat), in the groups the issue compares. */
function indexSize(file: string): { base: number; fields: number; trigrams: number; parts: Record<string, number> } {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare("SELECT name, SUM(pgsize) AS bytes FROM dbstat WHERE name LIKE 'note%' OR name LIKE 'sqlite_autoindex_note%' GROUP BY name").all() as { name: string; bytes: number }[];
    const parts = Object.fromEntries(rows.map((r) => [r.name, r.bytes]));
    let base = 0;
    let fields = 0;
    let trigrams = 0;
    for (const r of rows) {
      if (r.name.startsWith('notes_tri')) trigrams += r.bytes;
      else if (r.name.startsWith('note_fields')) fields += r.bytes;
      else if (r.name === 'notes' || r.name.startsWith('notes_fts') || r.name.startsWith('sqlite_autoindex_notes') || r.name === 'notes_repo_order') base += r.bytes;
    }
    return { base, fields, trigrams, parts };
  } finally {
    db.close();
  }
}

/** Sequential GETs of `url` (one connection, keep-alive): `count` timed after a few warm-ups. */
async function latencies(url: string, count: number): Promise<{ p50: number; p99: number; hits: number }> {
  let hits = 0;
  const once = async () => {
    const res = await request(url);
    const body = (await res.body.json()) as { data: unknown[] };
    if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${JSON.stringify(body).slice(0, 300)}`);
    hits = body.data.length;
  };
  for (let i = 0; i < 5; i++) await once();
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await once();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), hits };
}

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;

export async function runScripts(): Promise<void> {
  const notes = Number(process.env.BENCH_NOTES_SCRIPTS_NOTES ?? 10_000);
  const requests = Number(process.env.BENCH_NOTES_SCRIPTS_REQUESTS ?? 200);
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-notes-scripts-'));
  try {
    const data = join(dir, 'data');
    mkdirSync(data);
    const admin = await AccountsAdmin.open({ dataDir: data });
    let fixture: NotesFixture;
    let small: NotesFixture;
    try {
      await admin.addUser({ name: OWNER, email: 'bench@example.com' });
      await admin.addUser({ name: WIDE_OWNER, email: 'wide@example.com' });
      let t = performance.now();
      fixture = await buildNotesFixture(dir, { commits: notes, name: 'fixture' });
      console.log(`fixture: ${notes} notes in three shapes (review trailers, ci key=value, perf JSON lines), git fast-import ${((performance.now() - t) / 1000).toFixed(1)} s`);
      const { dir: bare } = await admin.createRepo(`${OWNER}/${REPO}`, { private: false, objectFormat: 'sha1' });
      await pushInto(fixture, bare);
      t = performance.now();
      await admin.reindex(`${OWNER}/${REPO}`);
      console.log(`mkt admin reindex ${OWNER}/${REPO}: ${((performance.now() - t) / 1000).toFixed(1)} s (metadata, fields, FTS5 words and trigrams)`);

      // Measured while the data dir holds this one repository's notes only.
      const size = indexSize(join(data, 'marketplace.db'));
      const without = size.base;
      const withAll = size.base + size.fields + size.trigrams;
      console.log(
        `index size (dbstat, ${notes} notes): without fields and trigrams (notes + notes_fts) ${mb(without)}; ` +
          `+ note_fields ${mb(size.fields)}, + notes_tri ${mb(size.trigrams)}; with both ${mb(withAll)}, ratio ${ratio(withAll, without)}`,
      );
      console.log(`  by object: ${Object.entries(size.parts).map(([k, v]) => `${k} ${mb(v)}`).join(', ')}`);

      // The owner-wide repositories: one small fixture (100 notes) pushed into each of 100.
      small = await buildNotesFixture(dir, { commits: 100, name: 'small', seed: 7 });
      t = performance.now();
      for (let i = 0; i < WIDE_REPOS; i++) {
        const { dir: b } = await admin.createRepo(`${WIDE_OWNER}/r${String(i).padStart(3, '0')}`, { private: false, objectFormat: 'sha1' });
        await pushInto(small, b);
      }
      for (let i = 0; i < WIDE_REPOS; i++) await admin.reindex(`${WIDE_OWNER}/r${String(i).padStart(3, '0')}`);
      console.log(`owner ${WIDE_OWNER}: ${WIDE_REPOS} repositories of ${small.commits.length} notes each, created, pushed and indexed in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    } finally {
      await admin.close();
    }

    const server = await serve(data);
    try {
      // NDJSON: every note (no q: index order), pages of 200 through next_cursor.
      const searchUrl = `${server.url}/api/git/${OWNER}/${REPO}/notes/search`;
      const apiRuns: number[] = [];
      const floorRuns: number[] = [];
      let apiKeys: string[] = [];
      let floorKeys: string[] = [];
      let pages = 0;
      let bytes = 0;
      for (let run = 0; run < 4; run++) {
        // The first run of each warms the server and the statements; runs alternate.
        const out = sink();
        let t = performance.now();
        const api = await streamSearch(searchUrl, {}, out);
        const apiMs = performance.now() - t;
        const floorOut = sink();
        t = performance.now();
        const floor = readIndex(join(data, 'marketplace.db'), floorOut);
        const floorMs = performance.now() - t;
        if (run > 0) {
          apiRuns.push(api.keys.length / (apiMs / 1000));
          floorRuns.push(floor.keys.length / (floorMs / 1000));
        }
        [apiKeys, floorKeys, pages, bytes] = [api.keys, floor.keys, api.pages, out.bytes];
      }
      const same = apiKeys.length === floorKeys.length && [...apiKeys].sort().join('\n') === [...floorKeys].sort().join('\n');
      if (!same) throw new Error(`the API streamed ${apiKeys.length} hits, the index holds ${floorKeys.length}: not the same notes`);
      const api = median(apiRuns);
      const floor = median(floorRuns);
      console.log(
        `NDJSON, every hit of a ${apiKeys.length}-hit search (${pages} pages of ${PAGE}, ${mb(bytes)}): API ${api.toFixed(0)} hits/s; ` +
          `the same rows read from the SQLite index in-process ${floor.toFixed(0)} hits/s; ratio ${ratio(api, floor)} (median of 3 runs each)`,
      );

      // Owner-wide: queries with one hit per repository, so every one of the 100 is searched.
      const withId = small.commits.findIndex((c) => c.note.messageId !== undefined);
      const id = messageIdOf(withId);
      const urlNote = small.commits.find((c) => c.note.url)!;
      const token = /\/(\d{5})\?/.exec(urlNote.note.url!)![1]!;
      const cases: { name: string; params: Record<string, string> }[] = [
        { name: `words (${token}, in one note of each)`, params: { q: token, limit: String(PAGE) } },
        { name: `literal (a message id)`, params: { mode: 'literal', q: id, limit: String(PAGE) } },
        { name: `regex (<\\d+\\.${id.slice(16, 21)}\\.r\\d+@)`, params: { mode: 'regex', q: `<\\d+\\.${id.slice(16, 21)}\\.r\\d+@`, limit: String(PAGE) } },
        { name: 'field (Code-Review~+1, first page of 50)', params: { field: 'Code-Review~+1' } },
      ];
      for (const c of cases) {
        const qs = new URLSearchParams(c.params).toString();
        const wide = await latencies(`${server.url}/api/git/${WIDE_OWNER}/notes/search?${qs}`, requests);
        const one = await latencies(`${server.url}/api/git/${WIDE_OWNER}/r000/notes/search?${qs}`, requests);
        console.log(
          `owner-wide search over ${WIDE_REPOS} repositories, ${c.name}: p50 ${wide.p50.toFixed(1)} ms p99 ${wide.p99.toFixed(1)} ms (${requests} requests, ${wide.hits} hits); ` +
            `one repository p50 ${one.p50.toFixed(2)} ms p99 ${one.p99.toFixed(2)} ms (${one.hits} hits)`,
        );
      }
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
