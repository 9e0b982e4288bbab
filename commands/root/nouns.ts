// The command tree's nouns, in help order. Each module only declares flags and help;
// its verbs are imported inside their actions, so `mkt --help` loads none of them.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import type { ParsedVerb } from '../../src/cli/flags.js';
import { register as admin } from '../admin/index.js';
import { register as auth } from '../auth/index.js';
import { register as serve } from '../serve/index.js';
import { register as completion } from '../completion/index.js';
import { register as tickets } from '../tickets/index.js';
import { register as monitor } from '../monitor/index.js';
import { register as license } from '../license/index.js';
import { register as sync } from '../sync/index.js';
import { register as notes } from '../notes/index.js';
import { register as backup } from '../backup/index.js';

/** Declares a noun's commands; with `runF`, its actions hand the parsed options to it instead of a verb. */
export type RegisterNoun = (program: Command, f: Factory, runF?: ParsedVerb) => void;

export interface Noun {
  /** The top-level command the module registers (a test keeps the two equal). */
  name: string;
  register: RegisterNoun;
  /** Whether the noun works without its siblings in the tree (`completion` prints the whole tree). */
  standalone: boolean;
}

export const NOUNS: Noun[] = [
  { name: 'admin', register: admin, standalone: true },
  { name: 'auth', register: auth, standalone: true },
  { name: 'serve', register: serve, standalone: true },
  { name: 'notes', register: notes, standalone: true },
  { name: 'license', register: license, standalone: true },
  { name: 'sync', register: sync, standalone: true },
  { name: 'monitor', register: monitor, standalone: true },
  { name: 'tickets', register: tickets, standalone: true },
  { name: 'backup', register: backup, standalone: true },
  { name: 'completion', register: completion, standalone: false },
];

/**
 * The nouns a command line can reach, so a run builds only the part of the tree it uses:
 * `mkt tickets ...` needs the tickets noun alone, `mkt --version` none (commander answers a
 * leading --version before it looks at commands); anything else (help, a typo, completion)
 * gets the whole tree, so its output is what the full tree prints.
 */
export function nounsFor(argv: readonly string[] | undefined): Noun[] {
  if (argv === undefined) return NOUNS;
  const first = argv[0];
  if (first === '--version' || first === '-V') return [];
  const noun = NOUNS.find((n) => n.name === first);
  return noun?.standalone ? [noun] : NOUNS;
}
