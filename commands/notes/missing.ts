// missingRun: `mkt notes missing A..B` — the commits of a range of the local clone that have no
// note in the namespace, oldest first: one id a line (a CI backfill's to-do list), or --json.
import type { Factory } from '../../src/cli/factory.js';
import { DEFAULT_NAMESPACE } from '../../src/schemas/notes.js';
import { JsonArrayText } from './hit-formats.js';
import { withSink } from './output-sink.js';
import { callRead, notesClient, rangeCommits, repoOf, type ClientFlags } from './shared.js';

export interface MissingOptions extends ClientFlags {
  factory: Factory;
  /** A revision range of the clone, `A..B` (git rev-list A..B). */
  range: string;
}

export async function missingRun(opts: MissingOptions): Promise<void> {
  const { io } = opts.factory;
  const repo = await repoOf(opts.factory, opts);
  const chunks = await rangeCommits(opts.factory, opts.range);
  const client = await notesClient(opts.factory, opts);
  const flags = { commits: '<range>' };
  await withSink(io.stdout, async (sink) => {
    const arr = new JsonArrayText();
    let namespace = opts.namespace ?? DEFAULT_NAMESPACE;
    let indexed = true;
    if (opts.json) await sink.write('{"data":[');
    // One request a chunk, written before the next is asked: the answer keeps the order given.
    for (const commits of chunks) {
      const answer = await callRead(() => client.missing(repo, { namespace: opts.namespace, commits }), flags);
      namespace = answer.namespace;
      indexed &&= answer.indexed !== false;
      await sink.write(opts.json ? arr.items(answer.data.map((d) => ({ object: d.object }))) : answer.data.map((d) => d.object + '\n').join(''));
    }
    if (opts.json) await sink.write(`${arr.close()},"namespace":${JSON.stringify(namespace)},"indexed":${indexed}}\n`);
    if (!indexed) io.stderr.write('warning: the search index has not seen this repository yet; every commit may be listed\n');
  });
}
