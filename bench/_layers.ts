// What each layer of a direct lane's path costs beside bare node:http, and the tickets daemon's
// GET /tickets/{id} lane beside them (bench/README.md, "GET /tickets/{id} and the key rows taken
// before fastify"): bench/_layers-server.mjs in each variant and the built daemon, all answering
// the same ticket's bytes, in interleaved rounds (LAYERS_ROUNDS, default 8, of 3 s); each prints
// the median of its rounds' throughput ratio to bare and the server's main-thread CPU a request
// (from /proc) with its difference to bare's in the same round. Run on the build:
// `npm run build && node --import tsx bench/_layers.ts`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autocannon, BENCH_NEW_TICKET, BENCH_TICKETS_TOKEN, mainThreadCpuMicros, median, serveBuilt, spawnListening, type ServerProcess } from './_util.js';

const TOKEN = BENCH_TICKETS_TOKEN;
const ROUNDS = Number(process.env.LAYERS_ROUNDS ?? 8);


const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-layers-'));
const servers: { name: string; server: ServerProcess; url: string }[] = [];
try {
  const daemon = await serveBuilt('tickets', dir, { MKT_TICKETS_TOKEN: TOKEN });
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const created = (await (await fetch(`${daemon.url}/tickets`, { method: 'POST', headers, body: BENCH_NEW_TICKET })).json()) as { id: string };
  const path = `/tickets/${created.id}`;
  const body = await (await fetch(`${daemon.url}${path}`, { headers })).text();
  for (const variant of ['bare', 'server', 'line', 'token', 'token-in-daemon']) {
    const server = await spawnListening(`layers ${variant}`, [join(import.meta.dirname, '_layers-server.mjs')], { LAYERS_VARIANT: variant, LAYERS_BODY: body, LAYERS_TOKEN: TOKEN });
    servers.push({ name: variant, server, url: `${server.url}${path}` });
  }
  servers.push({ name: 'daemon lane', server: daemon, url: `${daemon.url}${path}` });
  const load = { headers: { authorization: `Bearer ${TOKEN}` }, connections: 32 };
  for (const s of servers) await autocannon(s.url, { ...load, seconds: 2 });
  const rounds = servers.map(() => [] as { rps: number; us: number }[]);
  for (let r = 0; r < ROUNDS; r++) {
    // Each round starts one server further on: a machine speeding up within a round favours no one.
    for (let k = 0; k < servers.length; k++) {
      const i = (r + k) % servers.length;
      const s = servers[i]!;
      const before = mainThreadCpuMicros(s.server.pid);
      const res = await autocannon(s.url, { ...load, seconds: 3 });
      if (res.errors + res.non2xx > 0) throw new Error(`${s.name}: ${res.errors} errors, ${res.non2xx} answers not 2xx`);
      rounds[i]!.push({ rps: res.rps, us: (mainThreadCpuMicros(s.server.pid) - before) / res.total });
    }
  }
  const bare = rounds[0]!;
  servers.forEach((s, i) => {
    const mine = rounds[i]!;
    const ratio = median(mine.map((x, r) => x.rps / bare[r]!.rps));
    const extra = median(mine.map((x, r) => x.us - bare[r]!.us));
    console.log(`${s.name.padEnd(12)} ${Math.round(median(mine.map((x) => x.rps))).toString().padStart(6)} req/s  ratio ${ratio.toFixed(2)}  ${median(mine.map((x) => x.us)).toFixed(1)} µs main thread a request (${extra >= 0 ? '+' : ''}${extra.toFixed(1)} against bare)`);
  });
} finally {
  for (const s of servers) await s.server.stop();
  rmSync(dir, { recursive: true, force: true });
}
