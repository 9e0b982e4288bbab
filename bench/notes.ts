// Git notes at scale: a hosted repository with 100,000 commits and one note each (built with
// `git fast-import`). search_notes p50/p99 over the API against `git log --notes --grep` and
// `git grep` on the notes ref for the same words in the same run (target >= 100x faster);
// get_note requests/s of the built daemon as a ratio to bare node:http answering the same body
// (goal >= 0.65), beside the framework floor, in the guard's interleaved rounds (bench/_rounds.ts);
// put_note writes/s of the built daemon with 1 and 8 concurrent writers (goals >= 60 and >= 300); `mkt notes --help`
// start-up against `node -e 0`. BENCH_SECONDS sets each load phase (default 5) but get_note's,
// whose rounds are the guard's (MKT_BENCH_FLOOR_ROW_ROUNDS of MKT_BENCH_FLOOR_SECONDS);
// BENCH_NOTES_COMMITS shrinks the repository (default 100000, where the goals apply);
// BENCH_NOTES_ONLY=search,get,put,scripts runs only the phases named (for profiling one of them).
// The `scripts` phase (issue 36, bench/_notes-scripts.ts) builds its own repositories: NDJSON
// hits/s of a 10,000-hit search against reading the index in-process, owner-wide search over 100
// repositories, and the index size with fields and trigrams against without.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { request } from 'undici';
import { startService } from '../daemon/start.js';
import { createLogger } from '../daemon/logger.js';
import { run as runCli } from '../commands/root/run.js';
import type { IOStreams } from '../src/cli/io.js';
import { runScripts } from './_notes-scripts.js';
import { mulberry32, ratio, serveBuilt, startupEnv, timeCommand } from './_util.js';
import { measureRow } from './_rounds.js';

const quiet = createLogger({ level: 'silent' });
const OWNER = 'bench';
const REPO = 'big';


function vocabulary(rand: () => number, size: number): string[] {
  const syl = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'ze', 'pi', 'su', 'da', 'fe', 'go', 'hu', 'ji', 'bra', 'kel', 'mor', 'tin', 'vax'];
  const words = new Set<string>();
  while (words.size < size) {
    let w = '';
    const n = 2 + Math.floor(rand() * 3);
    for (let i = 0; i < n; i++) w += syl[Math.floor(rand() * syl.length)];
    words.add(w);
  }
  return [...words];
}

interface Built {
  commits: string[];
  notes: string[];
  ms: number;
}

