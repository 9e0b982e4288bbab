// Parse-level tests over the whole command tree (STYLE "tests": gh's runF): every leaf command
// hands each of its flags to its verb under the flag's name, refuses unknown flags, missing
// arguments, missing required options and values outside its choices with a usage error (exit
// 2), and every noun has its own parse cases in test/commands/<noun>/<noun>.parse.test.ts.
import type { Command, Option } from 'commander';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFactory } from '../../../src/cli/factory.js';
import { NOUNS } from '../../../commands/root/nouns.js';
import { buildProgram } from '../../../commands/root/program.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { parse } from '../../helpers/parse-cli.js';

interface Leaf {
  path: string[];
  cmd: Command;
}

function leaves(): Leaf[] {
  const out: Leaf[] = [];
  const walk = (cmd: Command, path: string[]): void => {
    if (cmd.commands.length === 0 && path.length > 0) out.push({ path, cmd });
    for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
  };
  walk(buildProgram(createFactory(fakeIO())), []);
  return out;
}

/** Values for the leaf's arguments: one per argument, so every required one is there (one of its choices, if it has them). */
function args(cmd: Command, requiredOnly = false): string[] {
  return cmd.registeredArguments.filter((a) => a.required || !requiredOnly).map((a, i) => (a.argChoices ? a.argChoices[a.argChoices.length - 1]! : `arg${i}`));
}

/** Flags whose parser checks a syntax (it would refuse `v-name`), by verb and flag: a value it accepts. */
const SAMPLES: Record<string, string> = {
  'notes search --field': 'Reviewed-by~alice',
  'notes search --since': '2026-11-01',
  'notes search --until': '2026-11-29T13:00:00Z',
  'notes search --count-by': 'field:Code-Review',
};

/** A value the option accepts, the argv that gives it, and what the verb should then receive. */
function given(o: Option, path: string[] = []): { argv: string[]; value: unknown } {
  if (!o.required && !o.optional) return { argv: [o.long!], value: true };
  const raw = o.argChoices ? o.argChoices[o.argChoices.length - 1]! : (SAMPLES[`${path.join(' ')} ${o.long}`] ?? `v-${o.attributeName()}`);
  // A parser without choices (a repeatable flag's collect(), a syntax check): what commander
  // hands the verb is the parser's answer for one occurrence, from the option's default.
  return { argv: [o.long!, raw], value: o.parseArg && !o.argChoices ? o.parseArg(raw, o.defaultValue) : raw };
}

/** The options `o` excludes (`.conflicts(...)`): commander keeps them at run time, its types do not declare them. */
const conflicts = (o: Option): string[] => (o as Option & { conflictsWith?: string[] }).conflictsWith ?? [];

const all = leaves();
const mandatory = (cmd: Command): string[] => cmd.options.filter((o) => o.mandatory).flatMap((o) => given(o).argv);

describe('parse: every leaf command of the tree', () => {
  it('the tree has the verbs this suite walks', () => {
    expect(all.length).toBeGreaterThan(60);
    for (const noun of NOUNS) expect(all.some((l) => l.path[0] === noun.name), noun.name).toBe(true);
  });

  it('every noun has its own parse cases', () => {
    for (const noun of NOUNS) {
      const file = join(import.meta.dirname, '..', noun.name, `${noun.name}.parse.test.ts`);
      expect(existsSync(file), file).toBe(true);
    }
  });

  it('each flag reaches the verb under its own name with its value', async () => {
    for (const { path, cmd } of all) {
      // Required arguments only: an optional one may exclude a flag (`notes search` words and --literal).
      const argv = [...path, ...args(cmd, true)];
      const expected: Record<string, unknown> = {};
      for (const o of cmd.options) {
        // Flags that exclude each other (`tickets update --tag` and `--add-tag`): the first one given stands.
        if (cmd.options.some((x) => x !== o && x.attributeName() in expected && (conflicts(x).includes(o.attributeName()) || conflicts(o).includes(x.attributeName())))) continue;
        const g = given(o, path);
        argv.push(...g.argv);
        expected[o.attributeName()] = g.value;
      }
      const p = await parse(argv);
      expect(p.err, argv.join(' ')).toBe('');
      expect(p.code, argv.join(' ')).toBe(0);
      expect(p.path, argv.join(' ')).toEqual(path);
      expect(p.opts, argv.join(' ')).toMatchObject(expected);
    }
  });

  it('an unknown flag is a usage error and runs nothing', async () => {
    for (const { path, cmd } of all) {
      const argv = [...path, ...args(cmd), ...mandatory(cmd), '--frobnicate'];
      const p = await parse(argv);
      expect(p.code, argv.join(' ')).toBe(2);
      expect(p.path, argv.join(' ')).toBeUndefined();
      expect(p.err, argv.join(' ')).toMatch(/^mkt: unknown option '--frobnicate'/);
    }
  });

  it('a missing required argument is a usage error and runs nothing', async () => {
    let seen = 0;
    for (const { path, cmd } of all) {
      if (!cmd.registeredArguments.some((a) => a.required)) continue;
      seen++;
      const p = await parse([...path, ...mandatory(cmd)]);
      expect(p.code, path.join(' ')).toBe(2);
      expect(p.path, path.join(' ')).toBeUndefined();
      expect(p.err, path.join(' ')).toMatch(/^mkt: missing required argument '/);
    }
    expect(seen).toBeGreaterThan(20);
  });

  it('a missing required option is a usage error and runs nothing', async () => {
    let seen = 0;
    for (const { path, cmd } of all) {
      for (const o of cmd.options.filter((x) => x.mandatory)) {
        seen++;
        const others = cmd.options.filter((x) => x.mandatory && x !== o).flatMap((x) => given(x).argv);
        const p = await parse([...path, ...args(cmd), ...others]);
        expect(p.code, path.join(' ')).toBe(2);
        expect(p.path, path.join(' ')).toBeUndefined();
        expect(p.err, path.join(' ')).toContain(`mkt: required option '${o.flags}' not specified`);
      }
    }
    // `auth login --server` became optional (issue 30, item 2: the default URL), leaving five.
    expect(seen).toBeGreaterThanOrEqual(5);
  });

  it('a value outside a flag\'s choices is a usage error and runs nothing', async () => {
    let seen = 0;
    for (const { path, cmd } of all) {
      for (const o of cmd.options.filter((x) => x.argChoices)) {
        seen++;
        const p = await parse([...path, ...args(cmd), ...mandatory(cmd), o.long!, 'frobnicate']);
        expect(p.code, path.join(' ')).toBe(2);
        expect(p.path, path.join(' ')).toBeUndefined();
        expect(p.err, path.join(' ')).toContain(`mkt: option '${o.flags}' argument 'frobnicate' is invalid. Allowed choices are ${o.argChoices!.join(', ')}.`);
      }
    }
    expect(seen).toBeGreaterThanOrEqual(3);
  });
});
