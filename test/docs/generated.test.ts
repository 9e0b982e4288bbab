// completions/ and man/ are the output of the command tree: a stale file fails here, bash
// really completes from the script, and every page renders without groff warnings.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFactory } from '../../src/cli/factory.js';
import { buildProgram } from '../../commands/root/program.js';
import { renderCompletion } from '../../src/cli/completion.js';
import { helpText, renderManPages } from '../../src/cli/manpage.js';
import { fakeIO } from '../helpers/fake-io.js';

const root = join(import.meta.dirname, '../..');
const program = buildProgram(createFactory(fakeIO()));
const regen = 'run `npm run gen` to regenerate';

describe('completions', () => {
  for (const [shell, file] of [['bash', 'mkt.bash'], ['zsh', '_mkt'], ['fish', 'mkt.fish']] as const) {
    it(`completions/${file} is the current output of \`mkt completion ${shell}\``, () => {
      expect(readFileSync(join(root, 'completions', file), 'utf8'), regen).toBe(renderCompletion(program, shell));
    });
  }

  function complete(words: string[]): string[] {
    const script = `source ${JSON.stringify(join(root, 'completions', 'mkt.bash'))}
COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(' ')}); COMP_CWORD=${words.length - 1}
_mkt; printf '%s\\n' "\${COMPREPLY[@]}"`;
    return execFileSync('bash', ['--norc', '--noprofile', '-c', script], { encoding: 'utf8' }).split('\n').filter(Boolean);
  }

  it('bash completes `mkt tic` to `mkt tickets`', () => {
    expect(complete(['mkt', 'tic'])).toEqual(['tickets']);
  });

  it('bash completes verbs and flags below a noun', () => {
    expect(complete(['mkt', 'auth', 'lo'])).toEqual(['login', 'logout']);
    expect(complete(['mkt', 'serve', 'tickets', '--da'])).toEqual(['--data-dir', '--database-url']);
    expect(complete(['mkt', 'serve', 'tickets', '--data-'])).toEqual(['--data-dir']);
  });
});

describe('man pages', () => {
  const pages = renderManPages(program);
  const files = readdirSync(join(root, 'man')).filter((f) => f.endsWith('.1'));

  it('man/ holds exactly the generated pages, each current', () => {
    expect(files.sort(), regen).toEqual([...pages.keys()].sort());
    for (const [name, text] of pages) expect(readFileSync(join(root, 'man', name), 'utf8'), `${name}: ${regen}`).toBe(text);
  });

  it('the required pages exist', () => {
    for (const p of ['mkt.1', 'mkt-serve.1', 'mkt-tickets.1', 'mkt-auth.1']) expect(files).toContain(p);
  });

  it('every page renders without warnings under groff -man -ww', () => {
    for (const f of files) {
      const out = execFileSync('groff', ['-man', '-ww', '-Tutf8', '-z', join(root, 'man', f)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      expect(out, f).toBe('');
      const warn = execFileSync('sh', ['-c', 'groff -man -ww -Tutf8 -z "$1" 2>&1', 'sh', join(root, 'man', f)], { encoding: 'utf8' });
      expect(warn, f).toBe('');
    }
  });

  it('every command of --help is in its noun page, with its flags', () => {
    for (const noun of program.commands.filter((c) => c.name() !== 'help')) {
      const page = pages.get(`mkt-${noun.name()}.1`)!;
      const rendered = page.replace(/\\-/g, '-');
      for (const verb of noun.commands) {
        expect(rendered, `mkt ${noun.name()} ${verb.name()}`).toContain(`mkt ${noun.name()} ${verb.name()}`);
        for (const o of verb.options) expect(rendered).toContain(o.long!);
        expect(helpText(verb)).toContain('Examples:');
      }
    }
  });
});
