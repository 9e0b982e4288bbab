// The built binary (bin/mkt -> dist/cli.cjs -> lazily loaded verbs): exit codes and one-line
// errors survive the bundle boundary. Needs `npm run build` first (npm test does it).
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { VERSION } from '../../src/version.js';

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
    const r = await runMkt(['serve', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
  it('a negative answer from a lazily loaded verb exits 1', async () => {
    const r = await runMkt(['auth', 'logout', 'tickets'], { XDG_CONFIG_HOME: '/nonexistent-mkt-test' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('mkt: not logged in to tickets\n');
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
