#!/usr/bin/env bash
# Team-gate benchmark (issue "prove in CI that what is merged was reviewed"):
#   `git pair verify origin/main..HEAD` over COMMITS commits in a CI-like clone holding RUNS
#   runs, side by side with `git log` over the same range; medians and ratios, both cases in
#   one run. Two cases: the notes were fetched (the normal case: each commit's note names its
#   run, confirmed in the run's records; against `git log --notes=pair`), and they were not
#   (every run indexed once by its approved snapshots; against plain `git log`). Wall-clock
#   and CPU medians side by side. Targets: wall ratio <= 1.5 with notes, <= 2 without.
# Usage: tests/bench/verify.sh [COMMITS [RUNS [ITERATIONS]]]   (defaults 1000 1000 9)
# The fixture is generated once through the library (benches/verify.rs) under
# target/bench-fixtures/verify-<COMMITS>c-<RUNS>r/; delete it to regenerate.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export COMMITS=${1:-${COMMITS:-1000}} RUNS=${2:-${RUNS:-1000}} ITERATIONS=${3:-${ITERATIONS:-9}}
echo "release build (cargo bench profile)…"
cargo bench --quiet --offline --manifest-path "$root/Cargo.toml" --bench verify --no-run 2>/dev/null ||
  cargo bench --quiet --manifest-path "$root/Cargo.toml" --bench verify --no-run
cargo bench --quiet --offline --manifest-path "$root/Cargo.toml" --bench verify 2>&1 |
  grep -v '^\(running\|test result\)'
