// completionRun: renders the script for the shell asked for (commander has checked its name).
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { renderCompletion, type Shell } from '../../src/cli/completion.js';

export interface CompletionOptions {
  factory: Factory;
  shell: Shell;
  program: Command;
}

export async function completionRun(opts: CompletionOptions): Promise<void> {
  opts.factory.io.stdout.write(renderCompletion(opts.program, opts.shell));
}
