#!/usr/bin/env bash
# Hook benchmarks (issues "Gates" and "Scale"), side by side in one run on a generated
# repository of FILES files (default 20,000; the issue "Scale" target is judged at
# FILES=80000; fixtures/make-big-repo.sh), release build, medians of interleaved runs:
#   a. `git commit` of a one-line change with the pre-commit hook installed (`--gate`, a run
#      active and approved, the staged tree = the approved snapshot) vs the same commit without
#      hooks: target <= +25 ms. Also shown: with all three hooks (commit-msg adds trailers,
#      post-commit writes the note): target <= +25 ms at 80,000 files (issue "Scale").
#   b. `git pair hook pre-commit --gate` alone vs `git status --porcelain`: target <= 0.5x.
#   c. `git pair hook agent-stop` with a run active (next_action finish: the work tree is
#      compared with the approved snapshot) vs `git status --porcelain`: target <= 1.0x; and
#      with no run at all: target a few ms.
# Timing is a small Python loop (the Stop hook needs stdin, which the packaged hyperfine 1.15
# cannot feed); runs are interleaved so machine load hits every command alike. Besides wall
# time it reports CPU time (user + system of the process and its children), which a loaded
# machine distorts less.
# Usage: tests/bench/hooks.sh [RUNS]   (FILES=80000 for the big tree; NO_BUILD=1 to time
#        target/release/git-pair as it is; BENCH_DIR to keep the
#        fixtures somewhere else)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-30}
files=${FILES:-20000}
work=${BENCH_DIR:-$root/target/bench-fixtures}/hooks-$files
mkdir -p "$work"
[ -n "${NO_BUILD:-}" ] || cargo build --release --quiet --offline --manifest-path "$root/Cargo.toml"
bin=$root/target/release/git-pair
# The hooks call `git pair`: put the release binary on PATH as git-pair, first.
mkdir -p "$work/bin" && ln -sf "$bin" "$work/bin/git-pair"
export PATH=$work/bin:$PATH
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 HOME=$work/home LC_ALL=C
# No automatic gc: one detached in the background repacks while the fixtures are copied.
export GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=gc.auto GIT_CONFIG_VALUE_0=0
export GIT_CONFIG_KEY_1=maintenance.auto GIT_CONFIG_VALUE_1=false
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
mkdir -p "$HOME"
approve='["sh", "-c", "cat >/dev/null; echo VERDICT: APPROVED"]'

echo "building the $files-file repositories…"
bash "$root/fixtures/make-big-repo.sh" "$work/plain" "$files" >/dev/null
rm -rf "$work/gated" "$work/all" "$work/norun" "$work/trivial"
cp -a "$work/plain" "$work/gated"
cp -a "$work/plain" "$work/norun"
change() { echo "// one more line" >>src/mod017/sub3/file08650.rs; }
# plain: the one-line change staged, no hooks; trivial: the same with a pre-commit hook that
# only exits 0 (what having any hook costs git itself).
(cd "$work/plain" && change && git add -A)
cp -a "$work/plain" "$work/trivial"
printf '#!/bin/sh\nexit 0\n' >"$work/trivial/.git/hooks/pre-commit"
chmod +x "$work/trivial/.git/hooks/pre-commit"
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
# finished: the gated repository after `finish` (the gate still binds the finished run).
rm -rf "$work/finished"
cp -a "$work/gated" "$work/finished"
(cd "$work/finished" && git-pair finish >/dev/null && git-pair gate >/dev/null)
rm "$work/finished/.git/hooks/commit-msg" "$work/finished/.git/hooks/post-commit"
rm "$work/gated/.git/hooks/commit-msg" "$work/gated/.git/hooks/post-commit"
# norun: no run, no hooks (the Stop hook's cheap path).
(cd "$work/norun" && change)

