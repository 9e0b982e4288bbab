// Parse-level runs of the CLI (gh's runF): the real program, usage errors and exit codes, but each
// action hands its options to a recorder instead of loading its verb, so no server is needed.
import type { Command } from 'commander';
import { expect } from 'vitest';
import { createFactory } from '../../src/cli/factory.js';
import { buildProgram } from '../../commands/root/program.js';
import { run } from '../../commands/root/run.js';
import { fakeIO } from './fake-io.js';

export interface Parsed {
  code: number;
  /** The command whose action ran (`['tickets', 'list']`); undefined when none did. */
  path?: string[];
  /** What the verb would have been given. */
  opts?: Record<string, unknown>;
  out: string;
  err: string;
}

/** `mkt ...argv`, stopped after parsing. */
export async function parse(argv: string[]): Promise<Parsed> {
  const io = fakeIO();
  let path: string[] | undefined;
  let opts: Record<string, unknown> | undefined;
  const code = await run(argv, io, (p, o) => {
    path = p;
    opts = o as Record<string, unknown>;
  });
  return { code, path, opts, out: io.out(), err: io.err() };
}

/** The flags and arguments a verb's options carry: everything but the injected factory. */
// `never` makes every verb's function assignable, whatever its options are.
export type VerbFlags<V extends (opts: never) => unknown> = Omit<Parameters<V>[0], 'factory'>;

/** Every leaf command (one that runs a verb) under `noun`, as space-joined paths. */
export function leafPaths(noun: string): string[] {
  const out: string[] = [];
  const walk = (cmd: Command, path: string[]): void => {
    if (cmd.commands.length === 0) out.push(path.join(' '));
    for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
  };
  const program = buildProgram(createFactory(fakeIO()));
  const top = program.commands.find((c) => c.name() === noun);
  if (!top) throw new Error(`no noun ${noun}`);
  walk(top, [noun]);
  return out.sort();
}

/** One noun's parse cases: records which verbs they reached, so a test can ask for all of them. */
export function parseSuite(noun: string): {
  verb<V extends (opts: never) => unknown>(path: string, args: string[], flags: VerbFlags<V>): Promise<Parsed>;
  usage(argv: string[], message: RegExp): Promise<void>;
  covered(): string[];
} {
  const reached = new Set<string>();
  return {
    /**
     * `mkt PATH ...args` runs the verb at PATH with exactly `flags` (compared strictly: a flag
     * under another name, or an extra key, fails) and the Factory.
     */
    async verb(path, args, flags) {
      const argv = [...path.split(' '), ...args];
      const p = await parse(argv);
      expect(p.err, argv.join(' ')).toBe('');
      expect(p.code, argv.join(' ')).toBe(0);
      expect(p.path?.join(' '), argv.join(' ')).toBe(path);
      const { factory, ...rest } = p.opts ?? {};
      expect(factory, argv.join(' ')).toHaveProperty('io');
      expect(rest, argv.join(' ')).toStrictEqual(flags);
      reached.add(path);
      return p;
    },
    /** A usage error: exit 2, commander's one line on stderr, and no verb runs. */
    async usage(argv, message) {
      const p = await parse(argv);
      expect(p.code, argv.join(' ')).toBe(2);
      expect(p.path, argv.join(' ')).toBeUndefined();
      expect(p.err, argv.join(' ')).toMatch(message);
      expect(p.err).toContain('(run with --help for usage)');
      expect(p.out).toBe('');
      expect(argv[0]).toBe(noun);
    },
    covered: () => [...reached].sort(),
  };
}
