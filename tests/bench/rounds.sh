#!/usr/bin/env bash
# A long run (issue 26), round 1 against round N in one run:
#   1. `review` (stub reviewer) at round N+1 vs at round 2 of a fresh run: target <= 1.2
#   2. `coder-done` opening round N+1 vs opening round 2: target <= 1.2
#   3. `pr-body` of the N-round run vs `git log` of its ref: target <= 2, and <= 65,536 chars
#   4. the repository's objects after N rounds, as git pair leaves them (it packs its own):
#      target < 10 MB at 1,000 rounds
# Each sample starts from the same state (the run ref and .git/pair restored), so every
# sample measures exactly round 1 and round N. Fixtures are built once by fixture_rounds.sh
# (FRESH=1 to rebuild).
# Usage: tests/bench/rounds.sh [N=1000]   (SAMPLES=15; BENCH_DIR to keep fixtures elsewhere;
#        NO_BUILD=1 to use target/release/git-pair as it is)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-1000}
samples=${SAMPLES:-15}
work=${BENCH_DIR:-$root/target/bench-fixtures}
mkdir -p "$work"
[ -n "${NO_BUILD:-}" ] || cargo build --release --quiet --locked --manifest-path "$root/Cargo.toml"
bin=$root/target/release/git-pair
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 HOME=$work/home
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
mkdir -p "$HOME"
for size in 1 "$n"; do
  dir=$work/rounds-$size
  if [ -n "${FRESH:-}" ] || [ ! -f "$dir/.fixture-done" ]; then
    echo "building a run of $size round(s) in $dir…" >&2
    start=$(date +%s)
    bash "$root/tests/bench/fixture_rounds.sh" "$bin" "$size" "$dir" > "$dir.id"
    echo "  built in $(( $(date +%s) - start )) s" >&2
    touch "$dir/.fixture-done"
  fi
done

python3 - "$bin" "$work/rounds-1" "$work/rounds-$n" "$n" "$samples" <<'PY'
import os, shutil, statistics, subprocess, sys, time
bin, small, big, n, samples = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
reviewer = '["sh", "-c", "cat >/dev/null; echo \\"1. [bug] still wrong\\"; echo VERDICT: CHANGES_REQUESTED"]'

def git(d, *args):
    return subprocess.run(["git", *args], cwd=d, check=True, capture_output=True, text=True).stdout

class Fixture:
    def __init__(self, d):
        self.d = d
        self.ref = git(d, "for-each-ref", "--format=%(refname)", "refs/pair/runs/").split()[0]
        self.tip = git(d, "rev-parse", self.ref).strip()
        self.saved = d + ".pair-saved"
        shutil.rmtree(self.saved, ignore_errors=True)
        shutil.copytree(os.path.join(d, ".git/pair"), self.saved, symlinks=True)
        self.handoff = open(os.path.join(d, "HANDOFF.md"), "rb").read()
    def restore(self, i):
        git(self.d, "update-ref", self.ref, self.tip)
        shutil.rmtree(os.path.join(self.d, ".git/pair"))
        shutil.copytree(self.saved, os.path.join(self.d, ".git/pair"), symlinks=True)
        open(os.path.join(self.d, "HANDOFF.md"), "wb").write(self.handoff)
        open(os.path.join(self.d, "work.txt"), "w").write(f"sample {i}\n")
    def timed(self, *args):
        t = time.perf_counter()
        subprocess.run([bin, *args], cwd=self.d, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t

def objects(d):
    out = dict(line.split(": ") for line in git(d, "count-objects", "-v").splitlines())
    return int(out["count"]), int(out["size"]), int(out["packs"]), int(out["size-pack"])
def history(d, ref):
    # Every object the run's ref reaches, at its size on disk (in a pack, or its loose file).
    ids = subprocess.run(["git", "rev-list", "--objects", ref], cwd=d, check=True, capture_output=True, text=True).stdout
    ids = "".join(line.split(" ")[0] + "\n" for line in ids.splitlines())
    sizes = subprocess.run(["git", "cat-file", "--batch-check=%(objectsize:disk)"], cwd=d, input=ids, check=True, capture_output=True, text=True).stdout
    sizes = [int(s) for s in sizes.split()]
    return len(sizes), sum(sizes)

a, b = Fixture(small), Fixture(big)
# Sizes first: the samples below write objects of their own.
sized = []
for label, f in (("1 round", a), (f"{n} rounds", b)):
    count, loose, packs, packed = objects(f.d)
    reached, on_disk = history(f.d, f.ref)
    sized.append((label, count, loose, packs, packed, reached, on_disk))
times = {k: [] for k in ("cd1", "cdn", "rv1", "rvn")}
for i in range(samples):          # interleaved, so machine load hits both alike
    for f, cd, rv in ((a, "cd1", "rv1"), (b, "cdn", "rvn")):
        f.restore(i)
        times[cd].append(f.timed("coder-done", "--summary", f"sample {i}"))
        times[rv].append(f.timed("review", "--reviewer-cmd", reviewer))
for f in (a, b):
    f.restore(0)
m = {k: statistics.median(v) for k, v in times.items()}
print(f"review and coder-done, median of {samples} (interleaved, state restored each time):")
print(f"  coder-done opening round 2       {m['cd1']*1e3:8.2f} ms")
print(f"  coder-done opening round {n+1:<7} {m['cdn']*1e3:8.2f} ms")
print(f"  coder-done ratio round {n} / round 1   {m['cdn']/m['cd1']:6.2f}   (target <= 1.2)")
print(f"  review of round 2                {m['rv1']*1e3:8.2f} ms")
print(f"  review of round {n+1:<7}          {m['rvn']*1e3:8.2f} ms")
print(f"  review ratio round {n} / round 1       {m['rvn']/m['rv1']:6.2f}   (target <= 1.2)")

body = subprocess.run([bin, "pr-body"], cwd=big, check=True, capture_output=True, text=True).stdout
pb, gl = [], []
for i in range(samples):
    t = time.perf_counter()
    subprocess.run([bin, "pr-body"], cwd=big, check=True, stdout=subprocess.DEVNULL)
    pb.append(time.perf_counter() - t)
    t = time.perf_counter()
    subprocess.run(["git", "log", b.ref], cwd=big, check=True, stdout=subprocess.DEVNULL)
    gl.append(time.perf_counter() - t)
mp, mg = statistics.median(pb), statistics.median(gl)
print(f"pr-body of the {n}-round run vs git log of its ref, median of {samples}:")
print(f"  pr-body ({len(body)} chars, limit 65536)  {mp*1e3:8.2f} ms")
print(f"  git log {b.ref}  {mg*1e3:8.2f} ms")
print(f"  pr-body ratio vs git log          {mp/mg:6.2f}   (target <= 2)")

for label, count, loose, packs, packed, reached, on_disk in sized:
    print(f"after {label:<11} the run reaches {reached} objects, {on_disk / 2**20:6.2f} MiB on disk; "
          f"the repository: {packed} KiB in {packs} pack(s), {count} loose ({loose} KiB in blocks)")
print(f"  history size at {n} rounds       {sized[1][6] / 2**20:6.2f} MiB   (target < 10 MB)")
PY
