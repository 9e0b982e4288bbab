// Run-level tests of the CLI core: exit codes, usage errors, version, auth profiles.
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../../commands/root/run.js';
import { VERSION } from '../../../src/version.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';
import { freePort } from '../../helpers/wait.js';

const dirs: { remove(): void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

function env(): NodeJS.ProcessEnv {
  const d = tempDir();
  dirs.push(d);
  return { XDG_CONFIG_HOME: d.path, MKT_CREDENTIAL_STORE: 'file' };
}

describe('mkt CLI core', () => {
  it('--version prints the package version and exits 0', async () => {
    const io = fakeIO();
    expect(await run(['--version'], io)).toBe(0);
    expect(io.out().trim()).toBe(VERSION);
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../../package.json'), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });

  it('an unknown command is a usage error (exit 2) with one line on stderr', async () => {
    const io = fakeIO();
    expect(await run(['frobnicate'], io)).toBe(2);
    expect(io.err()).toMatch(/unknown command 'frobnicate'/);
    expect(io.out()).toBe('');
  });

  it('an unknown service for serve is a usage error naming the choices (commander\'s, which completion offers too)', async () => {
    const io = fakeIO();
    expect(await run(['serve', 'nope'], io)).toBe(2);
    expect(io.err()).toMatch(/'nope' is invalid.*Allowed choices are marketplace, monitor, tickets, all\./);
  });

  it('an invalid --port is a usage error', async () => {
    const io = fakeIO({ env: env() });
    expect(await run(['serve', 'all', '--port', '80'], io)).toBe(2);
    expect(await run(['completion', 'tcsh'], io)).toBe(2);
  });

  // The token is checked against its server before it is saved (issue 30 item 2); saving,
  // status and logout against real servers: test/commands/auth/auth.test.ts.
  it('auth login to a server that does not answer exits 3 and saves nothing', async () => {
    const e = env();
    const login = fakeIO({ env: e, stdin: 'sekrit-token\n' });
    expect(await run(['auth', 'login', 'tickets', '--server', `http://127.0.0.1:${await freePort()}`], login)).toBe(3);
    expect(login.err()).toMatch(/nothing saved/);
    expect(login.err()).not.toContain('sekrit-token');
    expect(existsSync(join(e.XDG_CONFIG_HOME!, 'mkt', 'credentials.json'))).toBe(false);
    expect(existsSync(join(e.XDG_CONFIG_HOME!, 'mkt', 'config.json'))).toBe(false);
  });

  it('auth login refuses an empty token and a bad URL', async () => {
    expect(await run(['auth', 'login', 'tickets', '--server', 'http://x'], fakeIO({ env: env(), stdin: '  \n' }))).toBe(2);
    expect(await run(['auth', 'login', 'tickets', '--server', 'ftp://x'], fakeIO({ env: env(), stdin: 't\n' }))).toBe(2);
  });
});
