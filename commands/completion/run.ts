// completionRun: renders the script for the shell asked for.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { renderCompletion, type Shell } from '../../src/cli/completion.js';

export interface CompletionOptions {
  factory: Factory;
  shell: string;
  program: Command;
}

export async function completionRun(opts: CompletionOptions): Promise<void> {
  if (!['bash', 'zsh', 'fish'].includes(opts.shell)) throw new UsageError(`unknown shell "${opts.shell}"; choose bash, zsh or fish`);
  opts.factory.io.stdout.write(renderCompletion(opts.program, opts.shell as Shell));
}
