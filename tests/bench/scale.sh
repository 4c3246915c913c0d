#!/usr/bin/env bash
# Many runs and remotes (issue 26), side by side with git in one run, release build, medians of
# interleaved runs, peak memory from /usr/bin/time (the command and every child it waited for):
#   a. `list --json` with RUNS runs vs `git for-each-ref refs/pair/runs`: warm (the summary
#      cache written) <= 1.5x, cold <= 3x, under 100 MiB. "Cold" is the first listing in a
#      fresh clone: no summary cache, every manifest read (the OS page cache is not dropped;
#      for-each-ref is measured alike). Also `list --limit 20`.
#   b. `start` (then abandoned), `status`, `hook pre-commit --gate` and `hook agent-stop` at
#      RUNS runs vs 10 runs, each repository having pulled from three remotes that hold some
#      of the runs: flat, <= 1.2x.
#   c. `push` of every run to an empty remote vs `git push` of the same refs (<= 1.3x), the
#      same push again with nothing new vs git's with nothing to send (<= 1.2x), peak memory
#      vs git push's (<= 1.3x).
# The fixtures (tests/bench/make_runs.py: the CLI's exact shape through git fast-import) are
# built once under target/bench-fixtures/scale-RUNS.
# Usage: tests/bench/scale.sh [RUNS [ITERATIONS [push,list,flat]]]   (default 100000 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cargo build --release --locked --quiet --manifest-path "$root/Cargo.toml"
exec python3 "$root/tests/bench/scale.py" "${1:-100000}" "${2:-3}" "${3:-push,list,flat}"
