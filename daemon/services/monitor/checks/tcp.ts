// TCP targets (`url: tcp://host:port`): a connection that opens within the timeout, then
// optionally a line sent and an answer expected. The host is the operator's choice, asked as written.
import { connect } from 'node:net';
import type { TargetConfig, TcpConfig } from '../../../../src/config/monitor.js';
import type { Snapshot } from '../../../../src/store/monitor.js';

/** What is read of an answer at most: a peer that streams forever costs no more memory than this. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** How much of an answer a down snapshot's `error` shows. */
const SHOWN_CHARS = 100;

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  ECONNABORTED: 'connection aborted',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EHOSTDOWN: 'host down',
  ETIMEDOUT: 'connection timed out',
  EADDRNOTAVAIL: 'address not available',
};

/** An errno as a reader would say it; name-resolution failures keep their code (ENOTFOUND, EAI_AGAIN). */
function reason(err: NodeJS.ErrnoException, host: string): string {
  const code = err.code ?? '';
  if (REASONS[code]) return REASONS[code]!;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'ENODATA') return `cannot resolve ${host} (${code})`;
  return code ? `${code}: ${err.message}` : err.message;
}

/**
 * Text from the peer, fit for an error line: at most SHOWN_CHARS characters, quoted, with control,
 * format and bidirectional characters escaped, so an answer cannot redraw a terminal or a log.
 */
export function shown(text: string): string {
  let s = text.length > SHOWN_CHARS ? text.slice(0, SHOWN_CHARS) : text;
  if (/[\uD800-\uDBFF]$/.test(s)) s = s.slice(0, -1);
  const quoted = JSON.stringify(s).replace(/[\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ufff9-\ufffb]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return text.length > SHOWN_CHARS ? `${quoted}...` : quoted;
}

/** The expectation as the config wrote it: `"+PONG"` or `/^\+PONG/i`. */
function describeExpect(e: NonNullable<TcpConfig['expect']>): string {
  return 'text' in e ? shown(e.text) : `/${e.regex}/${e.flags}`;
}

/** Tests an answer against the expectation; built once per check (a regex compiles once). */
function matcher(e: NonNullable<TcpConfig['expect']>): (answer: Buffer) => boolean {
  if ('text' in e) {
    const needle = Buffer.from(e.text, 'utf8');
    return (answer) => answer.includes(needle);
  }
  const re = new RegExp(e.regex, e.flags);
  return (answer) => re.test(answer.toString('utf8'));
}

/**
 * One TCP check. Operational once connected (no `send`, no `expect`), once `send` is written (no
 * `expect`), or once the answer holds the expectation; the response time is the connect time. The
 * timeout runs from the start; the socket is destroyed on every path, and `stop` ends it at once.
 */
export async function checkTcp(t: TargetConfig, now: () => number, stop?: AbortSignal): Promise<Snapshot> {
  const started = now();
  const checked_at = new Date(started).toISOString();
  const down = (error: string): Snapshot => ({ status: 'down', checked_at, response_time_ms: 0, error });
  const tcp = t.tcp;
  if (!tcp) return down(`not a tcp:// target: ${t.url}`);
  if (stop?.aborted) return down('check stopped');
  const expect = tcp.expect;
  const matches = expect ? matcher(expect) : undefined;
  return new Promise<Snapshot>((resolve) => {
    let phase: 'connecting' | 'sending' | 'answering' = 'connecting';
    let connectMs = 0;
    let answer = Buffer.alloc(0);
    let done = false;
    const socket = connect({ host: tcp.host, port: tcp.port });
    const finish = (snap: Snapshot): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
      socket.destroy();
      resolve(snap);
    };
    const ok = (): void => finish({ status: 'operational', checked_at, response_time_ms: connectMs });
    const got = (): string => (answer.length ? `got ${shown(answer.toString('utf8'))}` : 'got nothing');
    const onStop = (): void => finish(down('check stopped'));
    const timer = setTimeout(() => {
      const waiting = phase === 'answering' && expect ? `waiting for ${describeExpect(expect)}${answer.length ? ` (${got()})` : ''}` : phase;
      finish(down(`timed out after ${t.timeoutMs} ms ${waiting}`));
    }, t.timeoutMs);
    stop?.addEventListener('abort', onStop, { once: true });

    socket.on('error', (err: NodeJS.ErrnoException) => {
      const where = phase === 'answering' && expect ? ` while waiting for ${describeExpect(expect)}` : phase === 'sending' ? ' while sending' : '';
      finish(down(`${reason(err, tcp.host)}${where}`));
    });
    socket.once('connect', () => {
      connectMs = Math.max(1, Math.round(now() - started));
      phase = expect ? 'answering' : 'sending';
      if (tcp.send !== undefined) {
        socket.write(tcp.send, (err) => {
          if (!err && !expect) ok();
        });
      }
      if (!expect && tcp.send === undefined) ok();
    });
    // Any other end (a close without an error or an answer) is down too; after a result it is a no-op.
    socket.once('close', () => finish(down(`the connection closed ${phase === 'connecting' ? 'before it opened' : 'early'}`)));
    if (!expect || !matches) return;
    socket.on('data', (chunk: Buffer) => {
      if (done) return;
      const room = MAX_ANSWER_BYTES - answer.length;
      answer = Buffer.concat([answer, room < chunk.length ? chunk.subarray(0, room) : chunk]);
      if (matches(answer)) return ok();
      if (answer.length >= MAX_ANSWER_BYTES) finish(down(`expected ${describeExpect(expect)}, ${got()} (no match in the first ${answer.length / 1024} KiB)`));
    });
    socket.once('end', () => finish(down(`expected ${describeExpect(expect)}, ${got()} (the peer closed the connection)`)));
  });
}
