// Splits a `perf record -g` profile of a node server into where its time goes, in µs per request:
// each sample is charged to the innermost frame of its stack that names a known part (SQLite,
// HMAC, node's HTTP parser, pino, a plugin of ours, ...), so the parts add up to the whole and
// native time lands where it is spent, not in the JS frame that called it (V8's --cpu-prof does
// that). Used to compare a row with its framework floor (bench/README.md, "Where a row's own time goes").
//
//   node --perf-basic-prof bin/mkt serve marketplace ...   (or bench/_floor-server.mjs)
//   perf record -F 999 -g -p <pid> -o row.data -- sleep 5   (while the load runs)
//   node --import tsx bench/_perf-split.ts row.data <requests/s during the recording>
//
// V8 reuses the addresses of code it freed, and perf names a hot function after the oldest entry
// of /tmp/perf-<pid>.map that covers it (often a module's start-up code); the map is first
// rewritten so that a later entry replaces the earlier ones it overlaps.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** Parts in the order they are tried against each frame; the first that matches names it. */
export const PARTS: readonly (readonly [string, RegExp])[] = [
  ['tcp write (writev syscall)', /__GI___writev|do_writev/],
  ['tcp read, epoll, other syscalls', /do_syscall_64|epoll/],
  ['sqlite3 step (native)', /sqlite3_step|sqlite3_reset|sqlite3VdbeExec/],
  ['row objects (better-sqlite3)', /GetFlatRowJS|GetRowJS|Data::GetValueJS/],
  ['better-sqlite3 bind, other', /Statement::|better_sqlite3|sql-sqlite\.[jt]s/],
  ['hmac, sha-256', /node::crypto|Hmac|EVP_|SHA256|sha256_block|hashLicenseKey/],
  ['ed25519 sign', /ED25519|ed25519|Sign::/],
  ['license key parse', /license-key\.[jt]s/],
  ['licenses domain', /licenses\.[jt]s|license-sql\.[jt]s/],
  ['failure window', /failure-window\.[jt]s|limiter/],
  ['sync domain', /services\/marketplace\/sync\/|store\/sync/],
  ['monitor domain', /services\/monitor\/|store\/monitor/],
  ['tickets domain', /services\/tickets\/|store\/tickets/],
  ['notes domain', /services\/marketplace\/notes\/|src\/notes\/|store\/repos-sql|store\/notes/],
  ['direct lanes, server classes', /direct-routes\.[jt]s|http-server\.[jt]s/],
  ['auth', /plugins\/auth|bearer|session|sync-token/],
  ['pino, request line', /pino\/|request-log\.[jt]s|logger\.[jt]s|sonic-boom/],
  ['json parse', /secure-json-parse|JsonParse|JSON/],
  ['body plugin', /daemon\/plugins\/body\.[jt]s/],
  ['ajv validate', /validate|ajv/],
  ['serialize (fast-json-stringify)', /fast-json-stringify|serializ/],
  ['fastify', /node_modules\/fastify\/|find-my-way|avvio/],
  ['node http', /_http_|llhttp|Parser::/],
  ['node streams, net', /internal\/streams|stream_base|node:net|Stream/],
  ['promises, ticks', /task_queues|Microtask|Promise|AsyncFunction/],
  ['gc', /Heap::|Scavenger|MarkCompact|GCTracer|Sweeper/],
  ['v8 compiler', /compiler::|Compiler|Compile/],
];

/** Rewrites a perf map so that later entries win over the earlier ones they overlap. */
function cleanPerfMap(path: string): void {
  const starts: number[] = [];
  const byStart = new Map<number, { end: number; name: string }>();
  const firstAtOrAfter = (x: number): number => {
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  for (const line of readFileSync(path, 'latin1').split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/i.exec(line);
    if (!m) continue;
    const start = parseInt(m[1]!, 16);
    const end = start + parseInt(m[2]!, 16);
    let i = firstAtOrAfter(start);
    if (i > 0 && byStart.get(starts[i - 1]!)!.end > start) byStart.delete(starts.splice(--i, 1)[0]!);
    while (i < starts.length && starts[i]! < end) byStart.delete(starts.splice(i, 1)[0]!);
    starts.splice(i, 0, start);
    byStart.set(start, { end, name: m[3]! });
  }
  writeFileSync(path, starts.map((s) => { const e = byStart.get(s)!; return `${s.toString(16)} ${(e.end - s).toString(16)} ${e.name}\n`; }).join(''), 'latin1');
}

/** Samples per part of a recording (`perf script` output of ip and symbol per frame). */
function split(script: string): { total: number; parts: Map<string, number> } {
  const parts = new Map<string, number>();
  let total = 0;
  for (const sample of script.split('\n\n')) {
    const frames = sample.split('\n').map((l) => l.trim().replace(/^[0-9a-f]+ /, '')).filter(Boolean);
    if (!frames.length) continue;
    total++;
    let part = 'other';
    for (const f of frames) {
      const hit = PARTS.find(([, rx]) => rx.test(f));
      if (hit) {
        part = hit[0];
        break;
      }
    }
    parts.set(part, (parts.get(part) ?? 0) + 1);
  }
  return { total, parts };
}

/** Samples per part of the recording `data` of process `pid` (its perf map cleaned first). */
export function splitRecording(data: string, pid: number | string): { total: number; parts: Map<string, number> } {
  const map = `/tmp/perf-${pid}.map`;
  if (existsSync(map)) cleanPerfMap(map);
  return split(spawnSync('perf', ['script', '-i', data, '-F', 'ip,sym'], { encoding: 'utf8', maxBuffer: 1 << 30 }).stdout);
}

function main(): void {
  const [data, rpsText] = process.argv.slice(2);
  const rps = Number(rpsText);
  if (!data || !(rps > 0)) {
    console.error('usage: bench/_perf-split.ts <perf.data> <requests/s during the recording>');
    process.exit(2);
  }
  const pid = spawnSync('perf', ['script', '-i', data, '-F', 'pid'], { encoding: 'utf8', maxBuffer: 1 << 28 }).stdout.trim().split(/\s+/)[0];
  const { total, parts } = splitRecording(data, pid ?? '');
  // The server is taken as busy for the whole recording (it is, under this load): a sample's
  // share of a second, divided over the requests answered in it, is its time per request.
  for (const [name, n] of [...parts].sort((a, b) => b[1] - a[1])) {
    console.log(`${name.padEnd(34)} ${((100 * n) / total).toFixed(1).padStart(5)} %  ${((n / total) * (1e6 / rps)).toFixed(1).padStart(6)} µs/request`);
  }
  console.log(`${'total'.padEnd(34)} ${'100'.padStart(5)} %  ${(1e6 / rps).toFixed(1).padStart(6)} µs/request  (${total} samples)`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
