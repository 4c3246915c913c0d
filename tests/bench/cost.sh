#!/usr/bin/env bash
# Benchmark of git pair's session pricing against ccusage, side by side in one run.
#
#   tests/bench/cost.sh            # generate (or reuse) a >= 1 GiB corpus, compare, measure
#
# Environment: BENCH_DIR (default ${TMPDIR:-/tmp}/git-pair-cost-bench), CORPUS_BYTES
# (1100000000), SEED (42), RUNS (5, median reported), CCUSAGE_VERSION (20.0.24).
#
# What it does:
#  1. builds the bench driver (benches/cost.rs) in release mode;
#  2. generates a log corpus shaped like real ones (thousands of Claude Code session files,
#     median ~100 KB, a few of tens of MB and one of ~100 MB, subagent dirs, sidechain
#     replays, Codex rollouts) under $BENCH_DIR/corpus, reused while CORPUS_BYTES/SEED agree;
#  3. installs ccusage and its native binary at the same version with npm in $BENCH_DIR/npm;
#  4. prices sessions with both, cold processes and no cache: ours is
#     `target/release/git-pair cost --session ID --json` when that binary has the command,
#     else the bench driver's `price ID` (the same API call); ccusage is
#     `ccusage session --id ID --offline --json` (native binary, CLAUDE_CONFIG_DIR=corpus);
#  5. measures the cold full-parse throughput of the ~100 MB session file.
# Exit status 1 when a target is missed (>= 10x faster, <= 0.5% apart without replays,
# >= 300 MB/s, budget-check warm <= 20 ms).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BENCH_DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/git-pair-cost-bench}
CORPUS_BYTES=${CORPUS_BYTES:-1100000000}
SEED=${SEED:-42}
RUNS=${RUNS:-5}
CCUSAGE_VERSION=${CCUSAGE_VERSION:-20.0.24}
CORPUS=$BENCH_DIR/corpus
mkdir -p "$BENCH_DIR"

command -v jq > /dev/null || { echo "error: the benchmark needs jq (apt-get install jq)" >&2; exit 1; }

log() { printf '%s\n' "$*" >&2; }

# 1. The bench driver.
log "building the bench driver (release)…"
driver=$(cd "$ROOT" && cargo bench --bench cost --no-run --message-format=json 2>/dev/null \
  | grep '"kind":\["bench"\]' | grep '"name":"cost"' \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
[ -x "$driver" ] || { log "error: could not build benches/cost.rs"; exit 1; }

# 2. The corpus.
stamp="$CORPUS_BYTES $SEED $(sha1sum "$ROOT/benches/cost.rs" | cut -c1-12)"
if [ ! -f "$CORPUS/picks.json" ] || [ "$(cat "$CORPUS/stamp" 2>/dev/null)" != "$stamp" ]; then
  log "generating a $CORPUS_BYTES-byte corpus in $CORPUS…"
  rm -rf "$CORPUS"
  mkdir -p "$CORPUS"
  "$driver" gen "$CORPUS" "$CORPUS_BYTES" "$SEED" > "$CORPUS/picks.json.tmp"
  mv "$CORPUS/picks.json.tmp" "$CORPUS/picks.json"
  echo "$stamp" > "$CORPUS/stamp"
fi
pick() { jq -r ".$1" "$CORPUS/picks.json"; }

# 3. ccusage (npm package + native binary of the same version).
CCUSAGE=$BENCH_DIR/npm/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage
if [ ! -x "$CCUSAGE" ] || ! grep -q "\"version\": \"$CCUSAGE_VERSION\"" "$BENCH_DIR/npm/node_modules/ccusage/package.json" 2>/dev/null; then
  log "installing ccusage@$CCUSAGE_VERSION…"
  mkdir -p "$BENCH_DIR/npm"
  npm install --prefix "$BENCH_DIR/npm" --no-audit --no-fund --silent \
    "ccusage@$CCUSAGE_VERSION" "@ccusage/ccusage-linux-x64@$CCUSAGE_VERSION" >&2
  chmod +x "$CCUSAGE"
fi

export CLAUDE_CONFIG_DIR=$CORPUS/claude CODEX_HOME=$CORPUS/codex

# 4. Ours: the real command once the CLI has it, else the driver (same API, same JSON).
GIT_PAIR=$ROOT/target/release/git-pair
REPO=$BENCH_DIR/repo
if [ -x "$GIT_PAIR" ] && "$GIT_PAIR" cost --help 2>/dev/null | grep -q -- '--session'; then
  rm -rf "$REPO" && git init -q "$REPO"
  ours_label="git-pair cost --session ID --json"
  ours() { rm -rf "$REPO/.git/pair/cache"; (cd "$REPO" && "$GIT_PAIR" cost --session "$1" --json); }
else
  ours_label="bench driver: price_session (no cache)"
  ours() { "$driver" price "$1"; }
fi
theirs() { "$CCUSAGE" session --id "$1" --offline --json; }

# Median wall time of RUNS cold runs of "$@" (after one warm-up for the page cache), in s.
median_secs() {
  "$@" > /dev/null
  local times=() i start end
  for ((i = 0; i < RUNS; i++)); do
    start=$EPOCHREALTIME
    "$@" > /dev/null
    end=$EPOCHREALTIME
    times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }')")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{ t[NR] = $1 } END { print t[int((NR + 1) / 2)] }'
}

