#!/usr/bin/env bash
# Reviewer-overhead benchmark (issue 23): what `git pair review` adds to the real pinned
# `claude -p` and `codex exec` (tests/e2e/package.json) answering the same prompt from the
# e2e tests' loopback model server, offline. Interleaved, medians; target: at most 50 ms
# added to the CLI's own time. Details in benches/reviewer.rs.
# Usage: tests/bench/reviewer.sh [ITERATIONS]   (default 11; VENDORS="claude" or "codex")
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export ITERATIONS=${1:-${ITERATIONS:-11}}
if [ ! -x "$root/tests/e2e/node_modules/.bin/claude" ] || [ ! -x "$root/tests/e2e/node_modules/.bin/codex" ]; then
  echo "the pinned CLIs are missing: npm ci --prefix tests/e2e --no-audit --no-fund" >&2
  exit 2
fi
echo "release build (cargo bench profile)…"
cargo bench --quiet --locked --manifest-path "$root/Cargo.toml" --bench reviewer --no-run
cargo bench --quiet --locked --manifest-path "$root/Cargo.toml" --bench reviewer 2>&1 |
  grep -v '^\(running\|test result\)'
