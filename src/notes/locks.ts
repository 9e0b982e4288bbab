// The two locks a notes write holds: a repository's in-process queue (RepoLocks: catch-ups and
// writes of one repository run one at a time here) and a ref's lock across every instance on the
// database (RefLock, by default NotesIndex.holdRef).

/** Holds a repository's notes ref against writers of every instance while `fn` runs. */
export type RefLock = <T>(repoId: string, ref: string, fn: () => Promise<T>) => Promise<T>;

export class RepoLocks {
  private readonly tails = new Map<string, Promise<unknown>>();
  /** Runs fn after every earlier holder of the same key has finished. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}
