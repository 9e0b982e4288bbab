// Waiting helpers for tests that talk to real servers: a free port, and polling until a condition holds.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The first port of the kernel's ephemeral range (outgoing connections take their local ports from
 * it): 32768 when it cannot be read.
 */
function ephemeralStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

function tryListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * A port that was free a moment ago (for nodes that must know each other's URLs up front). Drawn
 * below the ephemeral range: a port the kernel handed out there could be taken, before the test
 * binds it, as the local side of any outgoing connection on the machine (a flake seen under load).
 */
export async function freePort(): Promise<number> {
  const high = ephemeralStart() - 1;
  const low = Math.max(1024, high - 16_000);
  for (let i = 0; i < 100; i++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await tryListen(port)) return port;
  }
  throw new Error(`no free port found below ${high + 1} in 100 tries`);
}

/** Polls until `check` returns a truthy value (or throws after the deadline). */
export async function waitFor<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}
