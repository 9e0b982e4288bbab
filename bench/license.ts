// License-key throughput of the built daemon (logging at info to a pipe): key_status_post and
// license_verify requests/s as ratios to a bare node:http server answering the same body in the
// same run (goals >= 0.6 for status, >= 0.5 for verify of a known machine, >= 0.3 with a new
// machine per request, which activates and signs every time), beside the framework floor
// (bench/_floor-server.ts); and `mkt license check` (offline) wall time as a ratio to `node -e 0`
// (<= 1.6).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LicenseAdmin } from '../daemon/services/marketplace/license/admin.js';
import { saveToken } from '../src/client/license-offline.js';
import { machineFingerprint } from '../src/client/license-offline.js';
import { printRow, ratio, references, serveBuilt, startupEnv, warmLoad, type Load, type LoadResult, type ServerProcess } from './_util.js';
import { timeAgainstNode } from './_startup.js';

const json = { 'content-type': 'application/json' };

/**
 * autocannon (programmatic, in a child process) where request N carries machine
 * `bench-N`: every verify activates a new machine and signs a new token.
 */
export async function autocannonUnique(url: string, key: string): Promise<LoadResult> {
  const { spawn } = await import('node:child_process');
  const { createRequire } = await import('node:module');
  const lib = createRequire(import.meta.url).resolve('autocannon');
  const code = `
    const autocannon = require(${JSON.stringify(lib)});
    let n = 0;
    autocannon({ url: ${JSON.stringify(url)}, connections: 20, duration: 5, requests: [{ method: 'POST', headers: { 'content-type': 'application/json' },
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ key: ${JSON.stringify(key)}, machine_fingerprint: 'bench-' + (n++) }) }) }] },
      (err, r) => { if (err) { console.error(err); process.exit(1); } process.stdout.write(JSON.stringify(r)); });`;
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.on('error', reject);
    child.on('exit', (c) => (c === 0 ? resolve(text) : reject(new Error(`autocannon exited ${c}`))));
  });
  const r = JSON.parse(out) as { requests: { average: number }; latency: { p99: number }; errors: number; non2xx: number };
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mkt-bench-license-'));
  const admin = await LicenseAdmin.open({ dataDir: dir });
  let svc: ServerProcess | undefined;
  try {
    await admin.createItem({ id: 'bench', name: 'Bench', licenseTemplate: null, maxActivations: null, verification: true });
    const [k] = await admin.issueKeys({ itemId: 'bench', count: 1, expiresAt: null, licensee: null });
    svc = await serveBuilt('marketplace', dir);
    const url = svc.url;

    const status: Load = { method: 'POST', headers: json, body: JSON.stringify({ key: k!.key }) };
    const statusAnswer = await (await fetch(`${url}/api/v1/keys/status`, status)).text();
    const statusRefs = await references('status body', statusAnswer, status);
    printRow('POST /api/v1/keys/status', await warmLoad(`${url}/api/v1/keys/status`, status), statusRefs, 0.6);

    const verify: Load = { method: 'POST', headers: json, body: JSON.stringify({ key: k!.key, machine_fingerprint: 'bench-machine' }) };
    const verifyAnswer = await (await fetch(`${url}/api/v1/license/verify`, verify)).text();
    const verifyRefs = await references('verify body', verifyAnswer, verify);
    printRow('POST /api/v1/license/verify', await warmLoad(`${url}/api/v1/license/verify`, verify), verifyRefs, 0.5);
    // Every request a new machine: activation write + a fresh Ed25519 signature each time.
    const fresh: Load = { ...verify, run: (u) => autocannonUnique(u, k!.key) };
    printRow('  ... each a new machine', await warmLoad(`${url}/api/v1/license/verify`, fresh), verifyRefs, 0.3);

    // `mkt license check`: a token for this machine in a private cache dir, checked offline.
    const fp = machineFingerprint();
    if (!fp) {
      console.log('mkt license check: skipped (no machine id on this host)');
      return;
    }
    const v = (await (await fetch(`${url}/api/v1/license/verify`, { method: 'POST', headers: json, body: JSON.stringify({ key: k!.key, machine_fingerprint: fp }) })).json()) as { token: string };
    const jwks = (await (await fetch(`${url}/api/v1/license/jwks.json`)).json()) as Parameters<typeof saveToken>[1]['jwks'];
    // The check trusts only pinned keys: pin the server's JWKS inline, as an app would ship it.
    const env = { ...startupEnv(), XDG_CACHE_HOME: join(dir, 'cache'), MKT_MARKETPLACE_URL: 'http://127.0.0.1:9', MKT_LICENSE_PUBLIC_KEYS: JSON.stringify(jwks) };
    saveToken(env, { server: url, item: 'bench', license: k!.id, token: v.token, jwks, saved_at: new Date().toISOString() });
    const { baseline: baseMs, commands: [checkMs = NaN] } = timeAgainstNode([[process.execPath, join(import.meta.dirname, '..', 'bin', 'mkt'), 'license', 'check']], 20, env);
    console.log(`node -e 0                    ${baseMs.toFixed(1)} ms (baseline)`);
    console.log(`mkt license check            ${checkMs.toFixed(1)} ms  ratio ${ratio(checkMs, baseMs)} (goal <= 1.60)${checkMs / baseMs <= 1.6 ? '' : '  MISSED'}`);
  } finally {
    await svc?.stop();
    await admin.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
