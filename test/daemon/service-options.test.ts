// Service options (issue 29, item 1): each service's TypeBox schema refuses a misspelt key and a
// wrong-typed value with one clear line, and the variables fill the options with the precedence
// each service always had (option > variable > default), checked once before the service opens.
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { OptionsError, resolveOptions } from '../../daemon/service-options.js';
import { marketplaceOptions, type MarketplaceOptions } from '../../daemon/services/marketplace/options.js';
import { monitorOptions } from '../../daemon/services/monitor/options.js';
import { ticketsOptions } from '../../daemon/services/tickets/options.js';
import { startService } from '../../daemon/start.js';
import { createLogger } from '../../daemon/logger.js';
import { tempDir } from '../helpers/tmp.js';

const market = (given: MarketplaceOptions, env: NodeJS.ProcessEnv = {}): MarketplaceOptions => resolveOptions('marketplace', marketplaceOptions, given, env);
const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(OptionsError);
    return (err as Error).message;
  }
  throw new Error('not refused');
};

describe('a misspelt or wrong-typed option is refused, one line naming it', () => {
  it('an unknown key, at the top or inside a nested setting', () => {
    expect(refusal(() => market({ syncUrlTtl: 60 } as MarketplaceOptions))).toBe('unknown marketplace option "syncUrlTtl"');
    expect(refusal(() => market({ syncS3: { bucket: 'b', endpiont: 'http://s3' } } as MarketplaceOptions))).toBe('unknown marketplace option "syncS3.endpiont"');
    expect(refusal(() => resolveOptions('tickets', ticketsOptions, { tokn: 'x' } as never, {}))).toBe('unknown tickets option "tokn"');
    expect(refusal(() => resolveOptions('monitor', monitorOptions, { tlsCA: 'pem' } as never, {}))).toBe('unknown monitor option "tlsCA"');
  });

  it('a value of the wrong type, or outside a choice', () => {
    expect(refusal(() => market({ syncUrlTtlSeconds: '60' } as never))).toBe('marketplace option "syncUrlTtlSeconds": expected number, not "60"');
    expect(refusal(() => market({ syncPayments: 'paypal' } as never))).toBe('marketplace option "syncPayments": expected one of "local", "stripe", not "paypal"');
    expect(refusal(() => resolveOptions('tickets', ticketsOptions, { peers: 'http://a' } as never, {}))).toBe('tickets option "peers": expected array, not "http://a"');
    expect(refusal(() => resolveOptions('monitor', monitorOptions, { alertBackoffMs: [50, '50'] } as never, {}))).toBe('monitor option "alertBackoffMs.1": expected number, not "50"');
  });

  it('startService refuses before the service opens: nothing listens', async () => {
    const dir = tempDir('mkt-options-');
    try {
      const quiet = new Writable({ write: (_c, _e, cb) => cb() });
      const start = startService('tickets', { host: '127.0.0.1', port: 0, dataDir: dir.path, options: { token: 't0ken', syncIntervalMS: 5 } as never, env: {}, logger: createLogger({ level: 'silent' }), out: quiet });
      await expect(start).rejects.toThrow('unknown tickets option "syncIntervalMS"');
      await expect(start).rejects.toHaveProperty('name', 'OptionsError');
    } finally {
      dir.remove();
    }
  });
});

describe('the environment fills the options it always filled, with the same precedence', () => {
  it('an option given wins over its variable; a variable fills what is not given', () => {
    const env = { MKT_DATABASE_URL: 'postgres://env/db', MKT_SYNC_PAYMENTS: 'stripe', MKT_PUBLIC_URL: 'https://env.example', MKT_SYNC_OBJECT_STORE: 's3', MKT_SYNC_UPLOAD_IDLE_HOURS: '2', MKT_SYNC_REAPER_SCHEDULE: '0 * * * * *', MKT_SYNC_TOKEN_LIFETIME_SECONDS: '600', MKT_LICENSE_ISSUER: 'env-issuer' };
    expect(market({}, env)).toEqual({ databaseUrl: 'postgres://env/db', syncPayments: 'stripe', publicUrl: 'https://env.example', syncObjectStore: 's3', syncUploadIdleHours: 2, syncReaperSchedule: '0 * * * * *', syncTokenLifetimeSeconds: 600, licenseIssuer: 'env-issuer' });
    const given: MarketplaceOptions = { databaseUrl: ' postgres://flag/db ', syncPayments: 'local', publicUrl: 'https://flag.example', syncObjectStore: 'local', syncUploadIdleHours: 0.5, syncReaperSchedule: '* * * * * *', syncTokenLifetimeSeconds: 120, licenseIssuer: 'flag-issuer' };
    expect(market(given, env)).toEqual({ ...given, databaseUrl: 'postgres://flag/db' });
  });

  it('empty variables are unset, except the issuer, which was always taken as it is', () => {
    expect(market({}, { MKT_DATABASE_URL: ' ', MKT_SYNC_PAYMENTS: '', MKT_SYNC_TOKEN_LIFETIME_SECONDS: '', MKT_LICENSE_ISSUER: '' })).toEqual({ licenseIssuer: '' });
    expect(resolveOptions('monitor', monitorOptions, {}, { MKT_DATABASE_URL: 'postgresql://m/db' })).toEqual({ databaseUrl: 'postgresql://m/db' });
    // The tickets token's variable stays in its own chain (flag > MKT_TICKETS_TOKEN > file > generated), whose source is logged.
    expect(resolveOptions('tickets', ticketsOptions, { peers: [] }, { MKT_TICKETS_TOKEN: 'x' })).toEqual({ peers: [] });
  });

  it('a bad value keeps the words it always had, whether it came from an option or a variable', () => {
    expect(refusal(() => market({ syncTokenLifetimeSeconds: 5 }))).toMatch(/MKT_SYNC_TOKEN_LIFETIME_SECONDS must be a whole number of seconds from 60 to 2592000/);
    expect(refusal(() => market({}, { MKT_SYNC_TOKEN_LIFETIME_SECONDS: '1.5' }))).toMatch(/MKT_SYNC_TOKEN_LIFETIME_SECONDS/);
    expect(refusal(() => market({}, { MKT_SYNC_UPLOAD_IDLE_HOURS: 'abc' }))).toBe('MKT_SYNC_UPLOAD_IDLE_HOURS must be a positive number, not "abc"');
    expect(refusal(() => market({ syncUrlTtlSeconds: 0 }))).toBe('syncUrlTtlSeconds must be a positive number, not "0"');
    expect(refusal(() => market({}, { MKT_SYNC_OBJECT_STORE: 'gcs' }))).toBe('unknown sync object store "gcs" (expected local or s3)');
    expect(refusal(() => market({}, { MKT_SYNC_PAYMENTS: 'paypal' }))).toBe('unknown sync payment provider "paypal" (expected local or stripe)');
    expect(refusal(() => market({}, { MKT_DATABASE_URL: 'mysql://db' }))).toBe('the database URL must start with postgres:// or postgresql://');
  });

  it('resolving twice changes nothing (a resolved object is a valid given one)', () => {
    const once = market({ syncUrlTtlSeconds: 60 }, { MKT_SYNC_UPLOAD_IDLE_HOURS: '3', MKT_DATABASE_URL: 'postgres://a/b' });
    expect(market(once, {})).toEqual(once);
  });
});
