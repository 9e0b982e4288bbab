// A/B of two builds of the monitor under GET (or POST) pings, side by side in one run: both
// daemons start at once and take interleaved rounds (A then B, B then A, …), so the machine's
// phases move both alike; prints each round's requests/s and daemon CPU a ping (from /proc), and
// the medians. The way to see a change's effect on a machine whose speed drifts by half within
// minutes (bench/README.md, "The ping taken before fastify").
//
//   git worktree add /tmp/old <commit> && ln -s $PWD/node_modules /tmp/old/ && (cd /tmp/old && npm run build)
//   AB_BIN_A=/tmp/old/bin/mkt AB_BIN_B=bin/mkt node --import tsx bench/_ab-pings.ts
//
// AB_POST=1 sends POST /ping/{key}/0 with a small log; AB_ROW=heartbeat the license heartbeat of a held floating seat instead; AB_ROUNDS (default 6); AB_SECONDS a load (default 4); AB_FA / AB_FB node
// flags of A / B (e.g. --min-semi-space-size=16); AB_A / AB_B extra environment of A / B, as JSON.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autocannon, median, procStats, spawnListening, type Load, type ServerProcess } from './_util.js';

const SECONDS = Number(process.env.AB_SECONDS ?? 4);
const config = `name: bench\ntoken: t\nincident_threshold: 1\ntargets:\n  hb:\n    interval: 10m\n    heartbeat: { period: 1h, grace: 1h, ping_key: bench-ping-key-000000 }\n`;
const post = process.env.AB_POST === '1';
// AB_ROW=heartbeat: the marketplace's POST /api/v1/license/heartbeat of a held floating seat instead.
const heartbeat = process.env.AB_ROW === 'heartbeat';
const json = { 'content-type': 'application/json' };
const load: Partial<Load> = post ? { method: 'POST' as const, body: 'rsync: 1,204 files, 38 MiB sent\nbackup finished in 41 s\n'.repeat(3), headers: { 'content-type': 'text/plain' } } : {};
const path = heartbeat ? '/api/v1/license/heartbeat' : `/ping/bench-ping-key-000000${post ? '/0' : ''}`;
const flags = (v: string | undefined): string[] => (v ?? '').split(' ').filter(Boolean);

/** A marketplace data dir holding a floating key (made by `bin`'s admin); its key. */
function seatsDir(bin: string, dir: string): string {
  const admin = (args: string[]): string => {
    const r = spawnSync(process.execPath, [bin, 'admin', '--data-dir', dir, ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`mkt admin ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  admin(['migrate']);
  admin(['item', 'create', 'seats', '--name', 'Seats', '--max-activations', '1000', '--activation', 'floating', '--lease', '15m']);
  return (JSON.parse(admin(['key', 'issue', 'seats', '--json'])) as { key: string }[])[0]!.key;
}

/** Each side's heartbeat body: its own key. */
const heartbeatBodies = new Map<ServerProcess, string>();

async function daemon(bin: string, nodeFlags: string[], env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'ab-pings-'));
  if (!heartbeat) {
    writeFileSync(join(dir, 'monitor.yaml'), config);
    return spawnListening('mkt serve monitor', [...nodeFlags, bin, 'serve', 'monitor', '--port', '0', '--data-dir', dir], { MKT_LOG_LEVEL: 'info', ...env });
  }
  const key = seatsDir(bin, dir);
  const s = await spawnListening('mkt serve marketplace', [...nodeFlags, bin, 'serve', 'marketplace', '--port', '0', '--data-dir', dir], { MKT_LOG_LEVEL: 'info', ...env });
  // The seat the heartbeats renew; each side's own key, in the same body bytes.
  const taken = await fetch(`${s.url}/api/v1/keys/validate`, { method: 'POST', headers: json, body: JSON.stringify({ key, machine_id: 'bench-machine', activate: true }) });
  if (!((await taken.json()) as { valid: boolean }).valid) throw new Error('no seat taken');
  heartbeatBodies.set(s, JSON.stringify({ key, machine_fingerprint: 'bench-machine' }));
  return s;
}

/** The load of one side (a heartbeat carries that side's key). */
const loadOf = (s: ServerProcess): Partial<Load> => (heartbeat ? { method: 'POST', headers: json, body: heartbeatBodies.get(s) } : load);

const sides = {
  A: await daemon(process.env.AB_BIN_A ?? 'bin/mkt', flags(process.env.AB_FA), JSON.parse(process.env.AB_A ?? '{}') as NodeJS.ProcessEnv),
  B: await daemon(process.env.AB_BIN_B ?? 'bin/mkt', flags(process.env.AB_FB), JSON.parse(process.env.AB_B ?? '{}') as NodeJS.ProcessEnv),
};
try {
  // Both warm first: a daemon just started is still compiling its ping path.
  for (const s of Object.values(sides)) await autocannon(s.url + path, { ...loadOf(s), seconds: SECONDS });
  const figures = { A: { rps: [] as number[], us: [] as number[] }, B: { rps: [] as number[], us: [] as number[] } };
  const rounds = Number(process.env.AB_ROUNDS ?? 6);
  for (let i = 0; i < rounds; i++) {
    for (const name of i % 2 ? (['B', 'A'] as const) : (['A', 'B'] as const)) {
      const s = sides[name];
      const cpu0 = procStats(s.pid).cpuMs;
      const r = await autocannon(s.url + path, { ...loadOf(s), seconds: SECONDS });
      const cpu1 = procStats(s.pid).cpuMs;
      figures[name].rps.push(Math.round(r.rps));
      figures[name].us.push(Math.round(((cpu1 - cpu0) * 1000) / (r.rps * SECONDS)));
    }
    console.log(`round ${i + 1}: A ${figures.A.rps[i]} req/s ${figures.A.us[i]} µs a ping, B ${figures.B.rps[i]} req/s ${figures.B.us[i]} µs a ping`);
  }
  console.log(`median: A ${median(figures.A.rps)} req/s ${median(figures.A.us)} µs a ping; B ${median(figures.B.rps)} req/s ${median(figures.B.us)} µs a ping; B/A throughput ${(median(figures.B.rps) / median(figures.A.rps)).toFixed(2)}`);
} finally {
  await sides.A.stop();
  await sides.B.stop();
}
