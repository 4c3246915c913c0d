#!/usr/bin/env bash
# Benchmark of `git pair budget-check` (run before every round) on a run whose coder session
# carries ~100 MB of Claude Code logs (a main log plus subagents), three ways side by side in
# one hyperfine run:
#   cold          no cache: `.git/pair/cache/cost` is removed before each run
#   warm          nothing appended since the last measurement
#   after append  a few KB of new turns appended to the main log before each run
# Target: warm <= 20 ms.
#
#   tests/bench/budget.sh [RUNS]        # default 10 runs of each, after one warm-up
#
# Environment: BENCH_DIR (default target/bench-fixtures/budget; the session is generated once
# by the bench driver's `session` command and reused), SESSION_BYTES (100000000),
# APPEND_BYTES (4096), GIT_PAIR (a prebuilt binary instead of target/release/git-pair).
# Every "after append" run grows the main log by APPEND_BYTES (the corpus is reused; remove
# BENCH_DIR to start afresh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-10}
work=${BENCH_DIR:-$root/target/bench-fixtures/budget}
bytes=${SESSION_BYTES:-100000000}
append=${APPEND_BYTES:-4096}
mkdir -p "$work"
for tool in hyperfine jq; do
  command -v "$tool" > /dev/null || { echo "error: the benchmark needs $tool" >&2; exit 1; }
done

if [ -z "${GIT_PAIR:-}" ]; then
  cargo build --release --offline --quiet --manifest-path "$root/Cargo.toml"
  GIT_PAIR=$root/target/release/git-pair
fi
driver=$(cd "$root" && cargo bench --offline --bench cost --no-run --message-format=json 2>/dev/null \
  | grep '"kind":\["bench"\]' | grep '"name":"cost"' \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
[ -x "$driver" ] || { echo "error: could not build benches/cost.rs" >&2; exit 1; }

if [ ! -f "$work/session.json" ] || [ "$(jq -r .requested "$work/session.json")" != "$bytes" ]; then
  echo "generating a $bytes-byte Claude session in $work/corpus…" >&2
  rm -rf "$work/corpus"
  "$driver" session "$work/corpus" "$bytes" 42 | jq -c --argjson n "$bytes" '. + {requested: $n}' \
    > "$work/session.json.tmp"
  mv "$work/session.json.tmp" "$work/session.json"
fi
id=$(jq -r .id "$work/session.json")
main=$(jq -r .main "$work/session.json")

export CLAUDE_CONFIG_DIR=$work/corpus/claude CODEX_HOME=$work/corpus/codex
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 HOME=$work/home
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
mkdir -p "$HOME"
repo=$work/repo
rm -rf "$repo" && git init -q -b main "$repo"
git -C "$repo" commit -q --allow-empty -m seed
# Started at the epoch, so the run's window holds every line of the session.
(cd "$repo" && GIT_PAIR_NOW=0 "$GIT_PAIR" start --task bench --budget-usd 100000 > /dev/null \
  && "$GIT_PAIR" coder-done --summary bench --session "$id" > /dev/null)

check() { "$GIT_PAIR" -C "$repo" budget-check --json | jq -r .spent; }
rm -rf "$repo/.git/pair/cache/cost"
cold_usd=$(check)
warm_usd=$(check)
[ "$cold_usd" = "$warm_usd" ] || { echo "error: cold \$$cold_usd != warm \$$warm_usd" >&2; exit 1; }
size=$(find "$CLAUDE_CONFIG_DIR/projects" -path "*$id*" -name '*.jsonl' -printf '%s\n' | awk '{ s += $1 } END { printf "%.1f", s / 1e6 }')
echo "session $id: $size MB of logs, \$$cold_usd; load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

json=$(mktemp)
trap 'rm -f "$json"' EXIT
hyperfine -N --warmup 1 --runs "$runs" --export-json "$json" \
  --command-name cold --prepare "rm -rf $repo/.git/pair/cache/cost" "$GIT_PAIR -C $repo budget-check" \
  --command-name warm --prepare "true" "$GIT_PAIR -C $repo budget-check" \
  --command-name "after append" --prepare "$driver append $main $append" "$GIT_PAIR -C $repo budget-check"
python3 - "$json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
for name in ("cold", "warm", "after append"):
    print(f"median  budget-check {name:<13} {r[name]['median']*1e3:8.1f} ms")
print(f"warm target <= 20 ms: {'met' if r['warm']['median'] <= 0.020 else 'MISSED'}")
PY
echo "spent after the appends: \$$(check); load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
