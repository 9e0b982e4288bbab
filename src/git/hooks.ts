// The hooks of every hosted repository. pre-receive: a `git push` over smart HTTP may move a notes
// ref only to a commit of a notes tree (what the indexer and put_note can read), and must respect
// the note size limit that put_note enforces, so a notes ref carrying a larger blob is refused.
// post-receive: HEAD follows the first branch pushed while the branch it names does not exist.
// proc-receive: pushes of the notes refs whose namespace has a merge strategy are merged into the
// ref as it stands, as `git notes merge -s <strategy>` merges (the server names those refs for
// each push through git config in the environment: notesMergeConfig).
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

/**
 * The proc-receive hook. git hands it the commands of the refs the push's configuration names in
 * `receive.procReceiveRefs` (notesMergeConfig: the notes refs whose namespace has a strategy, read
 * back from `notes.<namespace>.mergeStrategy`), after pre-receive accepted them and the pushed
 * objects are in the repository. For such a ref, a push that creates it or fast-forwards it as it
 * stands now moves it there; any other (a forced push that does not contain the ref's tip, or one
 * whose old value is stale because a note was written meanwhile) is merged into the ref as it
 * stands, as `git notes --ref <ref> merge -s <strategy> <pushed>` merges: the ref's notes are
 * "ours", the pushed ones "theirs", the merge commit has both as parents and the pusher as author.
 * The command runs in a scratch git directory holding only the two refs whose objects go straight
 * into the repository (git notes merge moves its ref without compare-and-swap), then the ref moves
 * by compare-and-swap; a ref that moved meanwhile (a note written through the API) is merged
 * again, up to 50 times. A merged note over the size limit refuses the push. Deletions and refs
 * without a strategy fall through to git. git's pkt-line protocol: `dd bs=1` reads exactly what a
 * packet holds (never more, so the next packet is left for the next read); nothing but the
 * protocol may reach stdout, so every git command's output goes elsewhere.
 */
