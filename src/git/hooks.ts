// The pre-receive hook of every hosted repository: a `git push` over smart HTTP must respect the
// note size limit that put_note enforces, so a notes ref carrying a larger blob is refused.
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_NOTE_BYTES } from '../schemas/notes.js';

/**
 * The hook script. Only refs under refs/notes/ are judged (branches and tags carry files of any
 * size). For each notes ref created or moved, every blob reachable from the new tip and not
 * from the old one is sized with `cat-file --batch-check` (nothing is read); one over the limit
 * refuses the whole push, and git shows the message to the pusher as `remote: ...`. The script
 * reads only git's `<old> <new> <ref>` lines, every variable is quoted and nothing is evaluated;
 * the limit is a number written in at install time.
 */
export function preReceiveScript(limit: number = MAX_NOTE_BYTES): string {
  return `#!/bin/sh
# Installed by mkt (src/git/hooks.ts) and rewritten at every marketplace start: edits are lost.
# Refuses notes refs (refs/notes/*) that carry a note blob over ${limit} bytes, the limit of put_note.
limit=${Math.floor(limit)}
status=0
while read -r old new ref; do
  case "$ref" in refs/notes/*) ;; *) continue ;; esac
  case "$new" in *[!0]*) ;; *) continue ;; esac
  case "$old" in
    *[!0]*) objects=$(git rev-list --objects "$new" --not "$old") || exit 1 ;;
    *) objects=$(git rev-list --objects "$new") || exit 1 ;;
  esac
  big=$(printf '%s\\n' "$objects" | git cat-file --batch-check='%(objecttype) %(objectsize) %(objectname) %(rest)' |
    awk -v limit="$limit" '$1 == "blob" && $2 + 0 > limit + 0 { print "  " $4 " (blob " $3 ", " $2 " bytes)" }')
  if [ -n "$big" ]; then
    echo "mkt: refusing $ref: notes are limited to $limit bytes each; these are larger:" >&2
    printf '%s\\n' "$big" >&2
    status=1
  fi
done
exit "$status"
`;
}

/** Writes the hook into a bare repository unless it is already there as written (atomic rename). */
export function installHooks(gitDir: string): void {
  const hooks = join(gitDir, 'hooks');
  const file = join(hooks, 'pre-receive');
  const script = preReceiveScript();
  let current: string | undefined;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === script) return;
  mkdirSync(hooks, { recursive: true });
  const tmp = `${file}.mkt-${process.pid}.tmp`;
  writeFileSync(tmp, script, { mode: 0o755 });
  chmodSync(tmp, 0o755);
  renameSync(tmp, file);
}

/**
 * Config given to the git that serves a push, through the environment: hooks are read from the
 * repository's own hooks directory whatever `core.hooksPath` the server user's ~/.gitconfig says.
 */
export function hookConfigEnv(gitDir: string): Record<string, string> {
  return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.hooksPath', GIT_CONFIG_VALUE_0: join(gitDir, 'hooks') };
}