/** One fast-import stream: n commits on main, then one notes commit with a note on each. */
async function buildRepository(gitDir: string, n: number): Promise<Built> {
  const rand = mulberry32(42);
  const vocab = vocabulary(rand, 4000);
  const reviewers = ['Ana', 'Bo', 'Cy', 'Dee', 'Eli', 'Fay'];
  const marks = join(gitDir, 'bench-marks');
  const started = performance.now();
  const child = spawn('git', ['fast-import', '--quiet', '--done', `--export-marks=${marks}`], { cwd: gitDir, stdio: ['pipe', 'ignore', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let chunks: string[] = [];
  let size = 0;
  const write = async (s: string): Promise<void> => {
    chunks.push(s);
    size += s.length;
    if (size < 1 << 20) return;
    const ok = child.stdin.write(chunks.join(''));
    chunks = [];
    size = 0;
    if (!ok) await new Promise((r) => child.stdin.once('drain', r));
  };
  const data = (s: string): string => `data ${Buffer.byteLength(s)}\n${s}\n`;
  const who = (i: number): string => `Bench <bench@example.com> ${1_700_000_000 + i} +0000`;
  for (let i = 1; i <= n; i++) await write(`commit refs/heads/main\nmark :${i}\nauthor ${who(i)}\ncommitter ${who(i)}\n${data(`change ${i}\n`)}`);
  const notes: string[] = [];
  await write(`commit refs/notes/commits\nauthor ${who(n)}\ncommitter ${who(n)}\n${data('bench notes\n')}`);
  for (let i = 1; i <= n; i++) {
    const words = Array.from({ length: 6 }, () => vocab[Math.floor(rand() * vocab.length)]).join(' ');
    const note = `Build ${i}: ${words}.\nReviewed-by: ${reviewers[i % reviewers.length]}\n`;
    notes.push(note);
    await write(`N inline :${i}\n${data(note)}`);
  }
  await write('done\n');
  child.stdin.end(chunks.join(''));
  const code = await exited;
  if (code !== 0) throw new Error(`git fast-import exited ${code}`);
  const ids = new Map<number, string>();
  for (const line of readFileSync(marks, 'utf8').split('\n')) {
    const m = /^:(\d+) ([0-9a-f]+)$/.exec(line);
    if (m) ids.set(Number(m[1]), m[2]!);
  }
  rmSync(marks);
  const commits = Array.from({ length: n }, (_, i) => ids.get(i + 1)!);
  return { commits, notes, ms: performance.now() - started };
}

/** Runs `mkt admin ...` in this process and returns its stdout. */
async function admin(dataDir: string, args: string[]): Promise<string> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const io: IOStreams = { stdin: Readable.from(['']), stdout, stderr, env: { ...process.env, MKT_DATA_DIR: dataDir }, cwd: dataDir };
  const code = await runCli(['admin', '--data-dir', dataDir, ...args], io);
  if (code !== 0) throw new Error(`mkt admin ${args.join(' ')} exited ${code}: ${err}`);
  return out;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Sequential search requests (one connection, keep-alive) for `seconds`; latencies in ms. */
async function searchLatencies(url: string, q: string, seconds: number): Promise<{ p50: number; p99: number; hits: number; count: number }> {
  const u = `${url}/api/git/${OWNER}/${REPO}/notes/search?q=${encodeURIComponent(q)}`;
  for (let i = 0; i < 10; i++) await (await request(u)).body.text();
  const times: number[] = [];
  let hits = 0;
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until || times.length < 20) {
    const t = performance.now();
    const res = await request(u);
    const body = (await res.body.json()) as { total: number };
    times.push(performance.now() - t);
    if (res.statusCode !== 200) throw new Error(`search answered ${res.statusCode}`);
    hits = body.total;
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), hits, count: times.length };
}

/** Median wall time of a git command over `runs` runs (after one warm-up), and its output lines. */
function gitTime(gitDir: string, args: string[], runs: number): { ms: number; lines: number } {
  const times: number[] = [];
  let lines = 0;
  for (let i = 0; i <= runs; i++) {
    const t = performance.now();
    let out = '';
    try {
      out = execFileSync('git', args, { cwd: gitDir, encoding: 'utf8', maxBuffer: 1 << 28 });
    } catch (err) {
      // git grep exits 1 when nothing matched.
      if ((err as { status?: number }).status !== 1) throw err;
    }
    if (i > 0) times.push(performance.now() - t);
    lines = out.split('\n').filter(Boolean).length;
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)]!, lines };
}

/** The put_note goals at 100,000 notes, in writes/s, by number of concurrent writers. */
const PUT_GOALS: Record<number, number> = { 1: 60, 8: 300 };
const GET_GOAL = 0.65;

