#!/usr/bin/env bash
# Every benchmark, side by side with its peer (git itself; ccusage where it is installed), on
# generated inputs, then one table of the figures each promise is judged by. Each benchmark
# takes medians over repeated, interleaved runs and states its target; its whole output is
# kept in target/bench-results/<name>.log.
#
#   tests/bench/all.sh          # everything: 20,000-file repository, 1 GiB log corpus,
#                               # 1,000, 10,000 and 100,000 runs (fixtures are generated once, reused)
#   QUICK=1 tests/bench/all.sh  # smaller inputs (2,000 and 10,000 runs, 100 MB corpus), for a quick look
#
# Not part of CI (minutes to hours on a small machine). Needs hyperfine for the hooks and start
# benchmarks, npm for ccusage (skipped without it), the pinned CLIs for the reviewer one
# (npm ci --prefix tests/e2e).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=$root/target/bench-results
mkdir -p "$out"
quick=${QUICK:-}
if [ -n "$quick" ]; then runs_many=2000; corpus=100000000; scale_runs=10000; else runs_many=10000; corpus=1100000000; scale_runs=100000; fi

cargo build --release --locked --quiet || exit 1

declare -a names=()
run() { # name command…
  local name=$1; shift
  names+=("$name")
  echo "=== $name: $*" >&2
  ( "$@" ) > "$out/$name.log" 2>&1
  echo "$?" > "$out/$name.status"
}

run store        bash tests/bench/store.sh 200
run rounds       bash tests/bench/rounds.sh $([ -n "$quick" ] && echo 200 || echo 1000)
run clean_check  cargo bench --locked --quiet --bench clean_check
run start        bash tests/bench/start.sh 20
run packet       cargo bench --locked --quiet --bench packet
run hooks        bash tests/bench/hooks.sh 20
[ -n "$quick" ] || run hooks-80k env FILES=80000 bash tests/bench/hooks.sh 20
run secrets      bash tests/bench/secrets.sh 11
run cost         env CORPUS_BYTES=$corpus RUNS=3 bash tests/bench/cost.sh
run budget       bash tests/bench/budget.sh
run sync-1000    env RUNS=1000 RECORDS=10 ITERATIONS=5 cargo bench --locked --quiet --bench sync
run sync-many    env RUNS=$runs_many RECORDS=2 ITERATIONS=3 cargo bench --locked --quiet --bench sync
run runs-many    env RUNS=$runs_many RECORDS=2 ITERATIONS=11 cargo bench --locked --quiet --bench runs
run verify       bash tests/bench/verify.sh 1000 1000 9
run reviewer     bash tests/bench/reviewer.sh 11
run scale        bash tests/bench/scale.sh $scale_runs 3

echo
printf '%-12s %-6s %s\n' "benchmark" "target" "figures (medians; ratio = ours / peer)"
printf '%-12s %-6s %s\n' "---------" "------" "--------------------------------------"
for name in "${names[@]}"; do
  status=$(cat "$out/$name.status" 2>/dev/null || echo "?")
  case $status in 0) verdict=met ;; *) verdict=MISSED ;; esac
  first=1
  # The lines each benchmark states its figures and targets on.
  grep -iE 'ratio|target|median|x faster|ms  |MB/s|KiB' "$out/$name.log" | grep -vE '^\s*$' | tail -n 12 |
  while IFS= read -r line; do
    if [ $first = 1 ]; then printf '%-12s %-6s %s\n' "$name" "$verdict" "$line"; first=0
    else printf '%-12s %-6s %s\n' "" "" "$line"; fi
  done
done
echo
echo "Whole outputs: $out/<name>.log"
