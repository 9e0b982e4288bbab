// License-key throughput of the built daemon (logging at info to a pipe). First issue 33's leased
// seats, in interleaved rounds (each ratio the median of the rounds'): license_heartbeat requests/s
// as a ratio to bare node:http answering its bytes (goal >= 0.4), and license_verify on a floating
// key (a lease renewed and a token signed to the lease's end) beside a node-locked one, both to
// bare node:http answering a verify's bytes. `MKT_BENCH_LICENSE_ROUNDS` (default 5),
// `MKT_BENCH_LICENSE_SECONDS` (default 3); `MKT_BENCH_LICENSE_ROWS=0` stops after them. Then
// key_status_post and
// license_verify requests/s as ratios to a bare node:http server answering the same body in the
// same run (goals >= 0.6 for status, >= 0.5 for verify of a known machine, >= 0.3 with a new
// machine per request, which activates and signs every time), beside the framework floor
// (bench/_floor-server.mjs); and `mkt license check` (offline) wall time as a ratio to `node -e 0`
// (<= 1.6).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LicenseAdmin } from '../daemon/services/marketplace/license/admin.js';
import { saveToken } from '../src/client/license-offline.js';
import { machineFingerprint } from '../src/client/license-offline.js';
import { autocannon, bareServer, median, printRow, ratio, references, serveBuilt, startupEnv, warmLoad, type Load, type LoadResult, type ServerProcess } from './_util.js';
import { timeAgainstNode } from './_startup.js';

const json = { 'content-type': 'application/json' };

/** Runs so far: each run's machines are new to the server, not the last run's again. */
let uniqueRuns = 0;

/**
 * autocannon (programmatic, in a child process) where request N of run R carries machine
 * `bench-R-N`: every verify activates a new machine and signs a new token.
 */
