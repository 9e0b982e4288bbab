// lsRun: `mkt notes ls` — the notes namespaces of a repository with their note counts and merge
// strategies.
import type { Factory } from '../../src/cli/factory.js';
import { printJson, printTable } from '../../src/cli/output.js';
import { call, notesClient, repoOf, short, type ClientFlags } from './shared.js';

export interface LsOptions extends ClientFlags {
  factory: Factory;
}

export async function lsRun(opts: LsOptions): Promise<void> {
  const { io } = opts.factory;
  const repo = await repoOf(opts.factory, opts);
  const client = await notesClient(opts.factory, opts);
  const res = await call(repo, () => client.namespaces(repo));
  if (opts.json) {
    printJson(io, res);
    return;
  }
  const tty = Boolean(io.stdout.isTTY);
  printTable(
    io,
    // The merge strategy last, so scripts reading the first four columns read them as before.
    ['namespace', 'notes', 'ref', 'tip', 'merge'],
    res.data.map((n) => [n.name, n.notes, n.git_ref, tty ? short(n.tip) : n.tip, n.merge_strategy]),
  );
  if (io.stderr.isTTY && res.data.length === 0) io.stderr.write('no notes namespaces yet\n');
}
