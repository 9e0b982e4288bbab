// Parse-level tests of `mkt serve` (gh's runF): every server flag reaches serveRun's options under
// its name (--host defaults to 127.0.0.1, --peer collects, --payments has choices); exit 2 on usage.
import { describe, expect, it } from 'vitest';
import type { serveRun } from '../../../commands/serve/run.js';
import { leafPaths, parseSuite } from '../../helpers/parse-cli.js';

const cli = parseSuite('serve');

describe('mkt serve: parsing', () => {
  it('<service> and --host by default', async () => {
    await cli.verb<typeof serveRun>('serve', ['tickets'], { service: 'tickets', host: '127.0.0.1' });
  });

  it('every server flag, --peer repeated', async () => {
    await cli.verb<typeof serveRun>(
      'serve',
      [
        'marketplace',
        '--host', '0.0.0.0',
        '--port', '0',
        '--data-dir', '/srv/mkt',
        '--config', 'mkt.yaml',
        '--token', 't0k',
        '--peer', 'http://10.0.0.2:7072',
        '--peer', 'http://10.0.0.3:7072',
        '--sync-interval', '15',
        '--tombstone-max-age', '30d',
        '--headers-timeout', '10',
        '--request-timeout', '30',
        '--idle-timeout', '120',
        '--keep-alive-timeout', '5',
        '--public-url', 'https://market.example.com',
        '--database-url', 'postgres://mkt@db/mkt',
        '--payments', 'stripe',
      ],
      {
        service: 'marketplace',
        host: '0.0.0.0',
        port: '0',
        dataDir: '/srv/mkt',
        config: 'mkt.yaml',
        token: 't0k',
        peer: ['http://10.0.0.2:7072', 'http://10.0.0.3:7072'],
        syncInterval: '15',
        tombstoneMaxAge: '30d',
        headersTimeout: '10',
        requestTimeout: '30',
        idleTimeout: '120',
        keepAliveTimeout: '5',
        publicUrl: 'https://market.example.com',
        databaseUrl: 'postgres://mkt@db/mkt',
        payments: 'stripe',
      },
    );
  });

  it('usage errors: no service, an unknown flag, a payment provider outside the choices', async () => {
    await cli.usage(['serve'], /missing required argument 'service'/);
    await cli.usage(['serve', 'tickets', '--tls'], /unknown option '--tls'/);
    await cli.usage(['serve', 'marketplace', '--payments', 'paypal'], /argument 'paypal' is invalid\. Allowed choices are local, stripe\./);
  });

  it('every verb of mkt serve has its parse case', () => {
    expect(cli.covered()).toEqual(leafPaths('serve'));
  });
});
