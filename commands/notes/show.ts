// showRun: `mkt notes show [REV]` — the note on a revision, as `git notes show` prints it;
// with --attribution, who set it and when first.
import type { Factory } from '../../src/cli/factory.js';
import { printJson } from '../../src/cli/output.js';
import { call, notesClient, repoOf, targetOf, type ClientFlags } from './shared.js';

export interface ShowOptions extends ClientFlags {
  factory: Factory;
  rev: string;
  attribution?: boolean;
}

export async function showRun(opts: ShowOptions): Promise<void> {
  const { io } = opts.factory;
  const repo = await repoOf(opts.factory, opts);
  const target = await targetOf(opts.factory, opts.rev);
  const client = await notesClient(opts.factory, opts);
  const note = await call(repo, () => client.get(repo, target, { namespace: opts.namespace, attribution: opts.attribution }));
  if (opts.json) {
    printJson(io, note);
    return;
  }
  const a = note.attribution;
  if (a) {
    io.stdout.write(`Notes-Commit: ${a.commit}${a.exact ? '' : ' (not exact: the history walk reached its bound)'}\n`);
    io.stdout.write(`Author: ${a.name} <${a.email}>\nDate:   ${a.at}\n\n`);
  }
  io.stdout.write(note.content.endsWith('\n') || note.content === '' ? note.content : `${note.content}\n`);
}