files=$(find "$CORPUS" -type f -name '*.jsonl' | wc -l)
bytes=$(pick bytes)
log ""
log "corpus: $files files, $((bytes / 1048576)) MiB; ours = $ours_label; ccusage $CCUSAGE_VERSION (native)"
fail=0
printf '| session | what | size | ours s | ccusage s | speed-up | ours $ | ccusage $ | apart |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
for which in typical large replayed; do
  id=$(pick "$which")
  size=$(find "$CLAUDE_CONFIG_DIR/projects" -path "*$id*" -name '*.jsonl' -printf '%s\n' | awk '{ s += $1 } END { printf "%.1f MB", s / 1e6 }')
  ours_usd=$(ours "$id" | jq -r '.total_usd')
  theirs_usd=$(theirs "$id" | jq -r '.totalCost')
  ours_s=$(median_secs ours "$id")
  theirs_s=$(median_secs theirs "$id")
  speedup=$(awk -v a="$ours_s" -v b="$theirs_s" 'BEGIN { printf "%.0f", b / a }')
  apart=$(awk -v a="$ours_usd" -v b="$theirs_usd" 'BEGIN { d = (a - b) / b * 100; printf "%.3f%%", d }')
  case $which in
    typical) what="median-size session with subagents, no replays" ;;
    large) what="~100 MB session with subagents, no replays" ;;
    replayed) what="sidechain replays (we count once, ccusage twice)" ;;
  esac
  printf '| %s | %s | %s | %s | %s | %sx | %.6f | %.6f | %s |\n' \
    "${id:0:8}" "$what" "$size" "$ours_s" "$theirs_s" "$speedup" "$ours_usd" "$theirs_usd" "$apart"
  if awk -v s="$speedup" 'BEGIN { exit !(s < 10) }'; then
    log "MISS: $which: ours is only ${speedup}x faster"
    fail=1
  fi
  if [ "$which" != replayed ] && awk -v a="$ours_usd" -v b="$theirs_usd" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d; exit !(d > 0.005) }'; then
    log "MISS: $which: dollar figures $apart apart"
    fail=1
  fi
done

# budget-check for a run that recorded the large session (as its coder session, with the
# run's window covering every line of it), cold: the parse cache is dropped before each run.
if [ "$ours_label" = "git-pair cost --session ID --json" ]; then
  id=$(pick large)
  brepo=$BENCH_DIR/budget-repo
  rm -rf "$brepo" && git init -q -b main "$brepo"
  (cd "$brepo" && git -c user.name=b -c user.email=b@b commit -q --allow-empty -m seed \
    && GIT_PAIR_NOW=0 "$GIT_PAIR" start --task bench --budget-usd 100000 > /dev/null \
    && "$GIT_PAIR" coder-done --summary bench --session "$id" > /dev/null)
  budget() { rm -rf "$brepo/.git/pair/cache/cost"; (cd "$brepo" && "$GIT_PAIR" budget-check --json); }
  ours_usd=$(budget | jq -r '.spent')
  theirs_usd=$(theirs "$id" | jq -r '.totalCost')
  ours_s=$(median_secs budget)
  theirs_s=$(median_secs theirs "$id")
  speedup=$(awk -v a="$ours_s" -v b="$theirs_s" 'BEGIN { printf "%.0f", b / a }')
  printf '| %s | git pair budget-check (run recorded it) vs ccusage session | - | %s | %s | %sx | %.4f | %.6f | %s |\n' \
    "${id:0:8}" "$ours_s" "$theirs_s" "$speedup" "$ours_usd" "$theirs_usd" \
    "$(awk -v a="$ours_usd" -v b="$theirs_usd" 'BEGIN { printf "%.3f%%", (a - b) / b * 100 }')"
  if awk -v s="$speedup" 'BEGIN { exit !(s < 10) }'; then
    log "MISS: budget-check is only ${speedup}x faster"
    fail=1
  fi
  # The same, warm: the cache as the previous budget-check left it, nothing appended since
  # (what every round but the first sees; tests/bench/budget.sh also times a few KB appended).
  warm() { (cd "$brepo" && "$GIT_PAIR" budget-check --json); }
  warm_usd=$(warm | jq -r '.spent')
  warm_s=$(median_secs warm)
  printf '| %s | git pair budget-check, warm (nothing appended) | - | %s | - | - | %.4f | - | - |\n' \
    "${id:0:8}" "$warm_s" "$warm_usd"
  if [ "$warm_usd" != "$ours_usd" ]; then
    log "MISS: budget-check warm says \$$warm_usd, cold \$$ours_usd"
    fail=1
  fi
  if awk -v s="$warm_s" 'BEGIN { exit !(s > 0.020) }'; then
    log "MISS: budget-check warm takes ${warm_s} s > 20 ms"
    fail=1
  fi
fi

# Codex: ccusage has no --id for codex; compare against its per-session list.
cid=$(pick codex)
ours_codex=$(ours "$cid" | jq -r '.total_usd')
theirs_codex=$("$CCUSAGE" codex session --offline --json | jq -r --arg id "$cid" '.sessions[] | select(.sessionId | endswith($id)) | .costUSD')
printf '| %s | codex rollout (ccusage: whole codex report) | - | - | - | - | %.6f | %.6f | %s |\n' \
  "${cid:0:8}" "$ours_codex" "$theirs_codex" \
  "$(awk -v a="$ours_codex" -v b="$theirs_codex" 'BEGIN { printf "%.3f%%", (a - b) / b * 100 }')"

# 5. Cold full parse of the ~100 MB session file.
main=$(pick large_main)
tp=$("$driver" throughput "$main" "$RUNS")
mbs=$(jq -r '.mb_per_s' <<< "$tp")
printf '\ncold full parse of %s (%s MB): best of %s runs %s s = %s MB/s\n' \
  "$(basename "$main")" "$(jq -r '.mb' <<< "$tp")" "$RUNS" "$(jq -r '.best_secs' <<< "$tp")" "$mbs"
if [ "$mbs" -lt 300 ]; then
  log "MISS: parse throughput $mbs MB/s < 300 MB/s"
  fail=1
fi
exit $fail
