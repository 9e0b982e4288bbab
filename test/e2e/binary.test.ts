// The built binary (bin/mkt -> dist/cli.cjs -> lazily loaded verbs): exit codes and one-line
// errors survive the bundle boundary, the bundle runs from its V8 code cache only when the cache
// was made for it, and it also runs under a plain require(). Needs `npm run build` first (npm
// test does it).
import { describe, expect, it } from 'vitest';
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { VERSION } from '../../src/version.js';
import { tempDir } from '../helpers/tmp.js';

const mkt = join(import.meta.dirname, '../../bin/mkt');
const exec = promisify(execFile);

async function runMkt(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(process.execPath, [mkt, ...args], { env: { ...process.env, MKT_CREDENTIAL_STORE: 'file', ...env } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('bin/mkt', () => {
  it('prints the version', async () => {
    expect(await runMkt(['--version'])).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });
  it('a usage error from a lazily loaded verb exits 2 with one line', async () => {
    // (`serve nope` is refused by the parser now that the service argument has its choices.)
    const r = await runMkt(['serve', 'tickets', '--port', '99999']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('mkt: --port must be an integer from 0 to 65535, got 99999\n');
  });
  it('a negative answer from a lazily loaded verb exits 1', async () => {
    const r = await runMkt(['auth', 'logout', 'tickets'], { XDG_CONFIG_HOME: '/nonexistent-mkt-test' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('mkt: not logged in to tickets\n');
  });
});

describe('bin/mkt: the code cache and the bundle boundary', () => {
  const root = join(import.meta.dirname, '../..');

  /** Whether V8 took the cache: false when it did, undefined when bin/mkt passed none. */
  function cacheTaken(bin: string): string {
    const r = spawnSync(process.execPath, ['-e', `process.stdout.write(String(require(${JSON.stringify(bin)}).compile().cachedDataRejected))`], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout;
  }

  it('compiles the bundle from the code cache the build wrote', () => {
    expect(cacheTaken(mkt)).toBe('false');
  });

  it('a cache made for another bundle is not used, even when the bundle kept its length', () => {
    const dir = tempDir('mkt-code-cache-');
    try {
      mkdirSync(join(dir.path, 'bin'));
      mkdirSync(join(dir.path, 'dist'));
      for (const f of ['bin/mkt', 'bin/package.json', 'dist/cli.cjs']) copyFileSync(join(root, f), join(dir.path, f));
      const bundle = join(dir.path, 'dist/cli.cjs');
      const size = statSync(bundle).size;
      // The build's cache, stamped for the copy as the build stamps it: the copy takes it.
      const { stamp, cacheFile } = createRequire(import.meta.url)(join(dir.path, 'bin/mkt')) as { stamp(): string; cacheFile: string };
      const cache = readFileSync(join(root, 'dist/cli.cjs.cache'));
      writeFileSync(cacheFile, Buffer.concat([Buffer.from(stamp(), 'latin1'), cache.subarray(cache.indexOf(0x0a) + 1)]));
      expect(cacheTaken(join(dir.path, 'bin/mkt'))).toBe('false');
      // An edit of the same length (V8 itself compares only lengths) must not run the old code.
      const other = VERSION.replace(/\d/g, '9');
      expect(other.length).toBe(VERSION.length);
      writeFileSync(bundle, readFileSync(bundle, 'utf8').replace(`"${VERSION}"`, `"${other}"`));
      expect(statSync(bundle).size).toBe(size);
      expect(cacheTaken(join(dir.path, 'bin/mkt'))).toBe('undefined');
      const r = spawnSync(process.execPath, [join(dir.path, 'bin/mkt'), '--version'], { encoding: 'utf8' });
      expect(r.stdout).toBe(`${other}\n`);
    } finally {
      dir.remove();
    }
  });

  it('a verb loaded from dist/ by the bundle answers with one line on stderr and no warning', async () => {
    const r = await runMkt(['tickets', 'list', '--server', 'http://127.0.0.1:9']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^mkt: cannot reach http:\/\/127\.0\.0\.1:9[^\n]*\n$/);
  });

  it('the bundle also runs under a plain require(), loading its verbs with Node\'s own import()', () => {
    const code = `process.argv = [process.execPath, 'mkt', 'auth', 'logout', 'tickets']; require(${JSON.stringify(join(root, 'dist/cli.cjs'))});`;
    const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', env: { ...process.env, MKT_CREDENTIAL_STORE: 'file', XDG_CONFIG_HOME: '/nonexistent-mkt-test' } });
    expect(r.stderr).toBe('mkt: not logged in to tickets\n');
    expect(r.status).toBe(1);
  });
});

describe('bin/mkt: one error format across the bundle boundary (issue 30, items 6 and 7)', () => {
  it("commander's usage errors read `mkt: ...`, with the --help hint, exit 2", async () => {
    const r = await runMkt(['tickets', 'list', '--colour', 'red']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("mkt: unknown option '--colour'\n(run with --help for usage)\n");
  });

  it('a refused field is named by its flag, a 429 is exit 3 with the retry hint (errors made by lazily loaded verbs, printed by the bundle)', async () => {
    let answer = { status: 400, error: 'querystring.hours must be <= 8760', headers: {} as Record<string, string> };
    const server = createServer((_req, res) => {
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(JSON.stringify({ error: answer.error }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const env = { MKT_MONITOR_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, MKT_MONITOR_TOKEN: 't' };
    try {
      const refused = await runMkt(['monitor', 'trends', 'api', '--hours', '9000'], env);
      expect(refused).toMatchObject({ code: 2, stderr: 'mkt: --hours must be <= 8760\n' });
      answer = { status: 429, error: 'rate limit exceeded', headers: { 'retry-after': '12' } };
      const limited = await runMkt(['monitor', 'status'], env);
      expect(limited).toMatchObject({ code: 3, stderr: 'mkt: rate limit exceeded (HTTP 429)\nhint: rate limited; retry after 12 s\n' });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('pipes', () => {
  it('a reader that closes the pipe early (`mkt ... | head -1`, here `| true`) is not an error', async () => {
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${join(import.meta.dirname, '../../bin/mkt')}" monitor --help | true; exit \${PIPESTATUS[0]}`], { encoding: 'utf8' });
    expect(r.stderr).not.toMatch(/EPIPE/);
    expect(r.status).toBe(0);
  });
});
