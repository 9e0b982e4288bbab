// The hooks of every hosted repository. pre-receive: a `git push` over smart HTTP may move a notes
// ref only to a commit of a notes tree (what the indexer and put_note can read), and must respect
// the note size limit that put_note enforces, so a notes ref carrying a larger blob is refused.
// post-receive: HEAD follows the first branch pushed while the branch it names does not exist.
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_NOTE_BYTES } from '../schemas/notes.js';

/**
 * The hook script. Only refs under refs/notes/ are judged (branches and tags carry anything). A
 * notes ref created or moved must point at a commit (not a blob, tree or tag: one such ref made
 * list, search and put_note answer 500 for everyone) whose tree is a notes tree: blobs (mode
 * 100644 or 100755) whose path, slashes taken out, is an object id of the repository's length in
 * lower-case hex, under two-hex-digit fan-out directories and nothing else. Only what the push
 * changes is read (`diff-tree` from the old tip, or from the empty tree for a new ref or an old tip
 * that is not a commit), one process per ref, never one per object. Then every blob reachable from
 * the new tip and not from the old one is sized with `cat-file --batch-check` (nothing is read);
 * one over the limit refuses the push. git shows the messages to the pusher as `remote: ...`, and
 * a path git quotes (it holds a tab, a newline or a byte outside ASCII) is never a note anyway.
 * The script reads only git's `<old> <new> <ref>` lines, every variable is quoted and nothing is
 * evaluated; the limit is a number written in at install time.
 */
export function preReceiveScript(limit: number = MAX_NOTE_BYTES): string {
  return `#!/bin/sh
# Installed by mkt (src/git/hooks.ts) and rewritten at every marketplace start: edits are lost.
# Refuses notes refs (refs/notes/*) that are not a commit of a notes tree, or that carry a note
# blob over ${limit} bytes, the limit of put_note.
limit=${Math.floor(limit)}
empty=$(git hash-object -t tree --stdin </dev/null) || exit 1
status=0
while read -r old new ref; do
  case "$ref" in refs/notes/*) ;; *) continue ;; esac
  case "$new" in *[!0]*) ;; *) continue ;; esac
  type=$(git cat-file -t "$new") || exit 1
  if [ "$type" != commit ]; then
    echo "mkt: refusing $ref: a notes ref must point at a commit of a notes tree; $new is a $type, not a commit" >&2
    status=1
    continue
  fi
  base=$empty
  case "$old" in *[!0]*) [ "$(git cat-file -t "$old" 2>/dev/null)" = commit ] && base=$old ;; esac
  changes=$(git diff-tree -r -t --no-renames --no-abbrev "$base" "$new") || exit 1
  strange=$(printf '%s\\n' "$changes" | awk -F '\\t' -v n="\${#new}" '
    NF < 2 { next }
    {
      split($1, m, " "); mode = m[2]; st = m[5]; path = $2
      if (st ~ /^D/) next
      flat = path; gsub("/", "", flat)
      ok = 0
      if (mode == "040000") ok = path ~ /^([0-9a-f][0-9a-f]\\/)*[0-9a-f][0-9a-f]$/ && length(flat) < n
      else if (mode == "100644" || mode == "100755") ok = path ~ /^([0-9a-f][0-9a-f]\\/)*[0-9a-f]+$/ && length(flat) == n
      if (!ok && shown++ < 10) print "  " path " (mode " mode ")"
    }')
  if [ -n "$strange" ]; then
    echo "mkt: refusing $ref: its tree is not a notes tree (notes are blobs named by the object id they annotate, in lower-case hex, under two-hex-digit fan-out directories, and nothing else); these are not:" >&2
    printf '%s\\n' "$strange" >&2
    status=1
    continue
  fi
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

/**
 * The post-receive hook, as Gitea does it: while HEAD names a branch that does not exist (a new
 * repository whose default branch nobody pushed yet), the push that creates a branch makes HEAD
 * name it, so a clone checks it out instead of saying `remote HEAD refers to nonexistent ref`.
 * When one push creates several, `main` wins, else the first git lists. A HEAD whose branch exists
 * is never moved, and one that is not a symbolic ref is left alone. git has updated the refs
 * before this runs; every line of stdin is read so git never writes into a closed pipe.
 */
export function postReceiveScript(): string {
  return `#!/bin/sh
# Installed by mkt (src/git/hooks.ts) and rewritten at every marketplace start: edits are lost.
# HEAD follows the first branch pushed while the branch it names does not exist.
chosen=
while read -r old new ref; do
  case "$ref" in refs/heads/*) ;; *) continue ;; esac
  case "$new" in *[!0]*) ;; *) continue ;; esac
  if [ -z "$chosen" ] || [ "$ref" = refs/heads/main ]; then chosen=$ref; fi
done
[ -n "$chosen" ] || exit 0
head=$(git symbolic-ref -q HEAD) || exit 0
git show-ref --verify --quiet "$head" && exit 0
git show-ref --verify --quiet "$chosen" || exit 0
git symbolic-ref HEAD "$chosen"
`;
}

/** Writes one hook unless it is already there as written (atomic rename). */
function installHook(hooks: string, name: string, script: string): void {
  const file = join(hooks, name);
  let current: string | undefined;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === script) return;
  // The server's user alone runs (and reads) it, like everything in a hosted repository.
  mkdirSync(hooks, { recursive: true, mode: 0o700 });
  const tmp = `${file}.mkt-${process.pid}.tmp`;
  writeFileSync(tmp, script, { mode: 0o700 });
  chmodSync(tmp, 0o700);
  renameSync(tmp, file);
}

/** Writes mkt's hooks into a bare repository, each unless it is already there as written. */
export function installHooks(gitDir: string): void {
  const hooks = join(gitDir, 'hooks');
  installHook(hooks, 'pre-receive', preReceiveScript());
  installHook(hooks, 'post-receive', postReceiveScript());
}

/**
 * Config given to the git that serves a push, through the environment: hooks are read from the
 * repository's own hooks directory whatever `core.hooksPath` the server user's ~/.gitconfig says.
 */
export function hookConfigEnv(gitDir: string): Record<string, string> {
  return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.hooksPath', GIT_CONFIG_VALUE_0: join(gitDir, 'hooks') };
}
