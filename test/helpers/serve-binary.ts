// Runs the real binary as a server: `mkt serve <service> --port 0 --data-dir DIR`, resolved once
// it prints `listening on`. No test framework here, so the benchmarks use it too.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

const mkt = join(import.meta.dirname, '../../bin/mkt');

export interface Served {
  url: string;
  child: ChildProcess;
  exited: Promise<NodeJS.Signals | number | null>;
  /** What it has written to stdout so far: its log lines, whole, never spliced with stderr's. */
  stdout(): string;
}

/** Starts the server with `env` over this process's environment (MKT_LOG_LEVEL=warn unless given). */
export async function serveBinary(service: string, dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<Served> {
  const child = spawn(process.execPath, [mkt, 'serve', service, '--port', '0', '--data-dir', dataDir], {
    env: { ...process.env, MKT_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  // Kept apart, so that a chunk of stderr never lands inside a JSON line of the log. Read as
  // Buffers (tests attach their own 'data' listeners, which setEncoding would change under them),
  // decoded so that a character split across two chunks stays whole.
  const outText = new StringDecoder('utf8');
  const errText = new StringDecoder('utf8');
  let stdout = '';
  let stderr = '';
  let listening = false;
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      stdout += outText.write(c);
      if (listening) return;
      const m = /^listening on (http:\/\/\S+)$/m.exec(stdout);
      if (m) {
        listening = true;
        resolve(m[1]!);
      }
    });
    child.stderr!.on('data', (c: Buffer) => (stderr += errText.write(c)));
    child.once('exit', () => reject(new Error(`mkt serve ${service} exited before listening:\n${stdout}${stderr}`)));
  });
  return { url, child, exited, stdout: () => stdout };
}
