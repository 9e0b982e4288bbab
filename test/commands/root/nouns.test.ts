// A run builds only the nouns its command line can reach (commands/root/nouns.ts), and that must not
// change a byte of what mkt prints (STYLE: help texts, exit codes): for every command of the
// tree, `--help`, an unknown verb, an unknown option and a bare noun print the same from the
// partial tree as from the whole one.
import { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { createFactory } from '../../../src/cli/factory.js';
import { NOUNS, nounsFor } from '../../../commands/root/nouns.js';
import { buildProgram } from '../../../commands/root/program.js';
import { run } from '../../../commands/root/run.js';
import { fakeIO } from '../../helpers/fake-io.js';

/** What commander prints and how it ends, for the tree built for `argv` or for the whole tree. */
async function parse(argv: string[], tree: 'partial' | 'whole'): Promise<{ out: string; err: string; end: string }> {
  const io = fakeIO();
  const program = buildProgram(createFactory(io), tree === 'partial' ? argv : undefined);
  let end = 'returned';
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    end = err instanceof CommanderError ? `${err.code} ${err.exitCode}` : `threw ${(err as Error).message}`;
  }
  return { out: io.out(), err: io.err(), end };
}

/** Every command path of the whole tree: [noun], [noun, verb], [noun, group, verb], ... */
function commandPaths(): string[][] {
  const paths: string[][] = [];
  const walk = (cmd: Command, path: string[]): void => {
    for (const sub of cmd.commands) {
      paths.push([...path, sub.name()]);
      walk(sub, [...path, sub.name()]);
    }
  };
  walk(buildProgram(createFactory(fakeIO())), []);
  return paths;
}

describe('nouns: the tree a command line needs', () => {
  it('each noun registers exactly the one top-level command it is listed under', () => {
    for (const noun of NOUNS) {
      const program = new Command('mkt');
      noun.register(program, createFactory(fakeIO()));
      expect(program.commands.map((c) => c.name())).toEqual([noun.name]);
    }
    expect(new Set(NOUNS.map((n) => n.name)).size).toBe(NOUNS.length);
  });

  it('a standalone noun builds alone, --version builds none, anything else the whole tree', () => {
    expect(nounsFor(['tickets', 'list']).map((n) => n.name)).toEqual(['tickets']);
    expect(nounsFor(['license', 'check', '--json']).map((n) => n.name)).toEqual(['license']);
    expect(nounsFor(['--version'])).toEqual([]);
    expect(nounsFor(['-V'])).toEqual([]);
    for (const argv of [[], ['--help'], ['help', 'tickets'], ['tikets'], ['completion', 'bash'], ['--json', 'tickets']]) {
      expect(nounsFor(argv)).toBe(NOUNS);
    }
    expect(nounsFor(undefined)).toBe(NOUNS);
  });

  it('every command prints the same help from the partial tree as from the whole one', async () => {
    const paths = commandPaths();
    expect(paths.length).toBeGreaterThan(NOUNS.length * 2);
    for (const path of paths) {
      const argv = [...path, '--help'];
      const whole = await parse(argv, 'whole');
      expect(whole.out, argv.join(' ')).toMatch(/^Usage: mkt /);
      expect(await parse(argv, 'partial'), argv.join(' ')).toEqual(whole);
    }
  });

  it('usage errors and bare nouns end the same way too', async () => {
    const cases = NOUNS.flatMap((n) => [[n.name, 'frobnicate'], [n.name, '--frobnicate'], [n.name]]);
    cases.push(['--version'], ['-V'], ['-V', 'tickets'], ['--version', 'nope'], ['--help'], ['tikets', 'list'], ['help', 'license']);
    for (const argv of cases) {
      expect(await parse(argv, 'partial'), argv.join(' ')).toEqual(await parse(argv, 'whole'));
    }
  });

  it('completion still prints the whole tree, since it builds it', async () => {
    const io = fakeIO();
    expect(await run(['completion', 'bash'], io)).toBe(0);
    for (const noun of NOUNS) expect(io.out()).toContain(noun.name);
  });
});
