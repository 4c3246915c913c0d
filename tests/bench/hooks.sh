#!/usr/bin/env bash
# Hook benchmarks (issue "Gates"), side by side in one run on a generated 20,000-file
# repository (fixtures/make-big-repo.sh), release build, medians of interleaved runs:
#   a. `git commit` of a one-line change with the pre-commit hook installed (`--gate`, a run
#      active and approved, the staged tree = the approved snapshot) vs the same commit without
#      hooks: target <= +25 ms. Also shown: with all three hooks (commit-msg adds trailers,
#      post-commit writes the note), for information.
#   b. `git pair hook pre-commit --gate` alone vs `git status --porcelain`: target <= 0.5x.
#   c. `git pair hook agent-stop` with a run active (next_action finish: the work tree is
#      compared with the approved snapshot) vs `git status --porcelain`: target <= 1.0x; and
#      with no run at all: target a few ms.
# Timing is a small Python loop (the Stop hook needs stdin, which the packaged hyperfine 1.15
# cannot feed); runs are interleaved so machine load hits every command alike.
# Usage: tests/bench/hooks.sh [RUNS]   (BENCH_DIR to keep the fixtures somewhere else)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-30}
work=${BENCH_DIR:-$root/target/bench-fixtures}/hooks
mkdir -p "$work"
cargo build --release --quiet --offline --manifest-path "$root/Cargo.toml"
bin=$root/target/release/git-pair
# The hooks call `git pair`: put the release binary on PATH as git-pair, first.
mkdir -p "$work/bin" && ln -sf "$bin" "$work/bin/git-pair"
export PATH=$work/bin:$PATH
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 HOME=$work/home LC_ALL=C
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
mkdir -p "$HOME"
approve='["sh", "-c", "cat >/dev/null; echo VERDICT: APPROVED"]'

echo "building the 20,000-file repositories…"
bash "$root/fixtures/make-big-repo.sh" "$work/plain" >/dev/null
rm -rf "$work/gated" "$work/all" "$work/norun"
cp -a "$work/plain" "$work/gated"
cp -a "$work/plain" "$work/norun"
change() { echo "// one more line" >>src/mod017/sub3/file08650.rs; }
# plain: the one-line change staged, no hooks.
(cd "$work/plain" && change && git add -A)
# gated: a run active and approved on the change, staged; hooks installed with --gate.
(
  cd "$work/gated"
  git-pair start --task "benchmark the hooks" >/dev/null
  change
  git-pair coder-done --summary "one line" >/dev/null
  git-pair review --reviewer-cmd "$approve" >/dev/null
  git add -A
  git-pair hooks install --gate >/dev/null
  test "$(git-pair status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["next_action"])')" = finish
  git-pair gate >/dev/null
)
# all: the same, for the whole hook set; gated keeps only the pre-commit shim.
cp -a "$work/gated" "$work/all"
rm "$work/gated/.git/hooks/commit-msg" "$work/gated/.git/hooks/post-commit"
# norun: no run, no hooks (the Stop hook's cheap path).
(cd "$work/norun" && change)

python3 - "$bin" "$work" "$runs" <<'PY'
import statistics, subprocess, sys, time
bin, work, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
stop = b'{"session_id":"s","hook_event_name":"Stop","stop_hook_active":false}'

def timed(argv, cwd, stdin=None, check=True):
    t = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t
    if check and p.returncode != 0:
        sys.exit(f"{argv} failed in {cwd}: {p.stderr.decode()}")
    return elapsed, p

def commit(repo):
    t, _ = timed(["git", "commit", "-q", "-m", "one more line"], f"{work}/{repo}")
    subprocess.run(["git", "reset", "-q", "--soft", "HEAD~1"], cwd=f"{work}/{repo}", check=True)
    return t

# Sanity: the Stop hook decides without blocking (nothing changed since the approval), and
# the gated commit really runs the gate (a commit of another tree is refused).
_, p = timed([bin, "hook", "agent-stop"], f"{work}/gated", stop)
assert p.stdout == b"", p.stdout
with open(f"{work}/gated/unreviewed.txt", "w") as f:
    f.write("x\n")
subprocess.run(["git", "add", "unreviewed.txt"], cwd=f"{work}/gated", check=True)
_, p = timed(["git", "commit", "-q", "-m", "x"], f"{work}/gated", check=False)
assert p.returncode == 1 and b"unreviewed.txt (added)" in p.stderr, p.stderr
subprocess.run(["git", "rm", "-q", "-f", "unreviewed.txt"], cwd=f"{work}/gated", check=True)

samples = {k: [] for k in ["plain", "gated", "all", "pre", "status", "stop", "stop_norun", "status_norun"]}
for i in range(runs):
    samples["plain"].append(commit("plain"))
    samples["gated"].append(commit("gated"))
    samples["all"].append(commit("all"))
    samples["pre"].append(timed([bin, "hook", "pre-commit", "--gate"], f"{work}/gated")[0])
    samples["status"].append(timed(["git", "status", "--porcelain"], f"{work}/gated")[0])
    samples["stop"].append(timed([bin, "hook", "agent-stop"], f"{work}/gated", stop)[0])
    samples["stop_norun"].append(timed([bin, "hook", "agent-stop"], f"{work}/norun", stop)[0])
    samples["status_norun"].append(timed(["git", "status", "--porcelain"], f"{work}/norun")[0])
m = {k: statistics.median(v) * 1e3 for k, v in samples.items()}

def verdict(ok):
    return "ok" if ok else "OVER TARGET"

print(f"medians of {runs} interleaved runs, 20,000-file repository, release build\n")
print("a. git commit of a one-line change")
print(f"   without hooks                          {m['plain']:8.1f} ms")
print(f"   with the pre-commit hook (--gate)      {m['gated']:8.1f} ms   +{m['gated'] - m['plain']:.1f} ms   (target <= +25 ms: {verdict(m['gated'] - m['plain'] <= 25)})")
print(f"   with all three hooks (info)            {m['all']:8.1f} ms   +{m['all'] - m['plain']:.1f} ms")
print("b. pre-commit hook alone vs git status")
print(f"   git pair hook pre-commit --gate        {m['pre']:8.1f} ms")
print(f"   git status --porcelain                 {m['status']:8.1f} ms")
print(f"   ratio                                  {m['pre'] / m['status']:8.2f}x     (target <= 0.5x: {verdict(m['pre'] / m['status'] <= 0.5)})")
print("c. Stop hook vs git status")
print(f"   git pair hook agent-stop, run active   {m['stop']:8.1f} ms")
print(f"   git status --porcelain                 {m['status']:8.1f} ms")
print(f"   ratio                                  {m['stop'] / m['status']:8.2f}x     (target <= 1.0x: {verdict(m['stop'] / m['status'] <= 1.0)})")
print(f"   git pair hook agent-stop, no run       {m['stop_norun']:8.1f} ms     (git status there: {m['status_norun']:.1f} ms)")
PY
