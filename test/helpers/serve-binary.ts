// Runs the real binary as a server: `mkt serve <service> --port 0 --data-dir DIR`, resolved once
// it prints `listening on`. No test framework here, so the benchmarks use it too.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const mkt = join(import.meta.dirname, '../../bin/mkt');

export interface Served {
  url: string;
  child: ChildProcess;
  exited: Promise<NodeJS.Signals | number | null>;
  /** Everything it has printed so far, stdout and stderr together. */
  output(): string;
}

/** Starts the server with `env` over this process's environment (MKT_LOG_LEVEL=warn unless given). */
export async function serveBinary(service: string, dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<Served> {
  const child = spawn(process.execPath, [mkt, 'serve', service, '--port', '0', '--data-dir', dataDir], {
    env: { ...process.env, MKT_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  let out = '';
  let listening = false;
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (listening) return;
      const m = /^listening on (http:\/\/\S+)$/m.exec(out);
      if (m) {
        listening = true;
        resolve(m[1]!);
      }
    });
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', () => reject(new Error(`mkt serve ${service} exited before listening:\n${out}`)));
  });
  return { url, child, exited, output: () => out };
}
