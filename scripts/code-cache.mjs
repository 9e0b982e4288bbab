// Writes dist/cli.cjs.cache, the V8 code cache bin/mkt compiles the bundle from: the bundle is
// run on the start-up paths that matter (help, --version, an offline license check) and the cache
// taken at exit holds every function those runs compiled, so a start neither parses the bundle
// nor compiles them again. Each run starts from the previous run's cache and adds to it.
import { Buffer } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MACHINE = 'code-cache';
const ITEM = 'code-cache';

/** A pinned JWKS and a valid cached token in `dir`, so `license check` runs its whole path. */
function licenseFixture(dir) {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const kid = 'code-cache';
  const jwks = { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'EdDSA', use: 'sig' }] };
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: 'mkt-marketplace', sub: 'lic', license: 'lic', item: ITEM, fph: createHash('sha256').update(MACHINE).digest('base64url'), iat: now, exp: now + 3600 };
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${b64({ alg: 'EdDSA', typ: 'JWT', kid })}.${b64(claims)}`;
  const token = `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`;
  mkdirSync(join(dir, 'cache', 'mkt', 'license'), { recursive: true });
  writeFileSync(join(dir, 'cache', 'mkt', 'license', `${ITEM}.json`), JSON.stringify({ server: 'http://127.0.0.1:9', item: ITEM, license: 'lic', token, saved_at: new Date().toISOString() }));
  writeFileSync(join(dir, 'keys.jwks'), JSON.stringify(jwks));
  return join(dir, 'keys.jwks');
}

/** One run of the bundle through bin/mkt's own compile(), writing the cache at exit. */
const TRAIN = `
const [bin, ...args] = JSON.parse(process.env.MKT_CODE_CACHE_RUN);
const { renameSync, writeFileSync } = require('node:fs');
const m = require(bin);
const script = m.compile();
if (script.cachedDataRejected) { process.stderr.write('code cache rejected by the run that made it\\n'); process.exit(70); }
process.argv = [process.execPath, bin, ...args];
process.on('exit', () => {
  writeFileSync(m.cacheFile + '.tmp', Buffer.concat([Buffer.from(m.stamp(), 'latin1'), script.createCachedData()]));
  renameSync(m.cacheFile + '.tmp', m.cacheFile);
});
m.run(script);
`;

/**
 * The cache only saves start-up time: when a run fails (a platform the runs do not fit), the
 * build warns and goes on without one, and bin/mkt compiles the bundle as usual.
 */
export async function writeCodeCache(root) {
  const bin = join(root, 'bin', 'mkt');
  const cache = join(root, 'dist', 'cli.cjs.cache');
  rmSync(cache, { force: true });
  const dir = mkdtempSync(join(tmpdir(), 'mkt-code-cache-'));
  try {
    const keys = licenseFixture(dir);
    const runs = [['--help'], ['--version'], ['tickets', '--help'], ['license', 'check', '--item', ITEM, '--machine', MACHINE, '--public-key', keys]];
    for (const args of runs) {
      // A clean environment: no profile, token or server of the person building is read.
      const env = { ...process.env, HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_CACHE_HOME: join(dir, 'cache'), MKT_CODE_CACHE_RUN: JSON.stringify([bin, ...args]) };
      for (const name of Object.keys(env)) if (name.startsWith('MKT_') && name !== 'MKT_CODE_CACHE_RUN') delete env[name];
      const r = spawnSync(process.execPath, ['-e', TRAIN], { env, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
      if (r.status !== 0) {
        rmSync(cache, { force: true });
        console.warn(`bundle-cli: no code cache (mkt ${args.join(' ')} exited ${r.status}: ${r.stderr.trim()}); mkt starts without one`);
        return;
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