export async function autocannonUnique(url: string, key: string, seconds = 5): Promise<LoadResult> {
  const { spawn } = await import('node:child_process');
  const { createRequire } = await import('node:module');
  const lib = createRequire(import.meta.url).resolve('autocannon');
  const code = `
    const autocannon = require(${JSON.stringify(lib)});
    let n = 0;
    autocannon({ url: ${JSON.stringify(url)}, connections: 20, duration: ${seconds}, requests: [{ method: 'POST', headers: { 'content-type': 'application/json' },
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ key: ${JSON.stringify(key)}, machine_fingerprint: ${JSON.stringify(`bench-${++uniqueRuns}-`)} + (n++) }) }) }] },
      (err, r) => { if (err) { console.error(err); process.exit(1); } process.stdout.write(JSON.stringify(r)); });`;
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.on('error', reject);
    child.on('exit', (c) => (c === 0 ? resolve(text) : reject(new Error(`autocannon exited ${c}`))));
  });
  const r = JSON.parse(out) as { requests: { average: number; total: number }; latency: { p99: number }; errors: number; non2xx: number };
  return { rps: r.requests.average, total: r.requests.total, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

const ROUNDS = Number(process.env.MKT_BENCH_LICENSE_ROUNDS ?? 5);
const SECONDS = Number(process.env.MKT_BENCH_LICENSE_SECONDS ?? 3);
const HEARTBEAT_GOAL = 0.4;
const mkt = join(import.meta.dirname, '..', 'bin', 'mkt');

/** `mkt admin --data-dir DIR ...` through the built binary (the item flags are the CLI's contract). */
function admin(dir: string, args: string[]): string {
  const r = spawnSync(process.execPath, [mkt, 'admin', '--data-dir', dir, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mkt admin ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

function issue(dir: string, item: string): string {
  return (JSON.parse(admin(dir, ['key', 'issue', item, '--json'])) as { key: string }[])[0]!.key;
}

/** A node-locked key of a verifying item `bench` (made here), without a maximum: the key rows' seed. */
export async function benchKey(admin: LicenseAdmin): Promise<{ id: string; key: string }> {
  await admin.createItem({ id: 'bench', name: 'Bench', licenseTemplate: null, maxActivations: null, verification: true });
  const [k] = await admin.issueKeys({ itemId: 'bench', count: 1, expiresAt: null, licensee: null });
  return k!;
}

async function answer(url: string, load: Load): Promise<string> {
  const res = await fetch(url, { method: 'POST', headers: load.headers, body: load.body });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status} ${text}`);
  return text;
}

/**
 * Issue 33's rows: a heartbeat of a held seat, and verify of a known machine on a floating key
 * (15-minute lease, every verify renews it) and on a node-locked key, each in every round beside
 * bare node:http answering the same bytes; the order rotates one step a round.
 */
async function leaseRounds(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-lease-'));
  let svc: ServerProcess | undefined;
  const bares: { server: import('node:http').Server }[] = [];
  try {
    // A new data dir holds no marketplace yet: create it as an operator would.
    admin(dir, ['migrate']);
    admin(dir, ['item', 'create', 'seats', '--name', 'Seats', '--max-activations', '1000', '--activation', 'floating', '--lease', '15m', '--verification', 'on']);
    admin(dir, ['item', 'create', 'locked', '--name', 'Locked', '--verification', 'on']);
    const floatingKey = issue(dir, 'seats');
    const lockedKey = issue(dir, 'locked');
    svc = await serveBuilt('marketplace', dir);
    const json = { 'content-type': 'application/json' };
    const load = (body: object): Load => ({ method: 'POST', headers: json, body: JSON.stringify(body), seconds: SECONDS });
    const machine = 'bench-machine';
    // The seat the heartbeats renew, and the node-locked activation verify finds.
    const taken = JSON.parse(await answer(`${svc.url}/api/v1/keys/validate`, load({ key: floatingKey, machine_id: machine, activate: true }))) as { valid: boolean; lease_expires_at?: string | null };
    if (!taken.valid || !taken.lease_expires_at) throw new Error(`no leased seat: ${JSON.stringify(taken)}`);
    const heartbeat = load({ key: floatingKey, machine_fingerprint: machine });
    const verifyFloating = load({ key: floatingKey, machine_fingerprint: machine });
    const verifyLocked = load({ key: lockedKey, machine_fingerprint: machine });
    const hbBody = await answer(`${svc.url}/api/v1/license/heartbeat`, heartbeat);
    if (!(JSON.parse(hbBody) as { success: boolean }).success) throw new Error(`heartbeat refused: ${hbBody}`);
    const verifyBody = await answer(`${svc.url}/api/v1/license/verify`, verifyLocked);
    await answer(`${svc.url}/api/v1/license/verify`, verifyFloating);
    const bareHb = await bareServer(hbBody);
    const bareVerify = await bareServer(verifyBody);
    bares.push(bareHb, bareVerify);
    const loads = {
      'bare (heartbeat bytes)': { url: `${bareHb.url}/x`, load: heartbeat },
      'license_heartbeat': { url: `${svc.url}/api/v1/license/heartbeat`, load: heartbeat },
      'bare (verify bytes)': { url: `${bareVerify.url}/x`, load: verifyLocked },
      'verify, node-locked': { url: `${svc.url}/api/v1/license/verify`, load: verifyLocked },
      'verify, floating': { url: `${svc.url}/api/v1/license/verify`, load: verifyFloating },
    };
    type Name = keyof typeof loads;
    const names = Object.keys(loads) as Name[];
    // Warm each once: a server just started is still compiling its hot paths.
    for (const n of names) await autocannon(loads[n].url, { ...loads[n].load, seconds: 1 });
    const rounds: Record<Name, LoadResult>[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const r = {} as Record<Name, LoadResult>;
      for (const n of [...names.slice(i % names.length), ...names.slice(0, i % names.length)]) r[n] = await autocannon(loads[n].url, loads[n].load);
      rounds.push(r);
    }
    const against: Record<Name, Name | undefined> = {
      'bare (heartbeat bytes)': undefined,
      'license_heartbeat': 'bare (heartbeat bytes)',
      'bare (verify bytes)': undefined,
      'verify, node-locked': 'bare (verify bytes)',
      'verify, floating': 'bare (verify bytes)',
    };
    console.log(`-- issue 33: leased seats (${ROUNDS} interleaved rounds of ${SECONDS} s; medians) --`);
    for (const n of names) {
      const base = against[n];
      const rps = median(rounds.map((r) => r[n].rps));
      const p99 = median(rounds.map((r) => r[n].p99));
      const errs = rounds.reduce((sum, r) => sum + r[n].errors + r[n].non2xx, 0);
      let rel = ' (baseline)';
      if (base) {
        const ratios = rounds.map((r) => r[n].rps / r[base].rps);
        const goal = n === 'license_heartbeat' ? ` (goal >= ${HEARTBEAT_GOAL.toFixed(2)}${median(ratios) >= HEARTBEAT_GOAL ? '' : ', MISSED'})` : '';
        rel = `  ratio ${median(ratios).toFixed(2)}${goal}; rounds ${ratios.map((x) => x.toFixed(2)).join(', ')}`;
      }
      console.log(`${n.padEnd(30)} ${rps.toFixed(0).padStart(7)} req/s  p99 ${String(p99).padStart(4)} ms${rel}${errs ? `  errors ${errs}` : ''}`);
    }
    const both = rounds.map((r) => r['verify, floating'].rps / r['verify, node-locked'].rps);
    console.log(`verify floating / node-locked   ${median(both).toFixed(2)} (what a lease renewal adds to a verify)`);
  } finally {
    for (const b of bares) b.server.close();
    await svc?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  await leaseRounds();
  if (process.env.MKT_BENCH_LICENSE_ROWS === '0') return;
  console.log('\n-- key status, verify and the offline check --');
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-license-'));
  const admin = await LicenseAdmin.open({ dataDir: dir });
  let svc: ServerProcess | undefined;
  try {
    const k = await benchKey(admin);
    const key = k.key;
    svc = await serveBuilt('marketplace', dir);
    const url = svc.url;

    const status: Load = { method: 'POST', headers: json, body: JSON.stringify({ key: key }) };
    const statusAnswer = await (await fetch(`${url}/api/v1/keys/status`, status)).text();
    const statusRefs = await references('status body', statusAnswer, status);
    printRow('POST /api/v1/keys/status', await warmLoad(`${url}/api/v1/keys/status`, status), statusRefs, 0.6);

    const verify: Load = { method: 'POST', headers: json, body: JSON.stringify({ key: key, machine_fingerprint: 'bench-machine' }) };
    const verifyAnswer = await (await fetch(`${url}/api/v1/license/verify`, verify)).text();
    const verifyRefs = await references('verify body', verifyAnswer, verify);
    printRow('POST /api/v1/license/verify', await warmLoad(`${url}/api/v1/license/verify`, verify), verifyRefs, 0.5);
    // Every request a new machine: activation write + a fresh Ed25519 signature each time.
    const fresh: Load = { ...verify, run: (u) => autocannonUnique(u, key) };
    printRow('  ... each a new machine', await warmLoad(`${url}/api/v1/license/verify`, fresh), verifyRefs, 0.3);

    // `mkt license check`: a token for this machine in a private cache dir, checked offline.
    const fp = machineFingerprint();
    if (!fp) {
      console.log('mkt license check: skipped (no machine id on this host)');
      return;
    }
    const v = (await (await fetch(`${url}/api/v1/license/verify`, { method: 'POST', headers: json, body: JSON.stringify({ key: key, machine_fingerprint: fp }) })).json()) as { token: string };
    const jwks = (await (await fetch(`${url}/api/v1/license/jwks.json`)).json()) as Parameters<typeof saveToken>[1]['jwks'];
    // The check trusts only pinned keys: pin the server's JWKS inline, as an app would ship it.
    const env = { ...startupEnv(), XDG_CACHE_HOME: join(dir, 'cache'), MKT_MARKETPLACE_URL: 'http://127.0.0.1:9', MKT_LICENSE_PUBLIC_KEYS: JSON.stringify(jwks) };
    saveToken(env, { server: url, item: 'bench', license: k.id, token: v.token, jwks, saved_at: new Date().toISOString() });
    const { baseline: baseMs, commands: [checkMs = NaN] } = timeAgainstNode([[process.execPath, join(import.meta.dirname, '..', 'bin', 'mkt'), 'license', 'check']], 20, env);
    console.log(`node -e 0                    ${baseMs.toFixed(1)} ms (baseline)`);
    console.log(`mkt license check            ${checkMs.toFixed(1)} ms  ratio ${ratio(checkMs, baseMs)} (goal <= 1.60)${checkMs / baseMs <= 1.6 ? '' : '  MISSED'}`);
  } finally {
    await svc?.stop();
    await admin.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
