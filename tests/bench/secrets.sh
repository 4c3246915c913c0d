#!/usr/bin/env bash
# Secrets benchmarks (issue "Secrets and what leaves the machine"), side by side in one run:
#   1. `git pair review --dry-run` on a ~10 MB change with pair.diffBudgetBytes=10m (so the
#      packet is that big), with the shipped secret scanner vs an inert pattern table (one
#      rule whose keyword never occurs: what is left is the scan's fixed cost, ~0), interleaved,
#      median of N: target ratio <= 1.10.
#      Wall time (median, fastest) and CPU time are printed: on a shared machine the CPU time
#      is the steadier figure; scanning runs on worker threads beside rendering, so on idle
#      cores the wall-time cost is below the CPU cost. The scanner's own throughput:
#      `cargo bench --bench secrets`.
#   2. `git pair push` of 1,000 runs with nothing new (it pulls, finds nothing to publish and
#      scans nothing), from `cargo bench --bench sync` (RUNS=1000), which also times a push of
#      everything to an empty remote (every run scanned). Skip with SKIP_SYNC=1.
# Usage: tests/bench/secrets.sh [SAMPLES]   (BENCH_DIR to keep the fixtures somewhere else;
#        BASELINE_BIN=<git-pair built before the push scan> adds its push to the sync figures)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
samples=${1:-9}
work=${BENCH_DIR:-$root/target/bench-fixtures}/secrets
mkdir -p "$work"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin=$root/target/release/git-pair
cargo_home=$HOME   # cargo finds its registry through HOME; the fixtures get their own
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 HOME=$work/home
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
mkdir -p "$HOME"
repo=$work/repo
inert=$work/inert-secrets.json
printf '%s\n' '{"v": 1, "rules": [{"id": "never", "keywords": ["\u0001never"], "regex": "\u0001never", "secret_group": 0}], "allowlist": {}}' > "$inert"

if [ ! -e "$work/repo.ready" ]; then
  echo "building a repository with a ~10 MB change…"
  rm -rf "$repo" && mkdir -p "$repo" && cd "$repo"
  git init -q -b main && echo seed > seed.txt && git add . && git commit -qm seed
  git config pair.diffBudgetBytes 10m
  "$bin" start --task "secrets benchmark" >/dev/null
  # ~9.6 MB of code-like text in 192 files: 1 line in 30 mentions a keyword, and a
  # real-shaped secret (assembled here at run time) in every tenth file, ~20 in all, as in
  # the scanner's own benchmark (benches/secrets.rs).
  python3 - <<'PY'
import os, random
random.seed(7)
alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
b32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
os.makedirs("src", exist_ok=True)
for f in range(192):
    lines = []
    size = 0
    n = 0
    while size < 50_000:
        n += 1
        if n % 30 == 0:
            line = f'    let auth_{n} = settings.get("token_name_{n}").unwrap_or_default();\n'
        elif n == 100 and f % 10 == 0:
            key = "AK" + "IA" + "".join(random.choice(b32) for _ in range(16))
            line = f'    let leaked_{n} = "{key}";\n'
        else:
            line = f"    let value_{n} = compute(input_{f}, {n} * {random.randint(1, 9999)}); // step {n}\n"
        lines.append(line)
        size += len(line)
    with open(f"src/module_{f:03}.rs", "w") as out:
        out.write(f"pub fn module_{f}() {{\n" + "".join(lines) + "}\n")
PY
  "$bin" coder-done --summary "a large change" >/dev/null
  touch "$work/repo.ready"
  cd - >/dev/null
fi
bytes=$(du -cb "$repo"/src/*.rs | tail -1 | cut -f1)

python3 - "$bin" "$repo" "$inert" "$samples" "$bytes" <<'PY'
import json, resource, statistics, subprocess, sys, time
bin, repo, inert, samples, nbytes = sys.argv[1:6]
samples = int(samples)
reviewer = '["true"]'
def once(table):
    cmd = ["git", "-C", repo, "config"]
    if table:
        subprocess.run(cmd + ["pair.secretsFile", table], check=True)
    else:
        subprocess.run(cmd + ["--unset-all", "pair.secretsFile"], check=False)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([bin, "review", "--dry-run", "--reviewer-cmd", reviewer, "--json"],
                         cwd=repo, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, json.loads(out.stdout)
with_scan, without, cpu_with, cpu_without = [], [], [], []
redacted = None
for i in range(samples):   # interleaved, so machine load hits both alike
    e, c, v = once(None); with_scan.append(e); cpu_with.append(c); redacted = v
    e, c, _ = once(inert); without.append(e); cpu_without.append(c)
subprocess.run(["git", "-C", repo, "config", "--unset-all", "pair.secretsFile"], check=False)
a, b = statistics.median(with_scan), statistics.median(without)
cov = redacted["coverage"]
print(f"review --dry-run on a {int(nbytes)/1e6:.1f} MB change, packet {cov['bytes_included']/1e6:.1f} MB "
      f"({cov['full']} of {cov['files_total']} files in full), {len(redacted['secrets'])} secrets redacted; median of {samples} (interleaved):")
ca, cb = statistics.median(cpu_with), statistics.median(cpu_without)
print(f"                      wall (median)   fastest    CPU (user+sys, median)")
print(f"  shipped scanner     {a*1e3:8.1f} ms   {min(with_scan)*1e3:7.1f} ms   {ca*1e3:8.1f} ms")
print(f"  inert table         {b*1e3:8.1f} ms   {min(without)*1e3:7.1f} ms   {cb*1e3:8.1f} ms")
print(f"  ratio               {a/b:8.3f}      {min(with_scan)/min(without):7.3f}      {ca/cb:8.3f}   (target <= 1.10)")
PY

if [ -z "${SKIP_SYNC:-}" ]; then
  echo
  echo "push / pull of 1,000 runs (cargo bench --bench sync):"
  HOME=$cargo_home RUNS=${RUNS:-1000} ITERATIONS=${ITERATIONS:-5} \
    cargo bench --quiet --manifest-path "$root/Cargo.toml" --bench sync 2>/dev/null | tail -9
fi
