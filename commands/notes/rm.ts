// rmRun: `mkt notes rm [REV]` — removes the note on a commit (succeeds when there was none).
import type { Factory } from '../../src/cli/factory.js';
import { printJson } from '../../src/cli/output.js';
import { call, notesClient, repoOf, targetOf, type ClientFlags } from './shared.js';

export interface RmOptions extends ClientFlags {
  factory: Factory;
  rev: string;
}

export async function rmRun(opts: RmOptions): Promise<void> {
  const { io } = opts.factory;
  const repo = await repoOf(opts.factory, opts);
  const target = await targetOf(opts.factory, opts.rev);
  const client = await notesClient(opts.factory, opts);
  await call(repo, () => client.delete(repo, target, opts.namespace));
  const namespace = opts.namespace ?? 'commits';
  if (opts.json) printJson(io, { target, namespace, removed: true });
  else io.stderr.write(`no note on ${target} in ${namespace} any more\n`);
}
