// Shell completion as a user meets it: the script `mkt completion <shell>` prints, loaded into real
// bash, zsh (its completion system, in a pseudo-terminal) and fish, asked what <TAB> offers. Values
// come from what the parser checks (commander's choices), file names where a value is a path.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command, Option } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../../commands/root/program.js';
import { run } from '../../../commands/root/run.js';
import { createFactory } from '../../../src/cli/factory.js';
import { SERVICES } from '../../../src/config/services.js';
import { STATUSES } from '../../../src/schemas/ticket-values.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir('mkt-completion-');
/** The directory the shells complete in: two files and a directory. */
const cwd = join(tmp.path, 'work');
const FILES = ['backups', 'notes.txt', 'photo.jpg'];
const DIRS = ['backups'];
const scripts = { bash: join(tmp.path, 'mkt.bash'), zsh: join(tmp.path, 'zfunc', '_mkt'), fish: join(tmp.path, 'mkt.fish') };

function need(tool: string): void {
  if (spawnSync(tool, ['--version']).error) throw new Error(`${tool} is missing: run scripts/ensure-test-tools.sh (npm test does; Debian package ${tool})`);
}

beforeAll(async () => {
  mkdirSync(join(cwd, 'backups'), { recursive: true });
  writeFileSync(join(cwd, 'notes.txt'), 'n');
  writeFileSync(join(cwd, 'photo.jpg'), 'p');
  mkdirSync(join(tmp.path, 'zfunc'));
  for (const shell of ['bash', 'zsh', 'fish'] as const) {
    const io = fakeIO();
    expect(await run(['completion', shell], io)).toBe(0);
    writeFileSync(scripts[shell], io.out());
  }
});
afterAll(() => tmp.remove());

const sorted = (xs: string[]): string[] => [...new Set(xs)].sort();

