// Issue 11 defect 9: `mkt sync plan buy --open` hands a browser only http(s) checkout URLs. The
// URL comes from the server (here the stripe provider against a stand-in Stripe API that answers
// whatever checkout URL the test chooses); $BROWSER is a script that records what it was given.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStripeStandIn, type StandInStripe } from '../../helpers/stripe-standin.js';
import { waitFor } from '../../helpers/wait.js';
import { startSyncWorld, type Device, type SyncWorld } from './harness.js';

let stripe: StandInStripe;
let w: SyncWorld;
let a: Device;
let opened: string;

beforeAll(async () => {
  stripe = await startStripeStandIn();
  w = await startSyncWorld({
    flags: { syncPayments: 'stripe', syncStripe: { secretKey: 'sk_test_standin_0123456789', webhookSecret: 'whsec_standin_0123456789abcdef', host: stripe.host, port: stripe.port, protocol: 'http' } },
  });
  a = w.device('a');
  expect((await a.mkt(['login', '--app-key', w.appKey, '--email', w.email], `${w.password}\n`)).code).toBe(0);
  opened = join(a.home, 'opened.txt');
  const browser = join(a.home, 'browser.sh');
  writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
  chmodSync(browser, 0o755);
  a.env.BROWSER = browser;
});
afterAll(async () => {
  await w?.close();
  await stripe?.close();
});

describe('mkt sync plan buy --open', () => {
  it('refuses a checkout URL that is not http(s): non-zero exit, a clear error, nothing opened', async () => {
    for (const hostile of ['file:///etc/passwd', 'javascript:alert(1)', 'ssh://attacker.example/x', 'not a url']) {
      stripe.checkoutUrl = () => hostile;
      const buy = await a.mkt(['plan', 'buy', '--cap', '10GiB', '--open']);
      expect(buy.code, hostile).toBe(3);
      expect(buy.err).toMatch(/checkout URL .*nothing was opened/);
      expect(buy.out).toBe('');
    }
    // An https URL is opened (through $BROWSER): the only URL the script ever received.
    stripe.checkoutUrl = (id) => `https://checkout.stripe.test/c/pay/${id}`;
    const ok = await a.mkt(['plan', 'buy', '--cap', '10GiB', '--open']);
    expect(ok.code, ok.err).toBe(0);
    const url = ok.out.trim();
    expect(url).toMatch(/^https:\/\/checkout\.stripe\.test\/c\/pay\//);
    // The script's `>>` creates the file before printf writes to it: wait for a whole line.
    const lines = await waitFor(async () => existsSync(opened) && readFileSync(opened, 'utf8').endsWith('\n') && readFileSync(opened, 'utf8').trim().split('\n'), 'the browser script to run');
    expect(lines).toEqual([url]);
  });
});
