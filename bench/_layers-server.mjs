// One layer of a direct lane's path at a time, for bench/_layers.ts: a node:http server answering
// LAYERS_BODY to every request, with LAYERS_VARIANT saying how much of what the lanes do beside
// the answer it does. `bare`: nothing; `server`: the daemon's request and response classes and
// timeouts (daemon/http-server.ts); `line`: and the request line (plugins/request-log.ts) from a
// logger made as the daemon makes it; `token`: and the shared token's check (plugins/bearer.ts);
// `token-in-daemon`: `token` served beside a whole tickets service started in the same process
// (its modules, store, heap and timers), to tell what the process costs from what the path does.
// On the build (`npm run build`), with the young generation held and governed as `mkt serve` does.
import { createServer } from 'node:http';
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { existsSync } from 'node:fs';
import { URL } from 'node:url';

const dist = new URL('../dist/', import.meta.url);
if (!existsSync(new URL('daemon/server.js', dist))) {
  console.error('the layers run on the build: run `npm run build` first');
  process.exit(2);
}
const load = (path) => import(new URL(path, dist).href);
const { holdYoungGeneration, governYoungGeneration } = await load('daemon/young-generation.js');
holdYoungGeneration();
const { LineRequest, ClosingResponse } = await load('daemon/http-server.js');
const { resolveTimeouts, fastifyTimeoutOptions } = await load('daemon/timeouts.js');
const { sweepIdleConnections } = await load('daemon/idle-sweep.js');
const { createLogger } = await load('daemon/logger.js');
const { RequestLines } = await load('daemon/plugins/request-log.js');
const { RequestIds } = await load('daemon/direct-routes.js');
const { secretMatcher } = await load('daemon/plugins/bearer.js');

const variant = process.env.LAYERS_VARIANT ?? 'bare';
const body = process.env.LAYERS_BODY ?? '{}';
const matches = secretMatcher(process.env.LAYERS_TOKEN ?? '');
const length = String(Buffer.byteLength(body));
const lines = new RequestLines(createLogger({ level: 'info' }).child({ service: 'layers' }));
const ids = new RequestIds();
const part = RequestLines.routePart('GET', '/tickets/:id');

const answer = (res) => {
  res.writeHead(200, ['content-type', 'application/json; charset=utf-8', 'content-length', length]);
  res.end(body);
};
const logged = (res) => {
  const id = ids.next();
  const start = performance.now();
  answer(res);
  lines.write(id, part, 200, performance.now() - start);
};
const handlers = {
  bare: (_req, res) => answer(res),
  server: (_req, res) => answer(res),
  line: (_req, res) => logged(res),
  token: (req, res) => {
    const auth = req.headers.authorization;
    if (auth === undefined || !auth.startsWith('Bearer ') || !matches(auth.slice(7))) {
      res.statusCode = 401;
      res.end();
      return;
    }
    logged(res);
  },
};
handlers['token-in-daemon'] = handlers.token;
const handler = handlers[variant];
if (!handler) {
  console.error(`unknown LAYERS_VARIANT ${variant}`);
  process.exit(2);
}
const timeouts = resolveTimeouts();
const t = fastifyTimeoutOptions(timeouts);
const server = variant === 'bare' ? createServer(handler) : createServer({ ...t.http, IncomingMessage: LineRequest, ServerResponse: ClosingResponse }, handler);
if (variant !== 'bare') {
  // As daemon/http-server.ts sets them: the idle limit swept, not node's socket timer (which
  // every read and write re-arms, and which the daemon left in the tenth session).
  server.keepAliveTimeout = t.keepAliveTimeout;
  server.requestTimeout = t.requestTimeout;
  sweepIdleConnections(server, timeouts.idleMs);
}
if (variant === 'token-in-daemon') {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { Writable } = await import('node:stream');
  const { startService } = await load('daemon/start.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'mkt-bench-layers-daemon-'));
  const running = await startService('tickets', { host: '127.0.0.1', port: 0, dataDir, options: { token: process.env.LAYERS_TOKEN }, env: {}, out: new Writable({ write: (_c, _e, cb) => cb() }) });
  // Lines the service writes go to this process's stdout, which the bench drains; it stops with the process.
  process.once('SIGTERM', () => void running.close().then(() => process.exit(0)));
}
governYoungGeneration();
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
