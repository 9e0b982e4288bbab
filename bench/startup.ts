// Start-up time of `mkt --version`, `mkt tickets --help` and `mkt monitor --help` as a ratio to
// `node -e 0` (goal <= 1.50), measured the same way in the same run. Each command is timed right
// after its own baseline, so load from other jobs on the shared machine falls on both alike.
import { join } from 'node:path';
import { ratio, startupEnv, timeCommand } from './_util.js';

const GOAL = 1.5;

export async function run(): Promise<void> {
  const env = startupEnv();
  const mkt = join(import.meta.dirname, '..', 'bin', 'mkt');
  for (const args of [['--version'], ['tickets', '--help'], ['monitor', '--help']]) {
    const base = timeCommand(process.execPath, ['-e', '0'], 20, env);
    const ms = timeCommand(process.execPath, [mkt, ...args], 20, env);
    const r = ms / base;
    console.log(
      `mkt ${args.join(' ').padEnd(21)} ${ms.toFixed(1).padStart(6)} ms  node -e 0 ${base.toFixed(1).padStart(6)} ms  ratio ${ratio(ms, base)} (goal <= ${GOAL.toFixed(2)})${r <= GOAL ? '' : '  MISSED'}`,
    );
  }
}
