#!/usr/bin/env bash
# Builds a run of N rounds with the real binary and a stub reviewer, in the exact shape the
# CLI writes: each round is `coder-done` then `review` (a reviewer that asks for changes with
# one finding), so a round stores a coder record, a dispatch, a review and its material.
# Usage: tests/bench/fixture_rounds.sh BIN N DIR   (DIR is replaced; prints the run id)
set -euo pipefail
bin=$1 n=$2 dir=$3
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
reviewer='["sh", "-c", "cat >/dev/null; echo \"1. [bug] still wrong\"; echo VERDICT: CHANGES_REQUESTED"]'
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
git init -q -b main && echo seed > seed.txt && git add . && git commit -qm seed
"$bin" start --task "benchmark run of $n rounds" --max-rounds 100000 >/dev/null
for ((r = 1; r <= n; r++)); do
  echo "$r" > work.txt
  "$bin" coder-done --summary "round $r: changed work.txt" >/dev/null
  "$bin" review --reviewer-cmd "$reviewer" >/dev/null
  if (( r % 100 == 0 )); then echo "  … round $r" >&2; fi
done
git for-each-ref --format='%(refname:lstrip=3)' refs/pair/runs/
