// Shell completion scripts generated from the commander tree (bash, zsh, fish): subcommands, flags,
// and the values of positional arguments and flags, read from what the parser itself checks.
import type { Argument, Command, Option } from 'commander';

/** The shells `mkt completion` writes for; its argument's choices. */
import type { Shell } from './shells.js';

export { SHELLS, type Shell } from './shells.js';

/**
 * What a value completes to. `words`: the parser's own choices (Option/Argument.argChoices);
 * `file`/`dir`: a value whose placeholder names a path (`<file>`, `<path>`, `<dir>`); `text`:
 * anything else, which offers nothing rather than something wrong.
 */
export type ValueKind = { kind: 'words'; words: readonly string[] } | { kind: 'file' } | { kind: 'dir' } | { kind: 'text' };

interface Flag {
  names: string[];
  description: string;
  /** Undefined for a flag that takes no value. */
  value?: ValueKind;
}

interface Node {
  path: string[];
  subcommands: { name: string; description: string }[];
  /** The command's own flags. */
  flags: Flag[];
  /** Flags of its ancestors below the root: commander recognises a parent's option anywhere after it. */
  inherited: Flag[];
  args: ValueKind[];
  /** The last argument takes every word from its position on. */
  variadic: boolean;
}

// Placeholder names that stand for a path; a registration names its value accordingly.
const FILE_NAMES = new Set(['file', 'path']);
const DIR_NAMES = new Set(['dir', 'directory']);

function kindOf(name: string | undefined, choices: readonly string[] | undefined): ValueKind {
  if (choices) {
    for (const c of choices) if (!/^[\w.:@+/-]+$/.test(c)) throw new Error(`completion: choice ${JSON.stringify(c)} needs quoting, which the scripts do not do`);
    return { kind: 'words', words: choices };
  }
  if (name && FILE_NAMES.has(name)) return { kind: 'file' };
  if (name && DIR_NAMES.has(name)) return { kind: 'dir' };
  return { kind: 'text' };
}

/** How an option's value completes: from its choices, else from its placeholder (`<file>`). */
export function optionValue(o: Option): ValueKind | undefined {
  if (!o.required && !o.optional) return undefined;
  const placeholder = /[<[]([^>\]]+?)(?:\.\.\.)?[>\]]/.exec(o.flags)?.[1];
  return kindOf(placeholder, o.argChoices);
}

/** How a positional argument completes. */
export function argumentValue(a: Argument): ValueKind {
  return kindOf(a.name(), a.argChoices);
}

function flagsOf(cmd: Command): Flag[] {
  return cmd.options
    .filter((o) => !o.hidden)
    .map((o) => ({ names: [o.long, o.short].filter((x): x is string => Boolean(x)), description: o.description, value: optionValue(o) }));
}

function walk(cmd: Command, path: string[], inherited: Flag[], out: Node[]): void {
  const subs = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
  const flags = flagsOf(cmd);
  const args = cmd.registeredArguments;
  out.push({
    path,
    subcommands: subs.map((c) => ({ name: c.name(), description: c.description() })),
    flags: [...flags, { names: ['--help'], description: 'show help' }],
    inherited,
    args: args.map(argumentValue),
    variadic: args.length > 0 && args[args.length - 1].variadic,
  });
  // The root's own flags (--version) are not offered below it.
  const below = path.length === 1 ? inherited : [...inherited, ...flags];
  for (const c of subs) walk(c, [...path, c.name()], below, out);
}

function tree(program: Command): Node[] {
  const out: Node[] = [];
  walk(program, ['mkt'], [], out);
  return out;
}

const names = (flags: Flag[]): string[] => flags.flatMap((f) => f.names);
const p = (n: Node): string => n.path.join(' ');

/**
 * The lookups bash and zsh share (the syntax is common to both): which paths are commands, what
 * each offers, which flags take a value and how it completes, and how each positional completes.
 */
