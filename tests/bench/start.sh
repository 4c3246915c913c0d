#!/usr/bin/env bash
# Benchmark of `git pair start` against `git status --porcelain` on a clean generated
# 20,000-file repository, side by side in one hyperfine run (target: ratio <= 1.0).
#
#   tests/bench/start.sh [RUNS]      # default 30 timed runs each, after 5 warm-ups
#
# Environment: BENCH_DIR (default target/bench-fixtures; the repository is generated once with
# fixtures/make-big-repo.sh into $BENCH_DIR/big-20000 and reused), FILES (20000), GIT_PAIR
# (a prebuilt binary to time instead of building target/release/git-pair).
#
# Every timed start runs on the same state: hyperfine's --prepare deletes refs/pair/* first,
# so each start finds no unfinished run and `--replace` abandons nothing (what is timed is a
# first start on a clean tree: the check, the run's objects and ref, the HANDOFF view).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-30}
files=${FILES:-20000}
work=${BENCH_DIR:-$root/target/bench-fixtures}
repo=$work/big-$files
mkdir -p "$work"
command -v hyperfine > /dev/null || { echo "error: the benchmark needs hyperfine" >&2; exit 1; }

if [ -z "${GIT_PAIR:-}" ]; then
  cargo build --release --offline --quiet --manifest-path "$root/Cargo.toml"
  GIT_PAIR=$root/target/release/git-pair
fi
if [ ! -d "$repo/.git" ]; then
  echo "generating a $files-file repository in $repo…" >&2
  "$root/fixtures/make-big-repo.sh" "$repo" "$files"
fi

export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 HOME=$work/home
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
mkdir -p "$HOME"
reset=$work/reset-pair-refs.sh
cat > "$reset" <<'EOF'
#!/bin/sh
# Deletes every refs/pair/* ref of the repository in $1 (hyperfine --prepare).
git -C "$1" for-each-ref --format='delete %(refname)' refs/pair | git -C "$1" update-ref --stdin
EOF
chmod +x "$reset"

cd "$repo"
# Both must see a clean tree (HANDOFF.md is excluded through .git/info/exclude by the first start).
"$GIT_PAIR" start --task t --replace > /dev/null 2>&1
[ -z "$(git status --porcelain)" ] || { echo "error: $repo is not clean" >&2; exit 1; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
json=$(mktemp)
trap 'rm -f "$json"' EXIT
hyperfine -N --warmup 5 --runs "$runs" --export-json "$json" \
  --command-name 'git status --porcelain' 'git status --porcelain' \
  --command-name 'git pair start' --prepare "$reset $repo" "$GIT_PAIR start --task t --replace"
python3 - "$json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
git, ours = r["git status --porcelain"]["median"], r["git pair start"]["median"]
print(f"median  git status --porcelain  {git*1e3:7.1f} ms")
print(f"median  git pair start          {ours*1e3:7.1f} ms")
print(f"ratio   start / status          {ours/git:7.2f}   (target <= 1.0)")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
