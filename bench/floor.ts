// The framework floor against bare node:http (issue 37's guard): bench/_floor-server.ts (buildServer
// with every shared plugin, the request line at info, no work of its own) and plain fastify (one
// route with a response schema, no plugins, no logger) beside a bare node:http server answering the
// same bytes, for a GET and for a POST with a JSON body. Rounds are interleaved (bare, fastify,
// floor, then again, each round starting one further on) and each ratio is the median of the
// rounds' ratios, so a machine whose speed drifts between windows moves all three alike. A change that adds a hook or a log field shows its
// price here at once. `MKT_BENCH_FLOOR_ROUNDS` (default 6), `MKT_BENCH_FLOOR_SECONDS` (default 3).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { autocannon, bareServer, ratio, serveFloor, spawnListening, type LoadResult, type ServerProcess } from './_util.js';

const ROUNDS = Number(process.env.MKT_BENCH_FLOOR_ROUNDS ?? 6);
const SECONDS = Number(process.env.MKT_BENCH_FLOOR_SECONDS ?? 3);
/** A ticket-sized answer: what the rows answer is of this order. */
const BODY = JSON.stringify({ id: 'T-1', title: 'printer on floor 3 is offline', status: 'open', priority: 'normal', updated_at: '2026-11-29T00:00:00.000Z' });
const POST_BODY = JSON.stringify({ title: 'printer on floor 3 is offline', body: 'since this morning', priority: 'normal' });
const GOALS = { GET: 0.8, POST: 0.65 } as const;

/** Plain fastify (bench/_fastify-server.ts): what the framework costs before any plugin of ours. */
function servePlainFastify(body: string): Promise<ServerProcess> {
  return spawnListening('plain fastify', ['--import', 'tsx', join(import.meta.dirname, '_fastify-server.ts')], { FLOOR_BODY: body });
}

/** CPU time (user + system) in µs a process has used so far; this process's own for `undefined`. */
function cpuMicros(pid: number | undefined): number {
  if (pid === undefined) {
    const u = process.cpuUsage();
    return u.user + u.system;
  }
  // Fields 14 and 15 of /proc/PID/stat (after the command's closing parenthesis), in clock ticks of 10 ms.
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

export async function run(): Promise<void> {
  const bare = await bareServer(BODY);
  const fastify = await servePlainFastify(BODY);
  const floor = await serveFloor(BODY);
  try {
    for (const method of ['GET', 'POST'] as const) {
      const load = method === 'GET' ? { method, seconds: SECONDS } : { method, seconds: SECONDS, body: POST_BODY, headers: { 'content-type': 'application/json' } };
      const path = method === 'GET' ? '/floor/x' : '/floor';
      const urls = { bare: bare.url, fastify: fastify.url, floor: floor.url };
      // Warm each once: a server just started is still compiling its hot paths.
      for (const u of Object.values(urls)) await autocannon(`${u}${path}`, { ...load, seconds: 1 });
      const pids = { bare: undefined, fastify: fastify.pid, floor: floor.pid };
      const rounds: Record<keyof typeof urls, LoadResult & { us: number }>[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const r = {} as Record<keyof typeof urls, LoadResult & { us: number }>;
        // Each round starts with a different server: on this VM a load's place in the round moves
        // its figure (a CPU credit spent by the one before), and a rotation spreads that over all.
        const keys = Object.keys(urls) as (keyof typeof urls)[];
        for (const k of [...keys.slice(i % keys.length), ...keys.slice(0, i % keys.length)]) {
          const before = cpuMicros(pids[k]);
          const result = await autocannon(`${urls[k]}${path}`, load);
          r[k] = { ...result, us: (cpuMicros(pids[k]) - before) / (result.rps * SECONDS) };
        }
        rounds.push(r);
      }
      for (const k of ['bare', 'fastify', 'floor'] as const) {
        const rps = median(rounds.map((r) => r[k].rps));
        const us = `  ${median(rounds.map((r) => r[k].us)).toFixed(0).padStart(3)} µs CPU a request`;
        const rel = k === 'bare' ? `${us} (baseline)` : `${us}  ratio ${median(rounds.map((r) => r[k].rps / r.bare.rps)).toFixed(2)}, by CPU ${median(rounds.map((r) => r.bare.us / r[k].us)).toFixed(2)}`;
        const goal = k === 'floor' ? ` (goal >= ${GOALS[method].toFixed(2)}; rounds ${rounds.map((r) => ratio(r.floor.rps, r.bare.rps)).join(', ')})` : '';
        const errs = rounds.reduce((n, r) => n + r[k].errors + r[k].non2xx, 0);
        console.log(`${`${method} ${k === 'bare' ? 'bare node:http' : k === 'fastify' ? 'plain fastify' : 'floor'}`.padEnd(24)} ${rps.toFixed(0).padStart(7)} req/s${rel}${goal}${errs ? `  errors ${errs}` : ''}`);
      }
    }
  } finally {
    bare.server.close();
    await fastify.stop();
    await floor.stop();
  }
}