/** PUTs of new content to distinct commits from `workers` concurrent clients for `seconds`. */
async function putRate(url: string, token: string, commits: string[], seconds: number, workers: number): Promise<{ rate: number; errors: number }> {
  let next = 0;
  let done = 0;
  let errors = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < until) {
        const i = next++;
        const target = commits[(i * 7919) % commits.length]!;
        const res = await request(`${url}/api/git/${OWNER}/${REPO}/notes/${target}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ content: `Benchmarked write ${i} (${workers} writers)\n` }),
        });
        await res.body.text();
        if (res.statusCode === 200) done++;
        else errors++;
      }
    }),
  );
  return { rate: done / ((performance.now() - started) / 1000), errors };
}

export async function run(): Promise<void> {
  const n = Number(process.env.BENCH_NOTES_COMMITS ?? 100_000);
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const only = process.env.BENCH_NOTES_ONLY?.split(',');
  const phase = (name: 'search' | 'get' | 'put' | 'scripts') => !only || only.includes(name);
  // `mkt notes --help` loads no verb, simple-git or undici: start-up like the other nouns.
  const env = startupEnv();
  const node = timeCommand(process.execPath, ['-e', '0'], 10, env);
  const help = timeCommand(process.execPath, [join(import.meta.dirname, '..', 'bin', 'mkt'), 'notes', '--help'], 10, env);
  console.log(`mkt notes --help: ${help.toFixed(1)} ms, ratio ${ratio(help, node)} to node -e 0 (${node.toFixed(1)} ms; target <= 1.70)`);
  if (phase('scripts')) await runScripts();
  if (!phase('search') && !phase('get') && !phase('put')) return;
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-notes-'));
  try {
    await admin(dir, ['user', 'add', OWNER, '--email', 'bench@example.com']);
    const token = /\bmkt_[A-Za-z0-9_-]+/.exec(await admin(dir, ['token', 'create', OWNER, '--scope', 'push']))?.[0];
    if (!token) throw new Error('mkt admin token create printed no token');
    await admin(dir, ['repo', 'create', `${OWNER}/${REPO}`]);
    const gitDir = join(dir, 'repos', OWNER, `${REPO}.git`);
    const built = await buildRepository(gitDir, n);
    console.log(`repository: ${n} commits with one note each, built by git fast-import in ${(built.ms / 1000).toFixed(1)} s`);
    const t = performance.now();
    await admin(dir, ['reindex', `${OWNER}/${REPO}`]);
    console.log(`mkt admin reindex: ${((performance.now() - t) / 1000).toFixed(1)} s`);

    const svc = await startService('marketplace', { host: '127.0.0.1', port: 0, dataDir: dir, options: {}, env: {}, logger: quiet, out: { write: () => true } as unknown as NodeJS.WritableStream });
    try {
      // Words taken from real notes, so every query has hits: one word, three words of one note, a phrase.
      // git matches whole words too (\\b, -w), so both sides find the same notes.
      const words = (i: number): string[] => built.notes[i]!.split(':')[1]!.replace(/[.\n].*$/s, '').trim().split(' ');
      const one = words(Math.floor(n / 3))[0]!;
      const three = words(Math.floor(n / 2)).slice(0, 3);
      const phrase = words(Math.floor((2 * n) / 3)).slice(1, 3).join(' ');
      const cases: { name: string; q: string; git: string[][] }[] = [
        { name: `1 word (${one})`, q: one, git: [['log', '--notes', '-E', `--grep=\\b${one}\\b`, '--format=%H', 'main'], ['grep', '-l', '-w', '-F', one, 'refs/notes/commits']] },
        {
          name: `3 words (${three.join(' ')})`,
          q: three.join(' '),
          git: [['log', '--notes', '--all-match', '-E', ...three.map((w) => `--grep=\\b${w}\\b`), '--format=%H', 'main'], ['grep', '-l', '-w', '--all-match', ...three.flatMap((w) => ['-e', w]), 'refs/notes/commits']],
        },
        { name: `phrase ("${phrase}")`, q: `"${phrase}"`, git: [['log', '--notes', '-E', `--grep=\\b${phrase}\\b`, '--format=%H', 'main'], ['grep', '-l', '-w', '-F', phrase, 'refs/notes/commits']] },
      ];
      const gitRuns = n >= 50_000 ? 3 : 5;
      for (const c of phase('search') ? cases : []) {
        const api = await searchLatencies(svc.url, c.q, Math.max(1, seconds / 2));
        const log = gitTime(gitDir, c.git[0]!, gitRuns);
        const grep = gitTime(gitDir, c.git[1]!, gitRuns);
        console.log(`search ${c.name}: API p50 ${api.p50.toFixed(2)} ms p99 ${api.p99.toFixed(2)} ms (${api.count} requests, ${api.hits} hits)`);
        console.log(
          `  git log --notes --grep ${log.ms.toFixed(0)} ms (${log.lines} commits): ratio ${ratio(log.ms, api.p50)}x at p50, ${ratio(log.ms, api.p99)}x at p99 (target >= 100)` +
            `; git grep on the notes ref ${grep.ms.toFixed(0)} ms (${grep.lines}): ratio ${ratio(grep.ms, api.p50)}x at p50`,
        );
      }

      const target = built.commits[Math.floor(n / 4)]!;
      if (phase('get')) {
        // As deployed: the built daemon on the same data dir, logging at info to a pipe.
        const built = await serveBuilt('marketplace', dir);
        try {
          // In interleaved rounds beside bare node:http and the floor, as the guard's rows: one
          // window of each put this row anywhere from 0.55 to 1.10 between runs.
          await measureRow('get_note', `${built.url}/api/git/${OWNER}/${REPO}/notes/${target}`, built.pid, {}, GET_GOAL);
        } finally {
          await built.stop();
        }
      }

      if (phase('put')) {
        // As deployed, as get_note: the built daemon in a process of its own, so the writers'
        // HTTP client (in this process) does not share the server's one thread.
        const daemon = await serveBuilt('marketplace', dir);
        try {
          for (const workers of [1, 8]) {
            const w = await putRate(daemon.url, token, built.commits, seconds, workers);
            const goal = `goal >= ${PUT_GOALS[workers]}${n >= 100_000 ? '' : ` at 100,000 notes; this run has ${n}`}`;
            console.log(`put_note, ${workers} writer${workers === 1 ? '' : 's'}: ${w.rate.toFixed(1)} writes/s (${goal})${w.errors ? ` (${w.errors} errors)` : ''}`);
          }
        } finally {
          await daemon.stop();
        }
      }
    } finally {
      await svc.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
