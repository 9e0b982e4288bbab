// The command tree's nouns, in help order. Each module only declares flags and help;
// its verbs are imported inside their actions, so `mkt --help` loads none of them.
import type { Command } from 'commander';
import type { Factory } from './factory.js';
import { register as admin } from '../../commands/admin/index.js';
import { register as auth } from '../../commands/auth/index.js';
import { register as serve } from '../../commands/serve/index.js';
import { register as completion } from '../../commands/completion/index.js';
import { register as tickets } from '../../commands/tickets/index.js';
import { register as monitor } from '../../commands/monitor/index.js';
import { register as license } from '../../commands/license/index.js';
import { register as sync } from '../../commands/sync/index.js';
import { register as notes } from '../../commands/notes/index.js';

export type RegisterNoun = (program: Command, f: Factory) => void;

export const NOUNS: RegisterNoun[] = [admin, auth, serve, notes, license, sync, monitor, tickets, completion];