function lookups(nodes: Node[]): string {
  const node = nodes.map((n) => `    "${p(n)}") _mkt_subs='${n.subcommands.map((s) => s.name).join(' ')}' _mkt_flags='${[...names(n.flags), ...names(n.inherited)].join(' ')}' ;;`);
  const assign = (v: ValueKind): string => (v.kind === 'words' ? `_mkt_kind=words _mkt_words='${v.words.join(' ')}'` : `_mkt_kind=${v.kind} _mkt_words=''`);
  // Deeper commands first, so a command's own flag wins over an ancestor's of the same name.
  const option = [...nodes]
    .sort((a, b) => b.path.length - a.path.length)
    .flatMap((n) =>
      n.flags
        .filter((f) => f.value)
        .map((f) => {
          const pats = f.names.flatMap((name) => [`"${p(n)}|${name}"`, ...(n.subcommands.length > 0 ? [`"${p(n)} "*"|${name}"`] : [])]);
          return `    ${pats.join('|')}) ${assign(f.value!)} ;;`;
        }),
    );
  const argument = nodes.flatMap((n) =>
    n.args.map((a, i) => `    "${p(n)}|${n.variadic && i === n.args.length - 1 ? `"*` : `${i}"`}) ${assign(a)} ;;`),
  );
  return `# __mkt_node PATH: is PATH a command; sets _mkt_subs and _mkt_flags (its own and inherited)
__mkt_node() {
  case "$1" in
${node.join('\n')}
    *) return 1 ;;
  esac
}
# __mkt_option PATH FLAG: does FLAG take a value there; sets _mkt_kind (words|file|dir|text) and _mkt_words
__mkt_option() {
  case "$1|$2" in
${option.join('\n')}
    *) return 1 ;;
  esac
}
# __mkt_argument PATH INDEX: how the positional argument INDEX (from 0) completes; fails past the last
__mkt_argument() {
  case "$1|$2" in
${argument.join('\n')}
    *) return 1 ;;
  esac
}
`;
}

/**
 * The walk over the words before the cursor, the same in bash and zsh: the command path, how many
 * positionals follow it, and whether the cursor is on a flag's value (`value` holds the flag).
 * `first` and `end` index the words; bash splits `--flag=value` at `=`, zsh keeps it whole.
 */
function walkWords(words: string, first: number, end: string, path: string): string {
  return `  for ((i = ${first}; i < ${end}; i++)); do
    w="\${${words}[i]}"
    if [[ -n "$value" ]]; then
      [[ "$w" == "=" ]] && continue
      value=""
      continue
    fi
    if ((!dd)); then
      case "$w" in
        --) dd=1; continue ;;
        --*=*) continue ;;
        -?*) __mkt_option "$${path}" "$w" && value="$w"; continue ;;
      esac
    fi
    if ((npos == 0)) && __mkt_node "$${path} $w"; then ${path}="$${path} $w"; else npos=$((npos + 1)); fi
  done`;
}

function bash(nodes: Node[]): string {
  return `# bash completion for mkt (generated by \`mkt completion bash\`; do not edit)
${lookups(nodes)}
# __mkt_reply CUR [PREFIX]: COMPREPLY from _mkt_kind; PREFIX goes before each (for --flag=value)
__mkt_reply() {
  local c
  COMPREPLY=()
  case "$_mkt_kind" in
    words) while IFS= read -r c; do COMPREPLY+=("$2$c"); done < <(compgen -W "$_mkt_words" -- "$1") ;;
    file) compopt -o filenames 2>/dev/null; while IFS= read -r c; do COMPREPLY+=("$2$c"); done < <(compgen -f -- "$1") ;;
    dir) compopt -o filenames 2>/dev/null; while IFS= read -r c; do COMPREPLY+=("$2$c"); done < <(compgen -d -- "$1") ;;
  esac
}
_mkt() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="mkt" npos=0 dd=0 value="" i w
  local _mkt_subs _mkt_flags _mkt_kind _mkt_words
${walkWords('COMP_WORDS', 1, 'COMP_CWORD', 'path')}
  if [[ -n "$value" ]]; then
    [[ "$cur" == "=" ]] && cur=""
    __mkt_option "$path" "$value"
    __mkt_reply "$cur"
    return
  fi
  if ((!dd)) && [[ "$cur" == --*=* ]] && __mkt_option "$path" "\${cur%%=*}"; then
    __mkt_reply "\${cur#*=}" "\${cur%%=*}="
    return
  fi
  __mkt_node "$path"
  if ((!dd)) && [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$_mkt_flags" -- "$cur"))
  elif ((npos == 0)) && [[ -n "$_mkt_subs" ]]; then
    COMPREPLY=($(compgen -W "$_mkt_subs" -- "$cur"))
  elif __mkt_argument "$path" "$npos"; then
    __mkt_reply "$cur"
  else
    COMPREPLY=($(compgen -W "$_mkt_flags" -- "$cur"))
  fi
}
complete -F _mkt mkt
`;
}

