// The address of this server as a client reached it over one connection: the socket's own
// address and port, never the request's Host header, which any client chooses.
import type { FastifyRequest } from 'fastify';

/** This server as reached over the connection of `req` (mkt serves plain HTTP itself). */
export function socketUrl(req: FastifyRequest): string {
  let addr = req.socket.localAddress ?? '127.0.0.1';
  // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d.
  if (addr.startsWith('::ffff:') && addr.includes('.')) addr = addr.slice('::ffff:'.length);
  return `http://${addr.includes(':') ? `[${addr}]` : addr}:${req.socket.localPort}`;
}
