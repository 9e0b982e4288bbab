// Parse-level tests of `mkt completion` (gh's runF): the shell and the whole program reach
// CompletionOptions; a missing shell, or one outside commander's choices, is a usage error (exit 2).
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import type { completionRun } from '../../../commands/completion/run.js';
import { leafPaths, parseSuite } from '../../helpers/parse-cli.js';

const cli = parseSuite('completion');

describe('mkt completion: parsing', () => {
  it('<shell>, and the program root (completion prints the whole tree)', async () => {
    const p = await cli.verb<typeof completionRun>('completion', ['zsh'], { shell: 'zsh', program: expect.any(Command) as Command });
    const program = p.opts!.program as Command;
    expect(program.name()).toBe('mkt');
    expect(program.commands.map((c) => c.name())).toContain('tickets');
    await cli.usage(['completion'], /missing required argument 'shell'/);
    await cli.usage(['completion', 'tcsh'], /'tcsh' is invalid.*Allowed choices are bash, zsh, fish\./);
    await cli.usage(['completion', 'bash', '--json'], /unknown option '--json'/);
  });

  it('every verb of mkt completion has its parse case', () => {
    expect(cli.covered()).toEqual(leafPaths('completion'));
  });
});
