// Parse-level tests of `mkt license` (gh's runF): each flag reaches its verb's options
// (ValidateOptions, CheckOptions, ...) under its name; --machine's default and requirement; exit 2 on usage.
import { describe, expect, it } from 'vitest';
import type { checkRun } from '../../../commands/license/check.js';
import type { deactivateRun } from '../../../commands/license/deactivate.js';
import type { runRun } from '../../../commands/license/run.js';
import type { statusRun } from '../../../commands/license/status.js';
import type { textRun } from '../../../commands/license/text.js';
import type { validateRun } from '../../../commands/license/validate.js';
import type { verifyRun } from '../../../commands/license/verify.js';
import { leafPaths, parseSuite } from '../../helpers/parse-cli.js';

const cli = parseSuite('license');
const KEYED = ['--key-file', 'license.key', '--server', 'http://m:7070', '--json'];
const keyed = { keyFile: 'license.key', server: 'http://m:7070', json: true };

describe('mkt license: parsing', () => {
  it('validate: --machine, --machine-name, --activate and the key flags', async () => {
    await cli.verb<typeof validateRun>('license validate', [], {});
    await cli.verb<typeof validateRun>('license validate', ['--machine', 'auto', '--machine-name', 'ci-7', '--activate', ...KEYED], { machine: 'auto', machineName: 'ci-7', activate: true, ...keyed });
    await cli.usage(['license', 'validate', 'KEY-ON-ARGV'], /too many arguments/);
  });

  it('status: the key flags', async () => {
    await cli.verb<typeof statusRun>('license status', KEYED, keyed);
    await cli.usage(['license', 'status', '--machine', 'm'], /unknown option '--machine'/);
  });

  it('deactivate: --machine is required', async () => {
    await cli.verb<typeof deactivateRun>('license deactivate', ['--machine', 'ci-runner-7', ...KEYED], { machine: 'ci-runner-7', ...keyed });
    await cli.usage(['license', 'deactivate'], /required option '--machine <id>' not specified/);
  });

  it('verify: --machine defaults to auto', async () => {
    await cli.verb<typeof verifyRun>('license verify', [], { machine: 'auto' });
    await cli.verb<typeof verifyRun>('license verify', ['--machine', 'm1', ...KEYED], { machine: 'm1', ...keyed });
  });

  it('check: --item, --machine (default auto), --public-key, --issuer, --json; no --server (offline)', async () => {
    await cli.verb<typeof checkRun>('license check', [], { machine: 'auto' });
    await cli.verb<typeof checkRun>('license check', ['--item', 'font-pro', '--machine', 'm', '--public-key', 'keys.jwks', '--issuer', 'acme', '--json'], {
      item: 'font-pro',
      machine: 'm',
      publicKey: 'keys.jwks',
      issuer: 'acme',
      json: true,
    });
    await cli.usage(['license', 'check', '--server', 'u'], /unknown option '--server'/);
  });

  it('check: --entitlement is repeatable (issue 33)', async () => {
    await cli.verb<typeof checkRun>('license check', ['--entitlement', 'export-pdf', '--entitlement', 'sso'], { machine: 'auto', entitlement: ['export-pdf', 'sso'] });
  });

  it('run: the command after --, --machine, --wait (default 10m), the key flags; no --json (the output is the command\'s)', async () => {
    await cli.verb<typeof runRun>('license run', ['--', 'make', 'test', '--keep-going'], { command: ['make', 'test', '--keep-going'], wait: '10m' });
    await cli.verb<typeof runRun>('license run', ['--machine', 'ci-7', '--wait', '0', '--key-file', 'k', '--server', 'u', '--', 'sh', '-c', 'exit 3'], {
      command: ['sh', '-c', 'exit 3'],
      machine: 'ci-7',
      wait: '0',
      keyFile: 'k',
      server: 'u',
    });
    await cli.usage(['license', 'run'], /missing required argument 'command'/);
    await cli.usage(['license', 'run', '--json', '--', 'true'], /unknown option '--json'/);
  });

  it('text: <item>, --key-file, --server; no --json', async () => {
    await cli.verb<typeof textRun>('license text', ['font-pro', '--key-file', 'k', '--server', 'u'], { item: 'font-pro', keyFile: 'k', server: 'u' });
    await cli.usage(['license', 'text'], /missing required argument 'item'/);
    await cli.usage(['license', 'text', 'font-pro', '--json'], /unknown option '--json'/);
  });

  it('every verb of mkt license has its parse case', () => {
    expect(cli.covered()).toEqual(leafPaths('license'));
  });
});
