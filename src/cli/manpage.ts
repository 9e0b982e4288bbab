// Man pages generated from the commander tree: mkt(1) and one mkt-<noun>(1) per noun, with
// each verb's usage, options and the examples of its --help, so the pages cannot drift.
import type { Command } from 'commander';
import { VERSION } from '../version.js';

/**
 * Escapes text for roff: backslashes, a leading dot or quote that would start a request, and
 * non-ASCII characters (as `\[uXXXX]`, which groff renders in any output encoding).
 */
function esc(s: string): string {
  return s
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/[^ -~\n\t]/gu, (c) => `\\[u${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`)
    .split('\n')
    .map((l) => (/^[.']/.test(l) ? `\\&${l}` : l))
    .join('\n');
}

/** The full --help output of a command, after-help text (examples) included. */
export function helpText(cmd: Command): string {
  let out = '';
  const saved = (cmd as unknown as { _outputConfiguration: Record<string, unknown> })._outputConfiguration;
  cmd.configureOutput({ ...saved, writeOut: (s: string) => (out += s), getOutHelpWidth: () => 80 });
  try {
    cmd.outputHelp();
  } finally {
    cmd.configureOutput(saved);
  }
  return out;
}

function examples(cmd: Command): string[] {
  const text = helpText(cmd);
  const i = text.indexOf('\nExamples:\n');
  if (i < 0) return [];
  const lines = text.slice(i + '\nExamples:\n'.length).split('\n');
  const out: string[] = [];
  for (const l of lines) {
    if (l.trim() === '') break;
    out.push(l.trim().replace(/^\$ /, ''));
  }
  return out;
}

function visible(cmd: Command): Command[] {
  return cmd.commands.filter((c) => c.name() !== 'help' && !(c as unknown as { _hidden?: boolean })._hidden);
}

function fullName(cmd: Command): string {
  const parts: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) parts.unshift(c.name());
  return parts.join(' ');
}

function usage(cmd: Command): string {
  return `${fullName(cmd)} ${cmd.usage()}`;
}

/** The values the parser accepts (commander's choices), which help and completion list too. */
function choices(values: readonly string[] | undefined): string {
  return values ? ` (one of: ${values.join(', ')})` : '';
}

function optionsBlock(cmd: Command): string[] {
  const lines: string[] = [];
  for (const o of cmd.options) {
    lines.push('.TP', `.B ${esc(o.flags)}`);
    const def = o.defaultValue !== undefined && o.defaultValue !== false ? ` (default: ${String(o.defaultValue)})` : '';
    lines.push(esc(o.description + choices(o.argChoices) + def));
  }
  return lines;
}

function verbSection(cmd: Command, depth: number): string[] {
  const lines: string[] = [depth === 0 ? `.SS ${esc(fullName(cmd))}` : `.SS ${esc(fullName(cmd))}`];
  lines.push('.PP', `.B ${esc(usage(cmd))}`, '.PP', esc(cmd.description()));
  for (const a of cmd.registeredArguments) if (a.description) lines.push('.TP', `.I ${esc(a.name())}`, esc(a.description + choices(a.argChoices)));
  lines.push(...optionsBlock(cmd));
  const ex = examples(cmd);
  if (ex.length) {
    lines.push('.PP', 'Examples:', '.PP', '.RS', '.nf');
    for (const e of ex) lines.push(esc(`$ ${e}`));
    lines.push('.fi', '.RE');
  }
  for (const sub of visible(cmd)) lines.push(...verbSection(sub, depth + 1));
  return lines;
}

function header(name: string, summary: string): string[] {
  return [
    `.\\" Generated from the mkt command tree by scripts/gen-docs.ts; do not edit.`,
    `.TH ${name.toUpperCase()} 1 "" "mkt ${VERSION}" "mkt manual"`,
    '.SH NAME',
    `${esc(name)} \\- ${esc(summary)}`,
  ];
}

const ROOT_SECTIONS = `.SH EXIT STATUS
.TP
.B 0
success
.TP
.B 1
the answer is negative (invalid key, check failed, not found)
.TP
.B 2
usage error
.TP
.B 3
cannot reach the server, or the server failed
.TP
.B 4
authentication or authorization failure
.SH ENVIRONMENT
.TP
.B MKT_<SERVICE>_URL
server of a service client (MARKETPLACE, MONITOR, TICKETS), unless \\-\\-server is given
.TP
.B MKT_<SERVICE>_TOKEN
token of a service client, instead of the saved one
.TP
.B MKT_DATA_DIR
data directory of the servers and of mkt admin (default ./.mkt\\-data)
.TP
.B MKT_CONFIG
configuration file of a server
.TP
.B MKT_LOG_LEVEL
server log level (trace, debug, info, warn, error)
.TP
.B MKT_CREDENTIAL_STORE
set to file to keep tokens in the 0600 file even when an OS keychain answers
.TP
.B MKT_DEBUG
set to 1 to print stack traces with errors
.TP
.B NO_COLOR
disables colour in tables
.SH FILES
.TP
.I $XDG_CONFIG_HOME/mkt/config.json
saved server profiles
.TP
.I $XDG_CONFIG_HOME/mkt/credentials.json
tokens (mode 0600) when no OS keychain answers
.TP
.I <data\\-dir>/<service>.db
SQLite database of each server
`;

/** Renders every page: file name -> roff text. */
export function renderManPages(program: Command): Map<string, string> {
  const pages = new Map<string, string>();
  const nouns = visible(program);
  const root = [
    ...header('mkt', program.description()),
    '.SH SYNOPSIS',
    '.B mkt',
    '.I command',
    '[\\fIoptions\\fR]',
    '.SH DESCRIPTION',
    esc(program.description()),
    'Data goes to standard output; progress, warnings and errors go to standard error.',
    'Every command that prints data accepts \\-\\-json; tables are printed on a terminal and tab\\-separated lines in pipes.',
    '.SH COMMANDS',
  ];
  for (const n of nouns) root.push('.TP', `.B mkt ${esc(n.name())}`, `${esc(n.description())}; see \\fBmkt\\-${esc(n.name())}\\fR(1).`);
  root.push('.SH OPTIONS', ...optionsBlock(program));
  root.push(ROOT_SECTIONS.trimEnd());
  root.push('.SH SEE ALSO', nouns.map((n) => `.BR mkt\\-${esc(n.name())} (1)`).join(',\n'));
  pages.set('mkt.1', root.join('\n') + '\n');
  for (const n of nouns) {
    const lines = [...header(`mkt-${n.name()}`, n.description()), '.SH SYNOPSIS', `.B ${esc(usage(n))}`, '.SH DESCRIPTION', esc(n.description()) + '.'];
    if (n.options.length) lines.push('.SH OPTIONS', ...optionsBlock(n));
    const subs = visible(n);
    if (subs.length) {
      lines.push('.SH COMMANDS');
      for (const s of subs) lines.push(...verbSection(s, 0));
    } else {
      const ex = examples(n);
      if (ex.length) {
        lines.push('.SH EXAMPLES', '.RS', '.nf');
        for (const e of ex) lines.push(esc(`$ ${e}`));
        lines.push('.fi', '.RE');
      }
    }
    lines.push('.SH SEE ALSO', '.BR mkt (1)');
    pages.set(`mkt-${n.name()}.1`, lines.join('\n') + '\n');
  }
  return pages;
}
