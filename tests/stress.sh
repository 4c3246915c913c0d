#!/usr/bin/env bash
# The stress proofs (not part of the default test run): 16 concurrent writers × 20 records on
# one run; SIGKILL at 50 random instants across coder-done, review, finish, push, pull and
# checkpoint create; three clones converging over 1,000 random steps.
# Usage: tests/stress.sh        (STRESS_SEED, STRESS_KILLS, STRESS_STEPS to vary)
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --locked --test it -- --ignored --test-threads=1 stress_ "$@"
