// Joining two notes histories on the server exactly as `git notes merge -s <strategy>` joins them:
// by running that command, in a scratch git directory that holds only the two refs and writes its
// objects straight into the hosted repository (GIT_OBJECT_DIRECTORY), so the hosted repository's
// refs are never touched by it (git notes merge moves its ref without compare-and-swap; callers
// move the real ref themselves, by compare-and-swap). The pushed side of the same recipe runs in
// the proc-receive hook (src/git/hooks.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { git } from './run.js';
import { REPO_FILE_MODE } from './hosting.js';
import type { NotesMergeStrategy } from '../store/repos.js';

export type { NotesMergeStrategy };

/** Every strategy git knows, `manual` (the default: nothing is joined on the server) first. */
export const NOTES_MERGE_STRATEGIES: readonly NotesMergeStrategy[] = ['manual', 'ours', 'theirs', 'union', 'cat_sort_uniq'];

export function isNotesMergeStrategy(s: string): s is NotesMergeStrategy {
  return (NOTES_MERGE_STRATEGIES as readonly string[]).includes(s);
}

/** The name the other side's ref has in the scratch directory (it shows in the merge commit's message). */
export function incomingRef(ref: string): string {
  return ref === 'refs/notes/mkt/incoming' ? 'refs/notes/mkt/incoming-2' : 'refs/notes/mkt/incoming';
}

export interface MergeIdentity {
  name: string;
  email: string;
  /** Unix seconds of the merge commit (author and committer). */
  seconds: number;
}

/**
 * The commit `git notes --ref <ref> merge -s <strategy>` leaves when the notes ref is at `ours`
 * and `theirs` is merged into it: a merge commit with parents ours and theirs, `theirs` itself
 * when ours is its ancestor (fast-forward), `ours` when theirs is already in it. Only objects
 * are written to the repository; nothing points at them until the caller moves the ref.
 */
export async function mergeNotes(
  gitDir: string,
  format: 'sha1' | 'sha256',
  ref: string,
  ours: string,
  theirs: string,
  strategy: Exclude<NotesMergeStrategy, 'manual'>,
  who: MergeIdentity,
): Promise<string> {
  const scratch = mkdtempSync(join(tmpdir(), 'mkt-notes-merge-'));
  try {
    await git(undefined, ['init', '--quiet', '--bare', '--template=', `--object-format=${format}`, scratch]);
    const other = incomingRef(ref);
    const date = `@${who.seconds} +0000`;
    const env = {
      GIT_OBJECT_DIRECTORY: join(gitDir, 'objects'),
      GIT_AUTHOR_NAME: who.name,
      GIT_AUTHOR_EMAIL: who.email,
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_NAME: who.name,
      GIT_COMMITTER_EMAIL: who.email,
      GIT_COMMITTER_DATE: date,
    };
    await git(scratch, ['update-ref', ref, ours], { env });
    await git(scratch, ['update-ref', other, theirs], { env });
    // The objects land in the hosted repository: they get its file mode, not the scratch's umask.
    await git(scratch, ['-c', `core.sharedRepository=${REPO_FILE_MODE}`, 'notes', '--ref', ref, 'merge', '--quiet', '-s', strategy, other], { env });
    return await git(scratch, ['rev-parse', '--verify', ref], { env });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