function zsh(nodes: Node[]): string {
  return `#compdef mkt
# zsh completion for mkt (generated by \`mkt completion zsh\`; do not edit)
${lookups(nodes)}
__mkt_zreply() {
  case "$_mkt_kind" in
    (words) compadd -- \${=_mkt_words} ;;
    (file) _files ;;
    (dir) _files -/ ;;
  esac
}
_mkt() {
  local p="mkt" cur="\${words[CURRENT]}" npos=0 dd=0 value="" i w
  local _mkt_subs _mkt_flags _mkt_kind _mkt_words
${walkWords('words', 2, 'CURRENT', 'p')}
  if [[ -n "$value" ]]; then
    __mkt_option "$p" "$value"
    __mkt_zreply
    return
  fi
  if ((!dd)) && [[ "$cur" == --*=* ]] && __mkt_option "$p" "\${cur%%=*}"; then
    compset -P '*='
    __mkt_zreply
    return
  fi
  __mkt_node "$p"
  if ((!dd)) && [[ "$cur" == -* ]]; then
    compadd -- \${=_mkt_flags}
  elif ((npos == 0)) && [[ -n "$_mkt_subs" ]]; then
    compadd -- \${=_mkt_subs}
  elif __mkt_argument "$p" "$npos"; then
    __mkt_zreply
  else
    compadd -- \${=_mkt_flags}
  fi
}
if [[ "$funcstack[1]" == "_mkt" ]]; then _mkt "$@"; else compdef _mkt mkt; fi
`;
}

function fishQuote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** fish's `complete` arguments for a value: its words, files, directories, or nothing. */
function fishValue(v: ValueKind): string {
  if (v.kind === 'words') return `-x -a ${fishQuote(v.words.join(' '))}`;
  if (v.kind === 'file') return '-r -F';
  if (v.kind === 'dir') return `-x -a '(__fish_complete_directories (commandline -ct))'`;
  return '-x';
}