export function procReceiveScript(limit: number = MAX_NOTE_BYTES): string {
  return `#!/bin/sh
# Installed by mkt (src/git/hooks.ts) and rewritten at every marketplace start: edits are lost.
# Merges pushes of notes refs that have a merge strategy (mkt admin repo notes-merge) into the ref.
limit=${Math.floor(limit)}
format=$(git rev-parse --show-object-format 2>/dev/null) || format=sha1
zero=$(git hash-object -t blob --stdin </dev/null | tr 0-9a-f 0) || exit 1
objects=$(cd "$(git rev-parse --git-path objects)" && pwd -P) || exit 1

# One packet's payload on stdout (NUL and newline as spaces); status 1 at a flush packet.
pkt_read() {
  len=$(dd bs=1 count=4 2>/dev/null)
  case "$len" in 0000) return 1 ;; [0-9a-f][0-9a-f][0-9a-f][0-9a-f]) ;; *) return 2 ;; esac
  n=$((0x$len - 4))
  [ "$n" -gt 0 ] || return 0
  dd bs=1 count="$n" 2>/dev/null | tr '\\000\\n' '  '
}
pkt() { printf '%04x%s\\n' $((\${#1} + 5)) "$1"; }

# The commit git notes merge leaves with the ref at $1 and $2 merged into it by strategy $3.
merge() {
  scratch=$(mktemp -d "\${TMPDIR:-/tmp}/mkt-notes-merge-XXXXXX") || return 1
  other=refs/notes/mkt/incoming
  [ "$ref" = "$other" ] && other=refs/notes/mkt/incoming-2
  (
    unset GIT_DIR GIT_QUARANTINE_PATH GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_INDEX_FILE GIT_WORK_TREE
    git init -q --bare --template= --object-format="$format" "$scratch" >/dev/null 2>&1 || exit 1
    GIT_DIR=$scratch GIT_OBJECT_DIRECTORY=$objects
    export GIT_DIR GIT_OBJECT_DIRECTORY
    git update-ref "$ref" "$1" >/dev/null 2>&1 &&
      git update-ref "$other" "$2" >/dev/null 2>&1 &&
      git -c core.sharedRepository=0600 notes --ref "$ref" merge --quiet -s "$3" "$other" >/dev/null 2>&1 &&
      git rev-parse --verify "$ref" 2>/dev/null
  )
  status=$?
  rm -rf "$scratch"
  return "$status"
}

# Blobs a merge made that are over the limit, one a line.
oversized() {
  git rev-list --objects "$1" --not "$2" 2>/dev/null |
    git cat-file --batch-check='%(objecttype) %(objectsize) %(objectname) %(rest)' 2>/dev/null |
    awk -v limit="$limit" '$1 == "blob" && $2 + 0 > limit + 0 { print "  " $4 " (blob " $3 ", " $2 " bytes)" }'
}

handle() {
  old=$1 new=$2 ref=$3
  strategy=$(git config --get "notes.\${ref#refs/notes/}.mergeStrategy" 2>/dev/null)
  case "$ref" in refs/notes/*) ;; *) strategy= ;; esac
  case "$strategy" in ours | theirs | union | cat_sort_uniq) ;; *)
    pkt "ok $ref"
    pkt "option fall-through"
    return ;;
  esac
  case "$new" in *[!0]*) ;; *)
    pkt "ok $ref"
    pkt "option fall-through"
    return ;;
  esac
  tries=0
  while :; do
    cur=$(git rev-parse -q --verify "$ref" 2>/dev/null) || cur=
    expect=\${cur:-$zero}
    if [ "$cur" = "$new" ]; then
      pkt "ok $ref"
      return
    elif [ -z "$cur" ] || git merge-base --is-ancestor "$cur" "$new" >/dev/null 2>&1; then
      next=$new
    else
      if ! next=$(merge "$cur" "$new" "$strategy"); then
        pkt "ng $ref mkt could not merge the pushed notes ($strategy)"
        return
      fi
      big=$(oversized "$next" "$cur")
      if [ -n "$big" ]; then
        echo "mkt: refusing $ref: merging ($strategy) would make notes over $limit bytes:" >&2
        printf '%s\\n' "$big" >&2
        pkt "ng $ref merged notes over $limit bytes"
        return
      fi
    fi
    if git update-ref -m "mkt: push merged with $strategy" "$ref" "$next" "$expect" >/dev/null 2>&1; then
      [ "$next" = "$new" ] || echo "mkt: $ref merged ($strategy): $cur + $new -> $next" >&2
      pkt "ok $ref"
      return
    fi
    tries=$((tries + 1))
    if [ "$tries" -ge 50 ]; then
      pkt "ng $ref kept moving while the push was merged; try again"
      return
    fi
  done
}

while pkt_read >/dev/null; do :; done
pkt version=1
printf 0000
commands=
while line=$(pkt_read); do commands="$commands$line
"; done
printf '%s' "$commands" | while read -r old new ref; do
  [ -n "$ref" ] && handle "$old" "$new" "$ref" </dev/null
done
printf 0000
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
  installHook(hooks, 'proc-receive', procReceiveScript());
}

/**
 * Config given to the git that serves a push, through the environment: hooks are read from the
 * repository's own hooks directory whatever `core.hooksPath` the server user's ~/.gitconfig says.
 */
export function hookConfigEnv(gitDir: string, merges: ReadonlyMap<string, string> = new Map()): Record<string, string> {
  const entries: [string, string][] = [['core.hooksPath', join(gitDir, 'hooks')], ...notesMergeConfig(merges)];
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(entries.length) };
  entries.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return env;
}

/**
 * The config that hands a push's commands for these namespaces (namespace → strategy other than
 * manual) to the proc-receive hook and tells it each strategy, in git's own words.
 */
export function notesMergeConfig(merges: ReadonlyMap<string, string>): [string, string][] {
  const out: [string, string][] = [];
  for (const [ns, strategy] of merges) {
    out.push(['receive.procReceiveRefs', `refs/notes/${ns}`], [`notes.${ns}.mergeStrategy`, strategy]);
  }
  return out;
}
