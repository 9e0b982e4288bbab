// The README walkthrough: the shell blocks of "The first five minutes" turned into one bash script
// that runs them as written and checks each line's exit status and the output its comment quotes.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { tempDir } from './tmp.js';

export const TOUR_HEADING = '## The first five minutes';
const checkout = join(import.meta.dirname, '../..');

/**
 * One command of the tour, as the reader types it. The comment convention (the README states it):
 * a comment starting `exit N` (then `:` or nothing) gives the line's exit status, else it must
 * exit 0 (a line with `|| ...` handles its own failure); every "double-quoted" text in a comment
 * is printed by the line (stdout or stderr); the rest of a comment is prose for the reader.
 */
export interface TourCommand {
  /** README line of its first line. */
  line: number;
  /** The command without its comment; a heredoc keeps its body and terminator. */
  code: string;
  /** As written, comment included (for the transcript). */
  shown: string;
  exit: number;
  prints: string[];
  /** `mkt serve ...`: a server the reader runs in a terminal of its own, or with `&`. */
  serve: boolean;
}

/** The ```sh blocks under the tour heading, up to the next level-2 heading, in order. */
export function tourBlocks(markdown: string): { line: number; lines: string[] }[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(TOUR_HEADING);
  if (start < 0) throw new Error(`README.md has no "${TOUR_HEADING}" heading`);
  const blocks: { line: number; lines: string[] }[] = [];
  let open: { line: number; lines: string[] } | null = null;
  let other = false;
  for (let i = start + 1; i < lines.length; i++) {
    const l = lines[i]!;
    if (open === null && !other && /^## /.test(l)) break;
    if (/^```/.test(l)) {
      if (open) {
        blocks.push(open);
        open = null;
      } else if (other) other = false;
      else if (/^```(sh|bash)\s*$/.test(l)) open = { line: i + 2, lines: [] };
      else other = true;
      continue;
    }
    open?.lines.push(l);
  }
  return blocks;
}

/** The line without its trailing comment: a `#` that starts a word outside quotes. */
export function splitComment(line: string): { code: string; comment?: string } {
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
    } else if (c === '\\') {
      i++;
    } else if (quote === '"') {
      if (c === '"') quote = null;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
      return { code: line.slice(0, i).trimEnd(), comment: line.slice(i + 1).trim() };
    }
  }
  return { code: line.trimEnd() };
}