python3 - "$bin" "$work" "$runs" "$files" <<'PY'
import resource, statistics, subprocess, sys, time
bin, work, runs, files = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
stop = b'{"session_id":"s","hook_event_name":"Stop","stop_hook_active":false}'

cpu = {}

def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

def timed(argv, cwd, stdin=None, check=True, key=None):
    c, t = children_cpu(), time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t
    if key:
        cpu.setdefault(key, []).append(children_cpu() - c)
    if check and p.returncode != 0:
        sys.exit(f"{argv} failed in {cwd}: {p.stderr.decode()}")
    return elapsed, p

def commit(repo):
    t, _ = timed(["git", "commit", "-q", "-m", "one more line"], f"{work}/{repo}", key=repo)
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

samples = {k: [] for k in ["plain", "trivial", "gated", "finished", "all", "pre", "status", "stop", "stop_norun", "status_norun"]}
for i in range(runs):
    for repo in ["plain", "trivial", "gated", "finished", "all"]:
        samples[repo].append(commit(repo))
    samples["pre"].append(timed([bin, "hook", "pre-commit", "--gate"], f"{work}/gated", key="pre")[0])
    samples["status"].append(timed(["git", "status", "--porcelain"], f"{work}/gated", key="status")[0])
    samples["stop"].append(timed([bin, "hook", "agent-stop"], f"{work}/gated", stop, key="stop")[0])
    samples["stop_norun"].append(timed([bin, "hook", "agent-stop"], f"{work}/norun", stop, key="stop_norun")[0])
    samples["status_norun"].append(timed(["git", "status", "--porcelain"], f"{work}/norun", key="status_norun")[0])
m = {k: statistics.median(v) * 1e3 for k, v in samples.items()}
c = {k: statistics.median(v) * 1e3 for k, v in cpu.items()}

def verdict(ok):
    return "ok" if ok else "OVER TARGET"
print(f"medians of {runs} interleaved runs, {files:,}-file repository, release build")
print("(wall ms; CPU ms = user + system of the process tree)\n")
def row(label, key, extra=""):
    print(f"   {label:<40} {m[key]:7.1f} wall {c[key]:7.1f} CPU{extra}")
print("a. git commit of a one-line change")
row("without hooks", "plain")
row("with a pre-commit hook that exits 0", "trivial", f"   (git's own cost of a hook: +{m['trivial'] - m['plain']:.1f} wall)")
row("with the pre-commit hook (--gate)", "gated", f"   +{m['gated'] - m['plain']:.1f} wall, +{c['gated'] - c['plain']:.1f} CPU")
print(f"      target <= +25 ms: {verdict(m['gated'] - m['plain'] <= 25)}")
row("with the pre-commit hook, run finished", "finished", f"   +{m['finished'] - m['plain']:.1f} wall (the gate after finish)")
print(f"      target <= +25 ms: {verdict(m['finished'] - m['plain'] <= 25)}")
row("with all three hooks", "all", f"   +{m['all'] - m['plain']:.1f} wall, +{c['all'] - c['plain']:.1f} CPU")
print(f"      target <= +25 ms (at 80,000 files): {verdict(m['all'] - m['plain'] <= 25)}")
print("b. pre-commit hook alone vs git status")
row("git pair hook pre-commit --gate", "pre")
row("git status --porcelain", "status")
print(f"      ratio {m['pre'] / m['status']:.2f}x wall, {c['pre'] / c['status']:.2f}x CPU   (target <= 0.5x: {verdict(m['pre'] / m['status'] <= 0.5)})")
print("c. Stop hook vs git status")
row("git pair hook agent-stop, run active", "stop")
row("git status --porcelain", "status")
print(f"      ratio {m['stop'] / m['status']:.2f}x wall, {c['stop'] / c['status']:.2f}x CPU   (target <= 1.0x: {verdict(m['stop'] / m['status'] <= 1.0)})")
row("git pair hook agent-stop, no run", "stop_norun", "   (target: a few ms)")
row("git status --porcelain there", "status_norun")
PY
