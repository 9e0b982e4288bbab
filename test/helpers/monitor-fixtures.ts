// Real local servers for monitor tests: a switchable health endpoint, an HTTPS server with a
// generated certificate, a tiny UDP DNS server, a WHOIS responder, and a test command whose
// outcome and duration a file controls.
import { createServer as createHttp, type Server } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { createServer as createTcp } from 'node:net';
import { createSocket } from 'node:dgram';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';

export type HealthMode = 'operational' | 'degraded' | 'slow' | 'failing' | 'body-down';

export interface HealthServer {
  url: string;
  origin: string;
  mode: HealthMode;
  close(): Promise<void>;
}

function port(s: { address(): AddressInfo | string | null }): number {
  return (s.address() as AddressInfo).port;
}

function closer(s: Server | ReturnType<typeof createTcp>): () => Promise<void> {
  return () =>
    new Promise((r) => {
      (s as Server).closeAllConnections?.();
      s.close(() => r());
    });
}

export async function healthServer(): Promise<HealthServer> {
  const state: HealthServer = { url: '', origin: '', mode: 'operational', close: async () => undefined };
  const server = createHttp((req, res) => {
    if (req.url === '/v1/items') return res.writeHead(200).end('[]');
    if (req.url === '/admin') return res.writeHead(403).end();
    if (req.url !== '/health') return res.writeHead(404).end();
    const send = (code: number, body: unknown): void => {
      res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    switch (state.mode) {
      case 'operational':
        return send(200, { status: 'ok', database: 'up' });
      case 'degraded':
        return send(200, { status: 'degraded', database: 'slow' });
      case 'body-down':
        return send(200, { status: 'down', database: 'gone' });
      case 'failing':
        return send(500, { error: 'boom' });
      case 'slow':
        setTimeout(() => send(200, { status: 'ok' }), 3000).unref();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.origin = `http://127.0.0.1:${port(server)}`;
  state.url = `${state.origin}/health`;
  state.close = closer(server);
  return state;
}

/** A self-signed certificate for localhost / 127.0.0.1, valid for `days`. */
export function makeCert(dir: string, days = 30): { key: string; cert: string } {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', String(days), '-subj', '/CN=localhost/O=mkt test CA', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
}

export async function httpsServer(pem: { key: string; cert: string }): Promise<{ port: number; close(): Promise<void> }> {
  const server = createHttps(pem, (_req, res) => res.writeHead(200).end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: port(server), close: closer(server) };
}

/** Answers A queries from `records` (name -> addresses); anything else gets NXDOMAIN. */
export async function dnsServer(records: Record<string, string[]>): Promise<{ address: string; close(): Promise<void> }> {
  const sock = createSocket('udp4');
  sock.on('message', (msg, rinfo) => {
    const labels: string[] = [];
    let i = 12;
    while (msg[i]! !== 0) {
      const len = msg[i]!;
      labels.push(msg.subarray(i + 1, i + 1 + len).toString('ascii'));
      i += len + 1;
    }
    const qEnd = i + 5; // zero byte, type (2), class (2)
    const qtype = msg.readUInt16BE(i + 1);
    const name = labels.join('.').toLowerCase();
    const answers = qtype === 1 ? (records[name] ?? []) : [];
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2); // id
    header.writeUInt16BE(0x8180 | (records[name] ? 0 : 3), 2); // response, RD+RA, rcode
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const rrs = answers.map((ip) => {
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0); // pointer to the question name
      rr.writeUInt16BE(1, 2);
      rr.writeUInt16BE(1, 4);
      rr.writeUInt32BE(60, 6);
      rr.writeUInt16BE(4, 10);
      ip.split('.').forEach((o, k) => rr.writeUInt8(Number(o), 12 + k));
      return rr;
    });
    sock.send(Buffer.concat([header, msg.subarray(12, qEnd), ...rrs]), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  return { address: `127.0.0.1:${sock.address().port}`, close: () => new Promise((r) => sock.close(() => r())) };
}

export async function whoisServer(expiry: string): Promise<{ address: string; queries: string[]; close(): Promise<void> }> {
  const queries: string[] = [];
  const server = createTcp((sock) => {
    sock.once('data', (d) => {
      const domain = d.toString().trim();
      queries.push(domain);
      sock.end(`Domain Name: ${domain.toUpperCase()}\r\nRegistrar: Test Registrar Inc.\r\nRegistry Expiry Date: ${expiry}\r\n>>> Last update of WHOIS database <<<\r\n`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { address: `127.0.0.1:${port(server)}`, queries, close: closer(server) };
}

/** A test command (node) whose exit code and duration come from a control file. */
export function testCommand(dir: string): { command: string[]; set(exitCode: number, ms: number): void } {
  const control = join(dir, 'test-control.json');
  const set = (exitCode: number, ms: number): void => writeFileSync(control, JSON.stringify({ exitCode, ms: Math.max(ms, 300) }));
  // Each run takes at least 300 ms, so a loaded machine's slower node start (170 → 310 ms seen in
  // CI) stays well under the 1.5× drift threshold; tests slow the run down by seconds, not ms.
  set(0, 300);
  const script = `const c = JSON.parse(require('fs').readFileSync(${JSON.stringify(control)}, 'utf8')); setTimeout(() => process.exit(c.exitCode), c.ms);`;
  return { command: [process.execPath, '-e', script], set };
}
