#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] [TARGET...]: runs git pair's libFuzzer targets for SECONDS each
# (default 600), one after another at the lowest CPU priority, and prints one table row per
# target: how long it ran, how many inputs it executed, the coverage it reached, the corpus
# it ended with, and whether it found a crash.
#
# What each target feeds and checks is written at the top of fuzz/fuzz_targets/<target>.rs.
# Seeds: fuzz/corpus/<target>/ (committed, read-only here); what a run discovers goes to
# fuzz/target/corpus-work/<target>/ and is reused by the next run. A crash leaves its input
# in fuzz/artifacts/<target>/ and the run's log in fuzz/target/logs/<target>.log; replay it
# with `RUSTC_BOOTSTRAP=1 cargo fuzz run -s none -a <target> fuzz/artifacts/<target>/<file>`.
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). cargo-fuzz passes nightly-only
# flags; on a stable toolchain RUSTC_BOOTSTRAP=1 (set below) lets it. Built without a
# sanitizer (`-s none`: the code under test is safe Rust) and with debug assertions (`-a`),
# so an integer overflow is a crash. Not part of CI: fuzzing is run on purpose.
set -euo pipefail

seconds=${1:-600}
shift || true
cd "$(dirname "$0")"
all=(review_answer review_json cost_claude cost_codex record_decode manifest_project manifest_stored tombstone_ref secrets config_values agent_stop)
targets=("${@:-${all[@]}}")
export RUSTC_BOOTSTRAP=1
flags=(-s none -a)

nice -n 19 cargo fuzz build "${flags[@]}" >&2
mkdir -p target/logs
rows=()
failed=0
for t in "${targets[@]}"; do
    work=target/corpus-work/$t
    log=target/logs/$t.log
    mkdir -p "$work" "artifacts/$t"
    before=$(find "artifacts/$t" -type f | wc -l)
    dict=()
    [[ -f dict/$t.dict ]] && dict=(-dict="dict/$t.dict")
    echo "fuzzing $t for ${seconds}s (log: fuzz/$log)" >&2
    start=$(date +%s)
    status=ok
    # The first corpus directory receives new inputs; the committed seeds are only read.
    nice -n 19 cargo fuzz run "${flags[@]}" "$t" "$work" "corpus/$t" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        "${dict[@]}" >"$log" 2>&1 || status=CRASH
    took=$(($(date +%s) - start))
    crashes=$(($(find "artifacts/$t" -type f | wc -l) - before))
    [[ $status == CRASH ]] && failed=1
    stat() { grep -o "^stat::$1: *[0-9]*" "$log" | tail -1 | grep -o '[0-9]*$' || echo '?'; }
    # The last progress line: "#N ... cov: C ft: F corp: E/SIZE ...".
    last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
    field() { sed -nE "s/.* $1: ([^ ]+).*/\1/p" <<<"$last"; }
    rows+=("$(printf '%-17s %7s %12s %8s %7s %7s %14s %7s  %s' "$t" "$took" \
        "$(stat number_of_executed_units)" "$(stat average_exec_per_sec)" \
        "$(field cov)" "$(field ft)" "$(field corp)" "$crashes" "$status")")
done

printf '%-17s %7s %12s %8s %7s %7s %14s %7s  %s\n' target seconds executions exec/s \
    cov features "corpus(n/size)" crashes result
for row in "${rows[@]}"; do
    echo "$row"
done
echo "cov: code edges reached; features: libFuzzer's finer coverage; corpus: inputs kept."
exit "$failed"