/** What a comment promises: the exit status and the texts the line prints. */
export function promises(comment: string | undefined): { exit: number; prints: string[] } {
  if (comment === undefined) return { exit: 0, prints: [] };
  const exit = /^exit (\d+)(?::|$)/.exec(comment);
  return { exit: exit ? Number(exit[1]) : 0, prints: [...comment.matchAll(/"([^"]+)"/g)].map((m) => m[1]!) };
}

/** The tour's commands in order: blank and comment-only lines dropped, heredoc bodies kept. */
export function tourCommands(markdown: string): TourCommand[] {
  const out: TourCommand[] = [];
  for (const block of tourBlocks(markdown)) {
    for (let i = 0; i < block.lines.length; i++) {
      const first = i;
      let shown = block.lines[i]!;
      while (shown.endsWith('\\') && i + 1 < block.lines.length) shown += `\n${block.lines[++i]!}`;
      const { code: head, comment } = splitComment(shown);
      if (head.trim() === '') continue;
      let code = head;
      const heredoc = /<<(-?)\s*(['"]?)([A-Za-z_]\w*)\2/.exec(head);
      if (heredoc) {
        const strip = heredoc[1] === '-';
        while (i + 1 < block.lines.length) {
          const body = block.lines[++i]!;
          code += `\n${body}`;
          shown += `\n${body}`;
          if ((strip ? body.replace(/^\t+/, '') : body) === heredoc[3]) break;
        }
      }
      out.push({
        line: block.line + first,
        code,
        shown,
        ...promises(comment),
        serve: /^(?:[A-Za-z_]\w*=\S*\s+)*mkt\s+serve\b/.test(head.trim()),
      });
    }
  }
  return out;
}

/** The ports the tour's URLs name (the servers' default ports, as the reader meets them). */
export function tourPorts(markdown: string): number[] {
  const text = tourBlocks(markdown).flatMap((b) => b.lines).join('\n');
  return [...new Set([...text.matchAll(/(?:127\.0\.0\.1|localhost):(\d+)/g)].map((m) => Number(m[1])))].sort();
}

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** Bounds the wait for a server's `listening on` line; a loaded two-core machine is slow to start node. */
const LISTEN_DEADLINE_S = 120;

/**
 * The bash script: each command runs in this shell (so `cd`, variables and `export` carry on) with
 * its output kept in `work`, then its status and quoted texts are checked; a server runs in the
 * background and the script goes on once it printed `listening on`. The EXIT trap stops the
 * servers with SIGTERM and records how each exited, also after a failure.
 */
export function walkthroughScript(commands: TourCommand[], work: string): string {
  const head = `set -uo pipefail
__work=${shq(work)}
__pids=()
__stop() {
  local p
  for p in \${__pids[@]+"\${__pids[@]}"}; do kill -TERM "$p" 2>/dev/null; done
  for p in \${__pids[@]+"\${__pids[@]}"}; do wait "$p"; echo "$p $?" >>"$__work/stopped"; done
}
trap __stop EXIT
__fail() { printf '\\nREADME.md:%s: %s\\n' "$1" "$2" | tee "$__work/failure"; exit 1; }
__expect() {
  local line=$1 rc=$2 want=$3 out=$4 s
  shift 4
  [ "$rc" -eq "$want" ] || __fail "$line" "exit $rc, where the README expects $want"
  for s in "$@"; do grep -qF -- "$s" "$out" || __fail "$line" "the output lacks \\"$s\\", which the README's comment quotes"; done
}
__listening() {
  local deadline=$((SECONDS + ${LISTEN_DEADLINE_S}))
  until grep -q 'listening on ' "$3"; do
    kill -0 "$2" 2>/dev/null || { cat "$3"; __fail "$1" "the server exited before it printed 'listening on'"; }
    [ "$SECONDS" -lt "$deadline" ] || { cat "$3"; __fail "$1" "no 'listening on' within ${LISTEN_DEADLINE_S} s"; }
    sleep 0.1
  done
  cat "$3"
}
`;
  const steps = commands.map((c, n) => {
    const checks = [String(c.line), '"$__rc"', String(c.exit), `"$__work/out.${n}"`, ...c.prints.map(shq)].join(' ');
    if (c.serve) {
      const log = `"$__work/serve.${n}.log"`;
      return `printf '\\n$ %s\\n(in the background, as in a terminal of its own)\\n' ${shq(c.shown)}
${c.code.replace(/\s*&$/, '')} >${log} 2>&1 &
__pids+=("$!")
echo "$!" >>"$__work/pids"
__listening ${c.line} "$!" ${log}
cp ${log} "$__work/out.${n}"
__rc=0
__expect ${checks}
`;
    }
    return `printf '\\n$ %s\\n' ${shq(c.shown)}
{ ${c.code}
} >"$__work/out.${n}" 2>&1
__rc=$?
cat "$__work/out.${n}"
__expect ${checks}
`;
  });
  return `${head}\n${steps.join('\n')}\nprintf '\\nthe walkthrough ran to its end\\n'\n`;
}

/**
 * How to run bash with a loopback of its own: a new user and network namespace (unprivileged on
 * most Linux systems), so the tour's default ports are free whatever this machine runs. Undefined
 * where that is not allowed (another OS, user namespaces switched off, no `ip`).
 */
function isolatedBash(): string[] | undefined {
  if (process.platform !== 'linux') return undefined;
  for (const ip of ['ip', '/usr/sbin/ip', '/sbin/ip']) {
    const probe = spawnSync('unshare', ['--user', '--map-root-user', '--net', ip, 'link', 'set', 'lo', 'up'], { stdio: 'ignore' });
    if (probe.status === 0) return ['unshare', '--user', '--map-root-user', '--net', 'sh', '-c', `${ip} link set lo up && exec bash "$0"`];
  }
  return undefined;
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

export interface WalkthroughResult {
  /** `README.md:<line>: <why>` for the first broken promise; undefined when the tour ran through. */
  failure?: string;
  status: number | null;
  /** What the reader would have seen: each command and its output, then the servers' logs. */
  transcript: string;
  /** Each server's exit status after the SIGTERM that ends the tour. */
  stopped: number[];
  /** Servers still running after the script ended (killed then; the tour must leave none). */
  leftover: number[];
  isolated: boolean;
  scratch: string;
}

export interface WalkthroughOptions {
  /** 'auto': a network namespace when the machine allows one; false: the host's ports. */
  isolate?: 'auto' | false;
  /** Bounds the whole tour (a hang is a failure, not a stuck test run). */
  timeoutMs?: number;
  /**
   * Without a namespace, how long a default port another process holds may take to come free
   * (another test of the same run may hold one for a moment: test/e2e/serve.test.ts holds 7071).
   */
  busyPortWaitMs?: number;
}

/**
 * Runs the tour in a scratch directory with a fresh HOME (the tour starts there), the checkout's
 * `bin/mkt` as `mkt` on PATH, no MKT_* variable from this process, and removes it all afterwards.
 */
export async function runWalkthrough(markdown: string, opts: WalkthroughOptions = {}): Promise<WalkthroughResult> {
  const commands = tourCommands(markdown);
  if (commands.length === 0) throw new Error(`no shell commands under "${TOUR_HEADING}"`);
  if (!existsSync(join(checkout, 'dist/cli.cjs'))) throw new Error('bin/mkt needs the build: run `npm run build` first');
  const scratch = tempDir('mkt-readme-');
  const [home, bin, work, tmp] = ['home', 'bin', 'work', 'tmp'].map((d) => join(scratch.path, d)) as [string, string, string, string];
  for (const d of [home, bin, work, tmp]) mkdirSync(d);
  const result: WalkthroughResult = { status: null, transcript: '', stopped: [], leftover: [], isolated: false, scratch: scratch.path };
  try {
    // The scriptable form of the README's `alias mkt="$PWD/bin/mkt"`.
    writeFileSync(join(bin, 'mkt'), `#!/bin/sh\nexec ${shq(process.execPath)} ${shq(join(checkout, 'bin/mkt'))} "$@"\n`);
    chmodSync(join(bin, 'mkt'), 0o755);
    const script = join(work, 'tour.sh');
    writeFileSync(script, walkthroughScript(commands, work));

    // The README names what the tour uses besides mkt; a missing one is said as such, not as exit 127.
    const missing = ['bash', 'git', 'openssl', 'jq'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0);
    if (missing.length > 0) {
      result.failure = `the README's tour uses ${missing.join(', ')}, not found on PATH`;
      return result;
    }
    const netns = opts.isolate === false ? undefined : isolatedBash();
    result.isolated = netns !== undefined;
    if (!netns) {
      const deadline = Date.now() + (opts.busyPortWaitMs ?? 90_000);
      for (const port of tourPorts(markdown)) {
        while (!(await portFree(port)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
        if (!(await portFree(port))) {
          result.failure = `port ${port} is in use on this machine: the README walkthrough runs the tour unchanged on its default ports (and no network namespace is available here to give it its own); stop what listens on ${port} and run it again`;
          return result;
        }
      }
    }
    const env: NodeJS.ProcessEnv = {
      PATH: [bin, dirname(process.execPath), process.env.PATH ?? '/usr/bin:/bin'].join(':'),
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_DATA_HOME: join(home, '.local/share'),
      XDG_STATE_HOME: join(home, '.local/state'),
      XDG_CACHE_HOME: join(home, '.cache'),
      TMPDIR: tmp,
      LANG: 'C.UTF-8',
      MKT_CREDENTIAL_STORE: 'file',
      GIT_AUTHOR_NAME: 'Ana',
      GIT_AUTHOR_EMAIL: 'ana@example.com',
      GIT_COMMITTER_NAME: 'Ana',
      GIT_COMMITTER_EMAIL: 'ana@example.com',
      GIT_CONFIG_NOSYSTEM: '1',
    };
    const argv = netns ? [...netns, script] : ['bash', script];
    const child = spawn(argv[0]!, argv.slice(1), { cwd: home, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (c: Buffer) => (result.transcript += c.toString()));
    child.stderr.on('data', (c: Buffer) => (result.transcript += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const timer = setTimeout(() => {
      result.failure = `the tour did not end within ${(opts.timeoutMs ?? 300_000) / 1000} s`;
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
    }, opts.timeoutMs ?? 300_000);
    result.status = await exited;
    clearTimeout(timer);

    const read = (f: string): string => (existsSync(join(work, f)) ? readFileSync(join(work, f), 'utf8') : '');
    result.failure ??= read('failure').trim() || (result.status === 0 ? undefined : `bash exited with ${result.status}`);
    result.stopped = read('stopped').split('\n').filter(Boolean).map((l) => Number(l.split(' ')[1]));
    const pids = read('pids').split('\n').filter(Boolean).map(Number);
    if (!(await until(() => !pids.some(alive), 30_000))) {
      result.leftover = pids.filter(alive);
      for (const pid of result.leftover) process.kill(pid, 'SIGKILL');
    }
    if (result.failure) {
      for (const log of readdirSync(work).filter((f) => f.startsWith('serve.')).sort()) {
        result.transcript += `\n--- ${log} (last lines) ---\n${read(log).split('\n').slice(-15).join('\n')}`;
      }
    }
    return result;
  } finally {
    scratch.remove();
  }
}