function fish(nodes: Node[]): string {
  const command = nodes.filter((n) => n.path.length > 1).map((n) => fishQuote(p(n)));
  const valued = nodes.flatMap((n) =>
    n.flags
      .filter((f) => f.value)
      .flatMap((f) => f.names.flatMap((name) => [fishQuote(`${p(n)}|${name}`), ...(n.subcommands.length > 0 ? [fishQuote(`${p(n)} *|${name}`)] : [])])),
  );
  const lines = [
    '# fish completion for mkt (generated by `mkt completion fish`; do not edit)',
    'complete -c mkt -f',
    'function __mkt_command -d "is argv[1] a command path of mkt"',
    `    switch $argv[1]`,
    `        case ${command.join(' ')}`,
    '            return 0',
    '    end',
    '    return 1',
    'end',
    'function __mkt_option -d "does flag argv[2] take a value at command path argv[1]"',
    `    switch "$argv[1]|$argv[2]"`,
    `        case ${valued.join(' ') || "''"}`,
    '            return 0',
    '    end',
    '    return 1',
    'end',
    // The same walk as bash and zsh: the command path, then how many positionals follow it.
    'function __mkt_walk -d "command path and positional count of the words before the cursor"',
    '    set -l line (commandline -pc)',
    '    if test "$line" = "$__mkt_walk_line"',
    '        printf "%s\\n" $__mkt_walk_result',
    '        return',
    '    end',
    '    set -l path mkt',
    '    set -l npos 0',
    '    set -l value 0',
    '    set -l dd 0',
    '    for w in (commandline -opc)[2..-1]',
    '        if test $value = 1',
    '            set value 0',
    '            continue',
    '        end',
    '        if test $dd = 0',
    '            if test "$w" = --',
    '                set dd 1',
    '                continue',
    '            else if string match -qr -- "^--[^=]+=" $w',
    '                continue',
    '            else if string match -qr -- "^-." $w',
    '                __mkt_option "$path" $w; and set value 1',
    '                continue',
    '            end',
    '        end',
    '        if test $npos = 0; and __mkt_command "$path $w"',
    '            set path "$path $w"',
    '        else',
    '            set npos (math $npos + 1)',
    '        end',
    '    end',
    '    set -g __mkt_walk_line $line',
    '    set -g __mkt_walk_result $path $npos',
    '    printf "%s\\n" $path $npos',
    'end',
    'function __mkt_at -d "is the cursor at command path argv[1] (and at positional argv[2]; argv[3] = or later)"',
    '    set -l w (__mkt_walk)',
    '    test "$w[1]" = "$argv[1]"; or return 1',
    '    set -q argv[2]; or return 0',
    '    set -q argv[3]; and test $w[2] -ge $argv[2]; and return 0',
    '    test $w[2] = $argv[2]',
    'end',
    'function __mkt_under -d "is the cursor at command path argv[1] or below it"',
    '    set -l w (__mkt_walk)',
    '    test "$w[1]" = "$argv[1]"; or string match -q -- "$argv[1] *" "$w[1]"',
    'end',
  ];
  for (const n of nodes) {
    const at = `-n ${fishQuote(`__mkt_at ${fishQuote(p(n))}`)}`;
    for (const s of n.subcommands) lines.push(`complete -c mkt -n ${fishQuote(`__mkt_at ${fishQuote(p(n))} 0`)} -a ${fishQuote(s.name)} -d ${fishQuote(s.description)}`);
    // A command's flags hold below it too (commander reads a parent's option anywhere after it).
    const where = n.subcommands.length > 0 && n.path.length > 1 ? `-n ${fishQuote(`__mkt_under ${fishQuote(p(n))}`)}` : at;
    for (const f of n.flags) {
      const spec = f.names.map((name) => (name.startsWith('--') ? `-l ${name.slice(2)}` : `-s ${name.slice(1)}`)).join(' ');
      lines.push(`complete -c mkt ${where} ${spec}${f.value ? ` ${fishValue(f.value)}` : ''} -d ${fishQuote(f.description)}`);
    }
    n.args.forEach((a, i) => {
      if (a.kind === 'text') return;
      const more = n.variadic && i === n.args.length - 1 ? ' more' : '';
      const cond = `-n ${fishQuote(`__mkt_at ${fishQuote(p(n))} ${i}${more}`)}`;
      if (a.kind === 'words') lines.push(`complete -c mkt ${cond} -a ${fishQuote(a.words.join(' '))}`);
      else if (a.kind === 'file') lines.push(`complete -c mkt ${cond} -F`);
      else lines.push(`complete -c mkt ${cond} -a '(__fish_complete_directories (commandline -ct))'`);
    });
  }
  return lines.join('\n') + '\n';
}

export function renderCompletion(program: Command, shell: Shell): string {
  const nodes = tree(program);
  if (shell === 'bash') return bash(nodes);
  if (shell === 'zsh') return zsh(nodes);
  return fish(nodes);
}
