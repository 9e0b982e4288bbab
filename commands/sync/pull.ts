// pullRun: `mkt sync pull` — decrypted JSON lines of every entry after the saved cursor (or
// --since N), one per line; the saved cursor moves only when --since is not given. `--json`
// prints one document instead, {entries, count, cursor}, and saves the cursor once it is printed.
import type { Factory } from '../../src/cli/factory.js';
import { UsageError } from '../../src/cli/errors.js';
import { printJson } from '../../src/cli/output.js';
import { pullChanges, type PulledChange } from '../../src/sync/changelog.js';
import { call, openSession, type ClientFlags } from './shared.js';

export interface PullOptions extends ClientFlags {
  factory: Factory;
  since?: string;
}

export async function pullRun(opts: PullOptions): Promise<void> {
  const f = opts.factory;
  let since: number | undefined;
  if (opts.since !== undefined) {
    if (!/^\d+$/.test(opts.since)) throw new UsageError('--since must be a cursor (a whole number, 0 for everything)');
    since = Number(opts.since);
  }
  const s = await openSession(f, opts);
  if (opts.json) {
    // Pulled "since" the saved cursor, so nothing is saved page by page: a page that fails after
    // others were read leaves the cursor where it was, and no entry goes unprinted.
    const entries: PulledChange[] = [];
    const r = await call(() => pullChanges(s, (page) => entries.push(...page), { since: since ?? s.profile.cursor }));
    printJson(f.io, { entries, count: r.pulled, cursor: r.cursor });
    if (since === undefined) s.save((p) => (p.cursor = r.cursor));
    return;
  }
  const r = await call(() =>
    pullChanges(s, (page) => {
      for (const c of page) f.io.stdout.write(JSON.stringify(c) + '\n');
    }, { since }),
  );
  f.io.stderr.write(`${r.pulled} ${r.pulled === 1 ? 'entry' : 'entries'}; cursor ${r.cursor}\n`);
}
