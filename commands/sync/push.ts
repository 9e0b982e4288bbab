// pushRun: `mkt sync push [FILE]` — JSON lines {table, op, row_id, data} from FILE or stdin,
// sealed on this device and pushed in batches; prints how many the server stored and its cursor
// (the sequence number of the last one); this device's pull cursor stays where it was.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { readAll } from '../../src/cli/io.js';
import { printFields, printJson } from '../../src/cli/output.js';
import { parseChanges, pushChanges } from '../../src/sync/changelog.js';
import { call, openSession, type ClientFlags } from './shared.js';

export interface PushOptions extends ClientFlags {
  factory: Factory;
  file?: string;
}

export async function pushRun(opts: PushOptions): Promise<void> {
  const f = opts.factory;
  let text: string;
  if (opts.file === undefined || opts.file === '-') text = await readAll(f.io.stdin);
  else {
    try {
      text = readFileSync(resolve(f.io.cwd, opts.file), 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read ${opts.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  const changes = parseChanges(text, () => f.now());
  const s = await openSession(f, opts);
  const r = await call(() => pushChanges(s, changes));
  // The device's pull cursor does not move: entries other devices pushed before ours lie behind it.
  if (opts.json) return printJson(f.io, { ...r, pull_cursor: s.profile.cursor });
  const dup = r.duplicate_batches > 0 ? `, ${r.duplicate_batches} batch${r.duplicate_batches === 1 ? '' : 'es'} already applied before` : '';
  printFields(f.io, [
    ['pushed', `${r.pushed} entr${r.pushed === 1 ? 'y' : 'ies'} (${r.accepted} stored${dup})`],
    ['server cursor', r.cursor ?? 'unchanged (nothing to push)'],
    ['pull cursor', `${s.profile.cursor} (unchanged: \`mkt sync pull\` reads from here, your own entries included)`],
    ['key id', r.key_id],
  ]);
}