/** bash: COMP_WORDS as bash splits the line (give `=` as its own word, as COMP_WORDBREAKS does). */
function bash(words: string[]): string[] {
  const script = `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _mkt; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const out = execFileSync('bash', ['--norc', '--noprofile', '-c', script, 'bash', scripts.bash, ...words], { cwd, encoding: 'utf8' });
  return sorted(out.split('\n').filter(Boolean));
}

/** fish: `complete -C LINE`, fish's own answer for the line typed so far; descriptions dropped. */
function fish(line: string): string[] {
  need('fish');
  const out = execFileSync('fish', ['--no-config', '-c', 'source $argv[1]; complete -C $argv[2]', scripts.fish, line], { cwd, encoding: 'utf8' });
  return sorted(out.split('\n').filter(Boolean).map((l) => l.split('\t')[0]));
}

// An interactive zsh in a pseudo-terminal with compinit and the script on $fpath, as installed;
// a compadd wrapper records each match the completion system keeps, and a widget that completes
// and then prints a mark tells when the <TAB> is done.
const ZSH_DRIVER = `zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT='' RPROMPT=''; fpath=($3 \\$fpath); autoload -U compinit; compinit -u -D"
zpty -w z "compadd() { local -a m; builtin compadd -O m \\"\\$@\\"; print -rl -- \\"\\\${m[@]}\\" >> $2; builtin compadd \\"\\$@\\"; }"
zpty -w z "complete-then-mark() { zle complete-word; print -n 'END''MARK' > /dev/tty; }; zle -N complete-then-mark; bindkey '^T' complete-then-mark"
zpty -w z "cd $4"
zpty -n -w z "$1"$'\\C-t'
zpty -r z line '*ENDMARK*'
zpty -d z
`;
let zshCalls = 0;
function zsh(line: string): string[] {
  need('zsh');
  const driver = join(tmp.path, 'zsh-driver.zsh');
  writeFileSync(driver, ZSH_DRIVER);
  const out = join(tmp.path, `zsh-matches-${zshCalls++}`);
  writeFileSync(out, '');
  // The timeout only ends a hung shell; what is checked is the matches recorded.
  execFileSync('zsh', ['-f', driver, line, out, join(tmp.path, 'zfunc'), cwd], { env: { ...process.env, TERM: 'xterm' }, timeout: 30_000 });
  return sorted(execFileSync('cat', [out], { encoding: 'utf8' }).split('\n').filter(Boolean));
}

/** The three shells on one line: bash gets it split as bash splits it. */
function all(line: string): { bash: string[]; zsh: string[]; fish: string[] } {
  const words = line.split(' ').flatMap((w) => w.replace(/^(--[^=]+)=/, '$1\0=\0').split('\0'));
  return { bash: bash(words), zsh: zsh(line), fish: fish(line) };
}
const same = (xs: readonly string[]): { bash: string[]; zsh: string[]; fish: string[] } => ({ bash: sorted([...xs]), zsh: sorted([...xs]), fish: sorted([...xs]) });

describe('shell completion of arguments and flag values (issue 30, item 12)', () => {
  it('`mkt serve <TAB>` offers the services the argument accepts', () => {
    expect(all('mkt serve ')).toEqual(same([...SERVICES, 'all']));
  });

  it('`mkt tickets list --status <TAB>` offers the statuses the schema validates with, also after `--status=`', () => {
    expect(all('mkt tickets list --status ')).toEqual(same(STATUSES));
    expect(all('mkt tickets update 3f2a --status=o')).toEqual({ bash: ['on_hold', 'open'], zsh: ['on_hold', 'open'], fish: ['--status=on_hold', '--status=open'] });
  });

  it('`mkt sync blob get X -o <TAB>` offers the file names of the current directory', () => {
    const r = all('mkt sync blob get X -o ');
    expect(r.bash).toEqual(FILES);
    expect(r.zsh).toEqual(FILES);
    expect(r.fish).toEqual(['backups/', 'notes.txt', 'photo.jpg']);
    expect(all('mkt monitor check-config p').bash).toEqual(['photo.jpg']);
  });

  it('a directory value offers directories only, and a parent\'s flag completes below it (`mkt admin ... --data-dir`)', () => {
    const r = all('mkt admin key list app --data-dir ');
    expect(r.bash).toEqual(DIRS);
    expect(r.zsh).toEqual(DIRS);
    expect(r.fish).toEqual(['backups/']);
  });

  it('`mkt completion <TAB>` offers bash, zsh and fish', () => {
    expect(all('mkt completion ')).toEqual(same(['bash', 'fish', 'zsh']));
  });

  it('a flag after a positional still completes flags; the value of a flag is not taken for the positional', () => {
    expect(all('mkt serve tickets --da')).toEqual(same(['--data-dir', '--database-url']));
    expect(all('mkt serve --host 0.0.0.0 ')).toEqual(same([...SERVICES, 'all']));
    expect(all('mkt sync blob get -o out.bin ')).toEqual(same([]));
  });

  it('a free-text positional offers nothing: neither flags nor file names', () => {
    expect(all('mkt notes show ')).toEqual(same([]));
    expect(all('mkt tickets show ')).toEqual(same([]));
    expect(all('mkt tickets create "x" --assignee ')).toEqual(same([]));
  });

  it('subcommands still complete, each where it belongs (`sync key` is not `admin key`)', () => {
    expect(all('mkt sync key ')).toEqual(same(['cancel-rotation', 'init', 'rotate', 'unlock']));
    expect(bash(['mkt', 'admin', 'key', ''])).toEqual(['entitlements', 'events', 'issue', 'list', 'reinstate', 'revoke', 'suspend']);
    expect(bash(['mkt', 'tic'])).toEqual(['tickets']);
  });
});

describe('every enumerated value and path in the tree completes in bash (a new flag needs no edit here)', () => {
  const program = buildProgram(createFactory(fakeIO()));
  const commands: { path: string[]; cmd: Command }[] = [];
  const walk = (cmd: Command, path: string[]): void => {
    commands.push({ path, cmd });
    for (const c of cmd.commands) walk(c, [...path, c.name()]);
  };
  walk(program, ['mkt']);
  const placeholder = (o: Option): string | undefined => /[<[]([^>\]]+)[>\]]/.exec(o.flags)?.[1];

  it('each flag with choices offers exactly its choices', () => {
    let seen = 0;
    for (const { path, cmd } of commands) {
      for (const o of cmd.options.filter((x) => x.argChoices)) {
        seen++;
        expect(bash([...path, o.long!, '']), `${path.join(' ')} ${o.long}`).toEqual(sorted(o.argChoices!));
      }
    }
    expect(seen).toBeGreaterThanOrEqual(8);
  });

  it('each positional argument with choices offers them at its position', () => {
    let seen = 0;
    for (const { path, cmd } of commands) {
      cmd.registeredArguments.forEach((a, i) => {
        if (!a.argChoices) return;
        seen++;
        expect(bash([...path, ...Array<string>(i).fill('x'), '']), `${path.join(' ')} <${a.name()}>`).toEqual(sorted(a.argChoices));
      });
    }
    expect(seen).toBeGreaterThanOrEqual(4);
  });

  it('each flag whose placeholder names a file offers file names, <dir> directories', () => {
    let seen = 0;
    for (const { path, cmd } of commands) {
      for (const o of cmd.options) {
        const name = placeholder(o);
        if (name !== 'file' && name !== 'dir') continue;
        seen++;
        expect(bash([...path, o.long!, '']), `${path.join(' ')} ${o.long}`).toEqual(name === 'file' ? FILES : DIRS);
      }
    }
    expect(seen).toBeGreaterThanOrEqual(8);
  });

  it('each flag or argument whose help speaks of a file or directory completes one (its placeholder says so)', () => {
    const speaks = (d: string): 'file' | 'dir' | undefined => (/\bdirectory\b/.test(d) ? 'dir' : /\b(file|FILE)\b/.test(d) ? 'file' : undefined);
    let seen = 0;
    for (const { path, cmd } of commands) {
      for (const o of cmd.options) {
        const kind = o.required || o.optional ? speaks(o.description) : undefined;
        if (!kind) continue;
        seen++;
        expect(bash([...path, o.long!, '']), `${path.join(' ')} ${o.flags}: name its value <${kind}>`).toEqual(kind === 'file' ? FILES : DIRS);
      }
      cmd.registeredArguments.forEach((a, i) => {
        const kind = speaks(a.description);
        if (!kind) return;
        seen++;
        expect(bash([...path, ...Array<string>(i).fill('x'), '']), `${path.join(' ')} <${a.name()}>: name it <${kind}>`).toEqual(kind === 'file' ? FILES : DIRS);
      });
    }
    expect(seen).toBeGreaterThanOrEqual(8);
  });
});
