// `mkt completion bash|zsh|fish`: prints a completion script generated from the command tree.
import { Argument, type Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { SHELLS, type Shell } from '../../src/cli/shells.js';
import { runVerb, type ParsedVerb } from '../../src/cli/flags.js';

export function register(program: Command, f: Factory, runF?: ParsedVerb): void {
  program
    .command('completion')
    .description('print the shell completion script (commands, flags, and the values of arguments and flags)')
    .addArgument(new Argument('<shell>', 'the shell to complete in').choices(SHELLS))
    .addHelpText(
      'after',
      `
Examples:
  $ mkt completion bash > /etc/bash_completion.d/mkt
  $ mkt completion zsh > "\${fpath[1]}/_mkt"
  $ mkt completion fish > ~/.config/fish/completions/mkt.fish`,
    )
    .action(async (shell: Shell) => {
      await runVerb(runF, { factory: f, shell, program }, async () => (await import('./run.js')).completionRun);
    });
}
