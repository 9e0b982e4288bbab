// Notes refs whose tip is not a readable notes commit (a blob, a tree, a tag, a commit whose tree
// is missing), as the indexer found them: such a ref is left out of the index as if it did not
// exist, since one bad ref must not break every read and write of its repository. Logged once a tip.

/** Where the indexer says it skipped a notes ref (the daemon's pino logger fits). */
export interface IndexerLog {
  warn(fields: Record<string, unknown>, msg: string): void;
}

/**
 * How long a notes ref found unreadable at a tip is left out before it is looked at again (a tip
 * that is a blob stays one; a read that failed for want of a process may not fail next time).
 */
const BAD_TIP_RECHECK_MS = 60_000;
const BAD_TIP_ENTRIES = 10_000;

export class BadRefs {
  /** Per repository and namespace (`repo\0namespace`): the bad tip, why, and when that was found. */
  private readonly tips = new Map<string, { tip: string; reason: string; at: number }>();
  /** Bad tips already logged (`repo\0namespace\0tip`), so each is logged once, not once a request. */
  private readonly warned = new Set<string>();

  constructor(private readonly log?: IndexerLog) {}

  /** Why the tip is not a readable notes commit, when that was found (however long ago), else undefined. */
  reason(repoId: string, namespace: string, tip: string): string | undefined {
    const hit = this.tips.get(`${repoId}\0${namespace}`);
    return hit?.tip === tip ? hit.reason : undefined;
  }

  /** Whether the tip was found bad less than BAD_TIP_RECHECK_MS ago (so it is still left out). */
  fresh(repoId: string, namespace: string, tip: string): boolean {
    const hit = this.tips.get(`${repoId}\0${namespace}`);
    return hit?.tip === tip && performance.now() - hit.at < BAD_TIP_RECHECK_MS;
  }

  /** Leaves the ref out until it moves (or BAD_TIP_RECHECK_MS pass), and says so once per tip. */
  mark(repo: { id: string; dir: string }, namespace: string, tip: string, reason: string): void {
    const key = `${repo.id}\0${namespace}`;
    if (this.tips.size >= BAD_TIP_ENTRIES && !this.tips.has(key)) this.tips.clear();
    this.tips.set(key, { tip, reason, at: performance.now() });
    const said = `${key}\0${tip}`;
    if (this.warned.has(said)) return;
    if (this.warned.size >= BAD_TIP_ENTRIES) this.warned.clear();
    this.warned.add(said);
    this.log?.warn({ repo: repo.id, dir: repo.dir, ref: `refs/notes/${namespace}`, tip, reason }, 'notes ref skipped: it is not a readable notes commit; the API leaves it out until it is deleted or moved');
  }

  /** Forgets a failure remembered of this tip, now that it was read. */
  readable(repoId: string, namespace: string, tip: string): void {
    if (this.tips.get(`${repoId}\0${namespace}`)?.tip === tip) this.tips.delete(`${repoId}\0${namespace}`);
  }
}
