// Stopping a service while a request is in flight on a keep-alive connection: the request is
// answered, and the stop does not then wait for the keep-alive timeout of that connection.
import { Agent, request } from 'node:http';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { startService } from '../../daemon/start.js';
import { createLogger } from '../../daemon/logger.js';
import { tempDir } from '../helpers/tmp.js';

describe('service stop', () => {
  it('answers the in-flight request, then closes its keep-alive connection promptly', async () => {
    const dir = tempDir('mkt-stop-');
    const logger = createLogger({ level: 'silent' });
    const svc = await startService('tickets', { host: '127.0.0.1', port: 0, dataDir: dir.path, options: { token: 'secret-token' }, env: {}, logger, out: new Writable({ write: (_c, _e, cb) => cb() }) as unknown as NodeJS.WritableStream });
    const agent = new Agent({ keepAlive: true });
    const body = JSON.stringify({ title: 'in flight', requester: 'ana@example.com' });
    const answered = new Promise<number>((resolve, reject) => {
      const req = request(`${svc.url}/tickets`, { method: 'POST', agent, headers: { authorization: 'Bearer secret-token', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      // Half the body now, the rest after the stop has begun: the request is in flight.
      req.write(body.slice(0, 10));
      setTimeout(() => req.end(body.slice(10)), 300);
    });
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    const stopped = svc.close();
    const status = await answered;
    await stopped;
    expect(status).toBeLessThan(500);
    expect(Date.now() - t0).toBeLessThan(5000);
    agent.destroy();
    dir.remove();
  });
});
