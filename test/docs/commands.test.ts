// Every `mkt ...` line the README and docs/ show is one the command tree accepts: the noun and
// verb exist, each flag is one of theirs, required arguments are there (parse-level, gh's runF:
// no verb runs). A renamed flag or a doc that invents one fails here, not in a reader's shell.
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { run } from '../../commands/root/run.js';
import { fakeIO } from '../helpers/fake-io.js';

const root = join(import.meta.dirname, '../..');

const documents = [
  join(root, 'README.md'),
  join(root, 'CONTRIBUTING.md'),
  ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(root, 'docs', f)),
].filter((f) => existsSync(f));

/** The lines of the shell blocks of a Markdown text, heredoc bodies left out. */
function shellLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let inBlock = false;
  // Any fence opens a block and the next one closes it: the closing fence of a ```yaml block
  // must not open a shell block that runs on into the prose after it.
  let inFence = false;
  let heredoc: string | null = null;
  text.split('\n').forEach((l, i) => {
    if (/^```/.test(l)) {
      inBlock = !inFence && /^```(sh|bash|shell)?\s*$/.test(l);
      inFence = !inFence;
      return;
    }
    if (!inBlock) return;
    if (heredoc !== null) {
      if (l.trim() === heredoc) heredoc = null;
      return;
    }
    const h = /<<-?\s*'?"?(\w+)/.exec(l);
    if (h) heredoc = h[1]!;
    out.push({ line: i + 1, text: l });
  });
  return out;
}

/**
 * Shell words of one line, split into simple commands at `|`, `&&`, `||` and `;`; quotes are
 * honoured, a `$VAR` or `$(...)` becomes the placeholder `X`, and a comment ends the line.
 */
function commands(line: string): string[][] {
  const cmds: string[][] = [[]];
  let word: string | null = null;
  const end = (): void => {
    if (word !== null) cmds[cmds.length - 1]!.push(word);
    word = null;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const j = line.indexOf("'", i + 1);
      word = (word ?? '') + line.slice(i + 1, j < 0 ? line.length : j);
      i = j < 0 ? line.length : j;
    } else if (c === '"') {
      let j = i + 1;
      let s = '';
      while (j < line.length && line[j] !== '"') {
        if (line[j] === '$') {
          const sub = substitution(line, j);
          s += 'X';
          j = sub;
          continue;
        }
        s += line[j];
        j++;
      }
      word = (word ?? '') + s;
      i = j;
    } else if (c === '$') {
      word = (word ?? '') + 'X';
      i = substitution(line, i) - 1;
    } else if (c === '#' && word === null) {
      break;
    } else if (c === ' ' || c === '\t') {
      end();
    } else if (c === '|' || c === ';' || (c === '&' && line[i + 1] === '&')) {
      end();
      if (line[i + 1] === c) i++;
      cmds.push([]);
    } else {
      word = (word ?? '') + c;
    }
  }
  end();
  return cmds.filter((c) => c.length > 0);
}

/** The index just past the `$NAME`, `${...}` or `$(...)` starting at `i`. */
function substitution(line: string, i: number): number {
  if (line[i + 1] === '(' || line[i + 1] === '{') {
    const [open, close] = line[i + 1] === '(' ? ['(', ')'] : ['{', '}'];
    let depth = 0;
    for (let j = i + 1; j < line.length; j++) {
      if (line[j] === open) depth++;
      else if (line[j] === close && --depth === 0) return j + 1;
    }
    return line.length;
  }
  let j = i + 1;
  while (j < line.length && /\w/.test(line[j]!)) j++;
  return j;
}

/** The argv of an `mkt` command: env assignments before it, redirections after it left out. */
function mktArgv(words: string[]): string[] | undefined {
  let k = 0;
  while (k < words.length && /^[A-Za-z_]\w*=/.test(words[k]!)) k++;
  if (!['mkt', './bin/mkt', 'bin/mkt'].includes(words[k] ?? '')) return undefined;
  const argv: string[] = [];
  for (const w of words.slice(k + 1)) {
    if (/^\d?[<>]/.test(w) || w === '&') break;
    argv.push(w);
  }
  return argv;
}

interface Shown { where: string; argv: string[] }

const shown: Shown[] = documents.flatMap((file) =>
  shellLines(readFileSync(file, 'utf8')).flatMap(({ line, text }) =>
    commands(text)
      .map(mktArgv)
      .filter((a): a is string[] => a !== undefined)
      // `a|b|c` in a synopsis is a choice of words, not a pipe; synopses are for reading only.
      .filter((argv) => !argv.some((w) => /[[\]]/.test(w)))
      .map((argv) => ({ where: `${relative(root, file)}:${line}`, argv })),
  ),
);

describe('the commands the docs show', () => {
  it('the shell blocks are read: the docs show many commands', () => {
    expect(shown.length).toBeGreaterThan(80);
  });

  it('the README shows at least one command of every service', () => {
    const nouns = new Set(shown.filter((s) => s.where.startsWith('README.md')).map((s) => s.argv[0]));
    for (const noun of ['serve', 'admin', 'auth', 'notes', 'license', 'sync', 'monitor', 'tickets']) expect(nouns, noun).toContain(noun);
  });

  it('each one parses: its verb exists, its flags are its own, its arguments are there', async () => {
    const refused: string[] = [];
    for (const { where, argv } of shown) {
      const io = fakeIO();
      let reached: string[] | undefined;
      const code = await run(argv, io, (path) => {
        reached = path;
      });
      const help = argv.includes('--help') || argv.includes('-h') || argv.length === 0;
      if (code !== 0 || (!help && reached === undefined)) refused.push(`${where}: mkt ${argv.join(' ')} -> exit ${code} ${io.err().trim()}`);
    }
    expect(refused).toEqual([]);
  });
});
