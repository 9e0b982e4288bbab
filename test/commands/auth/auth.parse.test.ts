// Parse-level tests of `mkt auth` (gh's runF): each flag reaches its verb's options (LoginOptions,
// StatusOptions, LogoutOptions); the token never comes from argv; usage errors exit 2.
import { describe, expect, it } from 'vitest';
import type { loginRun } from '../../../commands/auth/login.js';
import type { logoutRun } from '../../../commands/auth/logout.js';
import type { statusRun } from '../../../commands/auth/status.js';
import { leafPaths, parseSuite } from '../../helpers/parse-cli.js';

const cli = parseSuite('auth');

describe('mkt auth: parsing', () => {
  it('login: <service> and an optional --server (defaulted as every client command does, issue 30 item 2); no --token flag', async () => {
    await cli.verb<typeof loginRun>('auth login', ['tickets', '--server', 'http://10.0.0.2:7072'], { service: 'tickets', server: 'http://10.0.0.2:7072' });
    await cli.verb<typeof loginRun>('auth login', ['tickets'], { service: 'tickets' });
    await cli.usage(['auth', 'login', '--server', 'u'], /missing required argument 'service'/);
    await cli.usage(['auth', 'login', 'tickets', '--server', 'u', '--token', 't'], /unknown option '--token'/);
  });

  it('status: --json becomes a boolean', async () => {
    await cli.verb<typeof statusRun>('auth status', [], { json: false });
    await cli.verb<typeof statusRun>('auth status', ['--json'], { json: true });
  });

  it('logout: <service>', async () => {
    await cli.verb<typeof logoutRun>('auth logout', ['monitor'], { service: 'monitor' });
    await cli.usage(['auth', 'logout'], /missing required argument 'service'/);
  });

  it('every verb of mkt auth has its parse case', () => {
    expect(cli.covered()).toEqual(leafPaths('auth'));
  });
});
