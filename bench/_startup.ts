// Start-up timing against `node -e 0`: each figure is the median wall time of `runs` spawns after
// a warm-up, as timeCommand measures it, but the baseline and the commands take turns run by run,
// so a burst of load from other jobs on the shared 2-core machine falls on all of them alike.
import { spawnSync } from 'node:child_process';
import { median } from './_util.js';

export interface StartupTimes {
  /** `node -e 0`, ms. */
  baseline: number;
  /** Each command in the order given, ms. */
  commands: number[];
}

/** Each command is `[executable, ...args]`; a non-zero exit fails the benchmark. */
export function timeAgainstNode(commands: string[][], runs: number, env: NodeJS.ProcessEnv): StartupTimes {
  const all = [[process.execPath, '-e', '0'], ...commands];
  const times = all.map((): number[] => []);
  for (let i = 0; i <= runs; i++) {
    for (const [j, [cmd, ...args]] of all.entries()) {
      const t = process.hrtime.bigint();
      const r = spawnSync(cmd!, args, { env, stdio: 'ignore' });
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
      if (i > 0) times[j]!.push(ms);
    }
  }
  const [baseline, ...rest] = times.map(median);
  return { baseline: baseline!, commands: rest };
}
