#!/usr/bin/env bash
# Store benchmarks (issue 2), side by side in one run:
#   1. `git pair coder-done` on a run at round 1 vs the same command on a run at round 200
#      (appending must cost O(record), not O(run)): target ratio <= 1.2.
#   2. the clean-tree check vs `git status --porcelain` on a generated 20,000-file repository
#      (cargo bench --bench clean_check): target ratio <= 1.0.
# Usage: tests/bench/store.sh [ROUNDS]   (BENCH_DIR to keep the fixtures somewhere else)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-200}
work=${BENCH_DIR:-$root/target/bench-fixtures}
mkdir -p "$work"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin=$root/target/release/git-pair
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 HOME=$work/home
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
mkdir -p "$HOME"
reviewer='["sh", "-c", "cat >/dev/null; echo \"1. [bug] still wrong\"; echo VERDICT: CHANGES_REQUESTED"]'

make_run() { # dir rounds
  local dir=$1 n=$2
  rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
  git init -q -b main && echo seed > seed.txt && git add . && git commit -qm seed
  "$bin" start --task "benchmark run" --max-rounds 1000 >/dev/null
  for ((r = 1; r < n; r++)); do
    echo "$r" > work.txt
    "$bin" coder-done --summary "round $r" >/dev/null
    "$bin" review --reviewer-cmd "$reviewer" >/dev/null
  done
  echo "$n" > work.txt
  cd - >/dev/null
}

echo "building a run at round 1 and one at round $rounds…"
make_run "$work/run-1" 1
make_run "$work/run-$rounds" "$rounds"
records=$(git -C "$work/run-$rounds" ls-tree --name-only "$(git -C "$work/run-$rounds" for-each-ref --format='%(refname)' refs/pair/runs)":records | wc -l)

python3 - "$bin" "$work/run-1" "$work/run-$rounds" "$rounds" "$records" <<'PY'
import statistics, subprocess, sys, time
bin, small, big, rounds, records = sys.argv[1:6]
def once(d, i):
    t = time.perf_counter()
    subprocess.run([bin, "coder-done", "--summary", f"sample {i}"], cwd=d, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t
a, b = [], []
for i in range(40):           # interleaved, so machine load hits both alike
    a.append(once(small, i)); b.append(once(big, i))
ma, mb = statistics.median(a), statistics.median(b)
print(f"coder-done, median of 40 (interleaved):")
print(f"  at round 1                  {ma*1e3:8.2f} ms")
print(f"  at round {rounds} ({records} records) {mb*1e3:8.2f} ms")
print(f"  ratio round {rounds} / round 1     {mb/ma:8.2f}   (target <= 1.2)")
PY

echo
cargo bench --quiet --manifest-path "$root/Cargo.toml" --bench clean_check 2>/dev/null | tail -4
