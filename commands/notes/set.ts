// setRun: `mkt notes set [REV] -m TEXT | -F FILE | < stdin` — adds or replaces the note on a commit.
import type { Factory } from '../../src/cli/factory.js';
import { printFields, printJson } from '../../src/cli/output.js';
import { call, notesClient, readContent, repoOf, targetOf, type ClientFlags, type ContentFlags } from './shared.js';

export interface SetOptions extends ClientFlags, ContentFlags {
  factory: Factory;
  rev: string;
  commitMessage?: string;
}

export async function setRun(opts: SetOptions): Promise<void> {
  const { io } = opts.factory;
  const repo = await repoOf(opts.factory, opts);
  const target = await targetOf(opts.factory, opts.rev);
  const content = await readContent(opts.factory, opts);
  const client = await notesClient(opts.factory, opts);
  const res = await call(repo, () => client.put(repo, target, { content, namespace: opts.namespace, message: opts.commitMessage }));
  if (opts.json) printJson(io, res);
  else printFields(io, [['action', res.action], ['target', res.target], ['namespace', res.namespace], ['commit', res.commit]]);
}
