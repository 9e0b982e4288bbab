// logRun: `mkt notes log [REV]` — the versions of the note on a revision, newest first, printed as
// `git log` prints commits (the note text indented under each), removals as "(note removed)".
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { printJson } from '../../src/cli/output.js';
import { call, notesClient, repoOf, targetOf, type ClientFlags } from './shared.js';

export interface LogOptions extends ClientFlags {
  factory: Factory;
  rev: string;
  limit?: string;
}

export async function logRun(opts: LogOptions): Promise<void> {
  const { io } = opts.factory;
  let limit: number | undefined;
  if (opts.limit !== undefined) {
    limit = Number(opts.limit);
    if (!/^\d+$/.test(opts.limit) || limit < 1) throw new UsageError(`--limit must be a positive whole number, not ${JSON.stringify(opts.limit)}`);
  }
  const repo = await repoOf(opts.factory, opts);
  const target = await targetOf(opts.factory, opts.rev);
  const client = await notesClient(opts.factory, opts);
  const res = await call(repo, () => client.history(repo, target, { namespace: opts.namespace, limit }));
  if (opts.json) {
    printJson(io, res);
    return;
  }
  res.data.forEach((v, i) => {
    const body = v.content === null ? '(note removed)\n' : v.content.endsWith('\n') ? v.content : `${v.content}\n`;
    const indented = body.replace(/^(?=.)/gm, '    ');
    io.stdout.write(`${i > 0 ? '\n' : ''}commit ${v.commit}\nAuthor: ${v.name} <${v.email}>\nDate:   ${v.at}\n\n${indented}`);
  });
  if (!res.complete) io.stderr.write('older versions may exist: the walk of the notes ref stopped at its bound, or the limit was reached\n');
}
