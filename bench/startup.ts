// Start-up time of `mkt --version`, `mkt tickets --help` and `mkt monitor --help` as a ratio to
// `node -e 0` (goal <= 1.50), measured the same way in the same run, run by run in turn.
import { join } from 'node:path';
import { ratio, startupEnv } from './_util.js';
import { timeAgainstNode } from './_startup.js';

const GOAL = 1.5;

export async function run(): Promise<void> {
  const mkt = join(import.meta.dirname, '..', 'bin', 'mkt');
  const commands = [['--version'], ['tickets', '--help'], ['monitor', '--help']];
  const t = timeAgainstNode(
    commands.map((args) => [process.execPath, mkt, ...args]),
    20,
    startupEnv(),
  );
  console.log(`node -e 0                 ${t.baseline.toFixed(1).padStart(6)} ms (baseline)`);
  for (const [i, args] of commands.entries()) {
    const ms = t.commands[i]!;
    console.log(`mkt ${args.join(' ').padEnd(21)} ${ms.toFixed(1).padStart(6)} ms  ratio ${ratio(ms, t.baseline)} (goal <= ${GOAL.toFixed(2)})${ms / t.baseline <= GOAL ? '' : '  MISSED'}`);
  }
}
