// `mkt serve` hands each service its own options, of the type its schema declares (issue 29,
// item 1), and a bad option or variable is a usage error: exit 2, one line, nothing listening.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import { run } from '../../../commands/root/run.js';
import { SERVICE_LOADERS } from '../../../daemon/services/registry.js';
import { MarketplaceOptions } from '../../../daemon/services/marketplace/options.js';
import { MonitorOptions } from '../../../daemon/services/monitor/options.js';
import { TicketsOptions } from '../../../daemon/services/tickets/options.js';
import type { ServiceName } from '../../../src/config/services.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';

const calls: { name: ServiceName; options: unknown; host: string; port: number }[] = [];
let stub = true;

vi.mock('../../../daemon/start.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../daemon/start.js')>();
  return {
    ...real,
    // Records what serve hands each service; the real harness runs when a test wants its refusal.
    startService: vi.fn(async (name: ServiceName, opts: Parameters<typeof real.startService>[1]) => {
      calls.push({ name, options: opts.options, host: opts.host, port: opts.port });
      if (!stub) return real.startService(name, opts);
      return { name, url: 'http://stub', close: async (): Promise<void> => undefined } as unknown as Awaited<ReturnType<typeof real.startService>>;
    }),
    // The stubbed services listen nowhere: their default ports may be taken on this machine.
    checkPortFree: vi.fn(async (host: string, port: number) => (stub ? undefined : real.checkPortFree(host, port))),
    trapStopSignals: () => new Promise<string>(() => undefined),
    runUntilSignalled: vi.fn(async () => undefined),
  };
});

const cleanup: (() => void)[] = [];
afterEach(() => {
  calls.length = 0;
  stub = true;
  for (const f of cleanup.splice(0)) f();
});

async function serve(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; err: string }> {
  const dir = tempDir('mkt-serve-');
  cleanup.push(() => dir.remove());
  const io = fakeIO({ env });
  const code = await run(['serve', ...args, '--data-dir', dir.path], io);
  return { code, err: io.err() };
}

describe('mkt serve hands each service the options its schema declares', () => {
  it('serve all: each service gets only its own flags, and each module checks them against its options schema', async () => {
    const r = await serve(['all', '--token', 't0ken', '--peer', 'http://10.0.0.2:7072', '--sync-interval', '5', '--tombstone-max-age', '12h', '--public-url', 'https://market.example.com', '--payments', 'local', '--database-url', 'postgres://db.internal/mkt']);
    expect(r).toEqual({ code: 0, err: '' });
    expect(calls.map((c) => c.name)).toEqual(['marketplace', 'monitor', 'tickets']);
    const byName = Object.fromEntries(calls.map((c) => [c.name, c.options]));
    expect(byName.marketplace).toEqual({ publicUrl: 'https://market.example.com', syncPayments: 'local', databaseUrl: 'postgres://db.internal/mkt' });
    expect(byName.monitor).toEqual({ databaseUrl: 'postgres://db.internal/mkt' });
    expect(byName.tickets).toEqual({ token: 't0ken', peers: ['http://10.0.0.2:7072'], syncIntervalMs: 5000, tombstoneMaxAgeMs: 12 * 3_600_000 });
    const schemas = { marketplace: MarketplaceOptions, monitor: MonitorOptions, tickets: TicketsOptions };
    for (const c of calls) {
      const mod = await SERVICE_LOADERS[c.name]();
      expect(mod.options.schema, c.name).toBe(schemas[c.name]);
      expect(Value.Check(mod.options.schema, JSON.parse(JSON.stringify(c.options))), c.name).toBe(true);
    }
  });

  it('flags left out are not handed on as keys the schema would refuse', async () => {
    expect((await serve(['tickets'])).code).toBe(0);
    expect(calls).toEqual([{ name: 'tickets', options: { token: undefined, peers: [], syncIntervalMs: undefined, tombstoneMaxAgeMs: undefined }, host: '127.0.0.1', port: 7072 }]);
  });

  it('--tombstone-max-age takes the words of the config key (90d, 12h, 30m, seconds); anything else is exit 2, one line', async () => {
    for (const [flag, ms] of [['90d', 90 * 86_400_000], ['30m', 1_800_000], ['3600', 3_600_000], ['1.5h', 5_400_000]] as const) {
      calls.length = 0;
      expect((await serve(['tickets', '--tombstone-max-age', flag])).code).toBe(0);
      expect((calls[0]?.options as { tombstoneMaxAgeMs?: number }).tombstoneMaxAgeMs, flag).toBe(ms);
    }
    for (const bad of ['0', '-5d', '90 days', '1w', '']) {
      calls.length = 0;
      const r = await serve(['tickets', '--tombstone-max-age', bad]);
      expect(r.code, bad).toBe(2);
      expect(r.err.trim().split('\n'), bad).toEqual([`mkt: --tombstone-max-age must be a positive duration such as 90d, 12h, 30m or 3600 (seconds), got ${JSON.stringify(bad)}`]);
      expect(calls).toEqual([]);
    }
  });
});

describe('a bad option or variable is a usage error: exit 2, one line', () => {
  it.each([
    [{ MKT_SYNC_UPLOAD_IDLE_HOURS: 'abc' }, 'mkt: MKT_SYNC_UPLOAD_IDLE_HOURS must be a positive number, not "abc"'],
    [{ MKT_SYNC_TOKEN_LIFETIME_SECONDS: '5' }, 'mkt: MKT_SYNC_TOKEN_LIFETIME_SECONDS must be a whole number of seconds from 60 to 2592000, not "5"'],
    [{ MKT_SYNC_OBJECT_STORE: 'gcs' }, 'mkt: unknown sync object store "gcs" (expected local or s3)'],
    [{ MKT_SYNC_PAYMENTS: 'paypal' }, 'mkt: unknown sync payment provider "paypal" (expected local or stripe)'],
  ])('marketplace with %o', async (env, line) => {
    stub = false;
    const r = await serve(['marketplace', '--port', '0'], env);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toEqual([line]);
  });

  it('a malformed database URL keeps the words that name the flag and the variable', async () => {
    const r = await serve(['monitor', '--port', '0'], { MKT_DATABASE_URL: 'mysql://db' });
    expect(r.code).toBe(2);
    expect(r.err.trim()).toBe('mkt: the database URL must start with postgres:// or postgresql:// (--database-url or MKT_DATABASE_URL)');
    expect(calls).toEqual([]);
  });
});
