// Start-up time of `mkt --version` and `mkt tickets --help` as a ratio to `node -e 0`
// (target within 1.7x), measured the same way in the same run.
import { join } from 'node:path';
import { ratio, startupEnv, timeCommand } from './_util.js';

export async function run(): Promise<void> {
  const env = startupEnv();
  const mkt = join(import.meta.dirname, '..', 'bin', 'mkt');
  const base = timeCommand(process.execPath, ['-e', '0'], 20, env);
  console.log(`node -e 0                 ${base.toFixed(1)} ms (baseline)`);
  for (const args of [['--version'], ['tickets', '--help'], ['monitor', '--help']]) {
    const ms = timeCommand(process.execPath, [mkt, ...args], 20, env);
    console.log(`mkt ${args.join(' ').padEnd(21)} ${ms.toFixed(1)} ms  ratio ${ratio(ms, base)} (target <= 1.70)`);
  }
}
