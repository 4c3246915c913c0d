#!/usr/bin/env bash
# Team-gate benchmark (issue "prove in CI that what is merged was reviewed"):
#   `git pair verify origin/main..HEAD` over COMMITS commits in a CI-like clone holding RUNS
#   runs, side by side with `git log --notes=pair` over the same range; medians and ratio.
#   Two cases: the notes were fetched (the normal case: each commit's note names its run,
#   confirmed in the run's records), and they were not (every run indexed once by its
#   approved snapshots). Wall-clock and CPU medians side by side. Target: ratio <= 3 with
#   the notes fetched; the no-notes index is reported.
# Usage: tests/bench/verify.sh [COMMITS [RUNS [ITERATIONS]]]   (defaults 100 1000 15)
# The fixture is generated once through the library (benches/verify.rs) under
# target/bench-fixtures/verify-<COMMITS>c-<RUNS>r/; delete it to regenerate.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export COMMITS=${1:-${COMMITS:-100}} RUNS=${2:-${RUNS:-1000}} ITERATIONS=${3:-${ITERATIONS:-15}}
echo "release build (cargo bench profile)…"
cargo bench --quiet --offline --manifest-path "$root/Cargo.toml" --bench verify --no-run 2>/dev/null ||
  cargo bench --quiet --manifest-path "$root/Cargo.toml" --bench verify --no-run
cargo bench --quiet --offline --manifest-path "$root/Cargo.toml" --bench verify 2>&1 |
  grep -v '^\(running\|test result\)'
