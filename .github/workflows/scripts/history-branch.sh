#!/usr/bin/env bash
# The run history kept in a git branch (k6pack-history by default): no service, the
# repository itself. `k6pack history` and `--history DIR` read and append the folder;
# this script brings the branch into DIR and pushes what was appended.
#
#   history-branch.sh checkout DIR   the branch's files in DIR (a git worktree); a new,
#                                    empty orphan branch when the remote has none yet
#   history-branch.sh push DIR MSG   commit DIR and push it; when the branch moved
#                                    meanwhile (another job appended), rebase onto it
#                                    first: the history's .gitattributes merges its
#                                    .jsonl files by union, so appends never conflict
#
# Environment: HISTORY_BRANCH (default k6pack-history), HISTORY_REMOTE (default origin).
# A push needs `contents: write`; a pull request only checks out (read).
set -euo pipefail

branch="${HISTORY_BRANCH:-k6pack-history}"
remote="${HISTORY_REMOTE:-origin}"

usage() {
  echo "usage: $0 checkout DIR | push DIR MESSAGE" >&2
  exit 2
}

checkout() {
  local dir="$1"
  if git fetch --quiet --depth=200 "$remote" "+refs/heads/$branch:refs/remotes/$remote/$branch" 2>/dev/null; then
    git worktree add --quiet -B "$branch" "$dir" "$remote/$branch"
    echo "history: $branch checked out in $dir ($(git -C "$dir" rev-list --count HEAD) commits)"
  else
    git worktree add --quiet --detach "$dir"
    git -C "$dir" checkout --quiet --orphan "$branch"
    git -C "$dir" rm -rf --quiet . >/dev/null 2>&1 || true
    git -C "$dir" clean -fdxq
    echo "history: no $branch on $remote yet: a new, empty one in $dir"
  fi
}

push() {
  local dir="$1" message="$2"
  git -C "$dir" add -A
  if git -C "$dir" diff --cached --quiet; then
    echo "history: nothing new in $dir"
    return 0
  fi
  git -C "$dir" -c user.name="${GIT_AUTHOR_NAME:-k6pack}" -c user.email="${GIT_AUTHOR_EMAIL:-k6pack@users.noreply.github.com}" \
    commit --quiet -m "$message"
  for attempt in 1 2 3; do
    if git -C "$dir" push --quiet "$remote" "HEAD:refs/heads/$branch"; then
      echo "history: pushed to $branch"
      return 0
    fi
    echo "history: $branch moved (attempt $attempt): rebasing onto it"
    git -C "$dir" fetch --quiet "$remote" "+refs/heads/$branch:refs/remotes/$remote/$branch"
    git -C "$dir" -c user.name=k6pack -c user.email=k6pack@users.noreply.github.com rebase --quiet "$remote/$branch"
  done
  echo "history: could not push to $branch after 3 attempts" >&2
  return 1
}

case "${1:-}" in
  checkout) [ $# -eq 2 ] || usage; checkout "$2" ;;
  push) [ $# -eq 3 ] || usage; push "$2" "$3" ;;
  *) usage ;;
esac
