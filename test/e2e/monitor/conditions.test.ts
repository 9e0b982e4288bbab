// Issue 31, "Conditions on an HTTP answer", with the real binary: [CERTIFICATE_EXPIRATION] on an
// https target (the monitor trusts the test's certificate through NODE_EXTRA_CA_CERTS, as an
// operator with a private CA would), and a SIGHUP with a malformed condition keeping the
// running configuration.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { httpsServer, makeCert } from '../../helpers/monitor-fixtures.js';
import { serveBinary } from '../../helpers/serve-binary.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('conditions with mkt serve monitor', () => {
  it('[CERTIFICATE_EXPIRATION] reads the time left on an https target; a SIGHUP with a malformed condition keeps the running config', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const pem = makeCert(dir.path, 30); // 720 hours
    const site = await httpsServer(pem);
    cleanups.push(site.close);
    const cfg = join(dir.path, 'monitor.yaml');
    const base = `token: t0k\nrate_limit: { requests: 100000 }\ntargets:\n  secure:\n    url: https://127.0.0.1:${site.port}/\n    interval: 200ms\n    timeout: 10s\n    conditions:\n      - "[STATUS] == 200"\n      - "[CERTIFICATE_EXPIRATION] > 48h"\n  renew-soon:\n    url: https://127.0.0.1:${site.port}/\n    interval: 200ms\n    timeout: 10s\n    conditions:\n      - "[BODY] == ok"\n      - "[CERTIFICATE_EXPIRATION] > 1000h"\n`;
    writeFileSync(cfg, base);
    const s = await serveBinary('monitor', join(dir.path, 'data'), { MKT_CONFIG: cfg, NODE_EXTRA_CA_CERTS: join(dir.path, 'cert.pem'), MKT_LOG_LEVEL: 'info' });
    let out = '';
    s.child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    s.child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    cleanups.push(async () => {
      if (s.child.exitCode === null) s.child.kill('SIGTERM');
      await s.exited;
    });
    const latest = async (t: string): Promise<{ status: string; checked_at: string; error?: string } | undefined> => {
      const r = await fetch(`${s.url}/api/status/${t}`, { headers: { authorization: 'Bearer t0k' } });
      return r.status === 200 ? ((await r.json()) as { latest?: { status: string; checked_at: string; error?: string } }).latest : undefined;
    };
    const secure = await waitFor(async () => latest('secure'), 'the first check of secure');
    expect([secure.status, secure.error]).toEqual(['operational', undefined]);
    const soon = await waitFor(async () => latest('renew-soon'), 'the first check of renew-soon');
    expect(soon.status).toBe('down');
    // 30 days less the moments since the certificate was made: between 719h and 720h.
    expect(soon.error).toMatch(/^condition failed: \[CERTIFICATE_EXPIRATION\] > 1000h \(was 71\dh\d+m\d+s\)$/);

    writeFileSync(cfg, base.replace('"[STATUS] == 200"', '"[STATUS] == pat(2**"'));
    s.child.kill('SIGHUP');
    await waitFor(async () => out.includes('reload failed; keeping the running configuration'), 'the reload failure log');
    expect(out).toContain('monitor.yaml:9: targets.secure.conditions.0 is not a condition: unterminated pat(');
    const before = (await latest('secure'))!.checked_at;
    // Still checked under the running conditions: new snapshots keep coming, still operational.
    const again = await waitFor(async () => {
      const l = await latest('secure');
      return l && l.checked_at !== before ? l : undefined;
    }, 'a check after the refused reload');
    expect(again.status).toBe('operational');
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });
});
