// checkConfigRun: `mkt monitor check-config FILE` — validates offline; every problem on its own
// line as FILE:LINE: message, exit 2 when there are any (as `mkt serve monitor` refuses the file).
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { printJson } from '../../src/cli/output.js';
import { ConfigError, loadMonitorConfig } from '../../src/config/monitor.js';

export interface CheckConfigOptions {
  factory: Factory;
  file: string;
  json?: boolean;
}

export async function checkConfigRun(opts: CheckConfigOptions): Promise<void> {
  const { io } = opts.factory;
  try {
    const cfg = loadMonitorConfig(opts.file);
    if (opts.json) printJson(io, { ok: true, file: opts.file, instance: cfg.name, targets: cfg.targets.map((t) => t.name), problems: [] });
    else io.stdout.write(`${opts.file}: ok (${cfg.targets.length} target${cfg.targets.length === 1 ? '' : 's'}: ${cfg.targets.map((t) => t.name).join(', ') || 'none'})\n`);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    if (opts.json) printJson(io, { ok: false, file: opts.file, problems: err.problems });
    else for (const p of err.problems) io.stderr.write(p + '\n');
    throw new UsageError(`${opts.file}: ${err.problems.length} problem${err.problems.length === 1 ? '' : 's'}`);
  }
}
