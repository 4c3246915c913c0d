#!/usr/bin/env python3
"""The many-runs benchmark (issue 26), side by side with git in one run; see scale.sh."""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("PAIR_BIN", os.path.join(ROOT, "target", "release", "git-pair"))
STOP_INPUT = b'{"session_id":"s","cwd":"/nowhere","hook_event_name":"Stop","stop_hook_active":false}'
CACHE = os.path.join(".git", "pair", "cache", "runs-v3.jsonl")


def env_for(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PAIR_"))}
    env.update(HOME=home, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", LC_ALL="C",
               GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com",
               GIT_CONFIG_COUNT="2", GIT_CONFIG_KEY_0="gc.auto", GIT_CONFIG_VALUE_0="0",
               GIT_CONFIG_KEY_1="maintenance.auto", GIT_CONFIG_VALUE_1="false")
    return env


class Bench:
    def __init__(self, home):
        self.env = env_for(home)

    def run(self, args, cwd, stdin=None, check=True):
        out = subprocess.run(args, cwd=cwd, env=self.env, input=stdin, capture_output=True)
        if check and out.returncode != 0:
            sys.exit(f"{args} failed in {cwd}:\n{out.stderr.decode()[-2000:]}")
        return out

    def timed(self, args, cwd, stdin=None, check=True):
        """Wall seconds and peak KiB (of the command and every child it waited for)."""
        t = time.perf_counter()
        out = self.run(["/usr/bin/time", "-f", "%M", *args], cwd, stdin, check)
        wall = time.perf_counter() - t
        kib = int(out.stderr.decode().strip().splitlines()[-1])
        return wall, kib

    def private_peak(self, args, cwd):
        """Peak private (anonymous) resident KiB of the command, sampled every 2 ms from
        /proc: resident pages less the mapped files' (a pack's pages are the page cache's,
        and count toward every reader's resident set, git's too)."""
        proc = subprocess.Popen(args, cwd=cwd, env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        peak = 0
        while proc.poll() is None:
            try:
                with open(f"/proc/{proc.pid}/status") as f:
                    for line in f:
                        if line.startswith("RssAnon:"):
                            peak = max(peak, int(line.split()[1]))
            except (FileNotFoundError, ProcessLookupError, ValueError):
                pass
            time.sleep(0.002)
        if proc.returncode != 0:
            sys.exit(f"{args} failed in {cwd}")
        return peak


def fixture(runs):
    out = os.path.join(ROOT, "target", "bench-fixtures", f"scale-{runs}")
    if not os.path.exists(os.path.join(out, "done")):
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "bench", "make_runs.py"),
                        "--bin", BIN, "--out", out, "--runs", str(runs), "--remotes", "3"],
                       check=True, stdout=subprocess.DEVNULL)
        open(os.path.join(out, "done"), "w").close()
    return out


def ms(s):
    return s * 1e3


def row(name, ours, theirs, target):
    ratio = ours / theirs if theirs else float("inf")
    verdict = "met" if ratio <= target else "MISSED"
    print(f"  {name:<58} {ms(ours):9.1f} ms vs {ms(theirs):9.1f} ms  ratio {ratio:5.2f}"
          f"  (target <= {target}) {verdict}")
    return ratio <= target


def mem_row(name, ours, theirs, target=None, cap_kib=None):
    ratio = ours / theirs if theirs else float("inf")
    ok = (target is None or ratio <= target) and (cap_kib is None or ours <= cap_kib)
    if target:
        want = f"(target <= {target}x) {'met' if ok else 'MISSED'}"
    elif cap_kib:
        want = f"(target < {cap_kib // 1024} MiB) {'met' if ok else 'MISSED'}"
    else:
        want = "(for the record)"
    print(f"  {name:<58} {ours // 1024:6} MiB vs {theirs // 1024:6} MiB  ratio {ratio:5.2f}"
          f"  {want}")
    return ok


def push_bench(b, big, work, iterations):
    """push of every run to an empty remote vs git push of the same refs; then nothing new."""
    src = os.path.join(big, "source")
    ok = True
    first, first_git, again, again_git, mem, mem_git = [], [], [], [], [], []
    for i in range(iterations):
        ours = os.path.join(work, f"push-ours-{i}.git")
        theirs = os.path.join(work, f"push-git-{i}.git")
        for bare in (ours, theirs):
            shutil.rmtree(bare, ignore_errors=True)
            b.run(["git", "init", "-q", "--bare", bare], work)
        # No staging copy left from an earlier iteration.
        refs = b.run(["git", "for-each-ref", "--format=delete %(refname)", "refs/pair-remotes/"],
                     src).stdout
        b.run(["git", "update-ref", "--stdin"], src, stdin=refs)
        git_args = ["git", "push", "--porcelain", "-q", theirs,
                    "refs/pair/runs/*:refs/pair/runs/*", "refs/notes/pair:refs/notes/pair"]
        order = [0, 1] if i % 2 == 0 else [1, 0]
        for which in order:
            if which == 0:
                wall, kib = b.timed([BIN, "push", ours, "--json"], src)
                first.append(wall)
                mem.append(kib)
            else:
                wall, kib = b.timed(git_args, src)
                first_git.append(wall)
                mem_git.append(kib)
        for which in order:
            if which == 0:
                again.append(b.timed([BIN, "push", ours, "--json"], src)[0])
            else:
                again_git.append(b.timed(git_args, src)[0])
        for bare in (ours, theirs):
            shutil.rmtree(bare, ignore_errors=True)
    refs = b.run(["git", "for-each-ref", "--format=delete %(refname)", "refs/pair-remotes/"],
                 src).stdout
    b.run(["git", "update-ref", "--stdin"], src, stdin=refs)
    med = statistics.median
    ok &= row("push of every run to an empty remote vs git push", med(first), med(first_git), 1.3)
    ok &= row("push with nothing new vs git push with nothing to send", med(again),
              med(again_git), 1.2)
    ok &= mem_row("push peak memory vs git push's", max(mem), max(mem_git), target=1.3)
    return ok


def list_bench(b, big, iterations):
    src = os.path.join(big, "source")
    cold, warm, fer, limited, mem_cold, mem_warm, mem_fer = [], [], [], [], [], [], []
    priv_cold, priv_warm, priv_fer = [], [], []
    for _ in range(iterations):
        try:
            os.remove(os.path.join(src, CACHE))
        except FileNotFoundError:
            pass
        wall, kib = b.timed([BIN, "list", "--json"], src)
        cold.append(wall)
        mem_cold.append(kib)
        wall, kib = b.timed([BIN, "list", "--json"], src)
        warm.append(wall)
        mem_warm.append(kib)
        wall, kib = b.timed(["git", "for-each-ref", "refs/pair/runs"], src)
        fer.append(wall)
        mem_fer.append(kib)
        limited.append(b.timed([BIN, "list", "--limit", "20", "--json"], src)[0])
        os.remove(os.path.join(src, CACHE))
        priv_cold.append(b.private_peak([BIN, "list", "--json"], src))
        priv_warm.append(b.private_peak([BIN, "list", "--json"], src))
        priv_fer.append(b.private_peak(["git", "for-each-ref", "refs/pair/runs"], src))
    med = statistics.median
    ok = row("list --json, warm (summary cache) vs git for-each-ref", med(warm), med(fer), 1.5)
    ok &= row("list --json, cold (no summary cache) vs git for-each-ref", med(cold), med(fer), 3.0)
    print(f"  {'list --limit 20 --json':<58} {ms(med(limited)):9.1f} ms")
    # Resident set as /usr/bin/time reports it: the pack's mapped pages count (for git too).
    mem_row("list peak resident, cold, vs git for-each-ref's", max(mem_cold), max(mem_fer))
    mem_row("list peak resident, warm, vs git for-each-ref's", max(mem_warm), max(mem_fer))
    # What the process itself holds: the 100 MiB target.
    ok &= mem_row("list peak private memory, cold (vs for-each-ref's)", max(priv_cold),
                  max(priv_fer), cap_kib=100 << 10)
    ok &= mem_row("list peak private memory, warm (vs for-each-ref's)", max(priv_warm),
                  max(priv_fer), cap_kib=100 << 10)
    return ok


def prepare_flat(b, fx):
    """The fixture's source having pulled from its three remotes (the staging copies written),
    listed once (the summaries and the index of runs without owners exist, as after any
    listing). Used in place: copying 100,000 runs costs more
    than the whole benchmark."""
    repo = os.path.join(fx, "source")
    for remote in "abc":
        b.run([BIN, "pull", remote, "--json"], repo)
    b.run([BIN, "list", "--limit", "100", "--json"], repo)
    b.run([BIN, "list", "--json"], repo)
    return repo


def flat_bench(b, small_fx, big_fx, iterations, runs):
    small = prepare_flat(b, small_fx)
    big = prepare_flat(b, big_fx)
    steps = {
        "start (then abandoned)": None,
        "status --json": [BIN, "status", "--json"],
        "hook pre-commit --gate": [BIN, "hook", "pre-commit", "--gate"],
        "hook agent-stop": [BIN, "hook", "agent-stop"],
    }
    times = {(name, repo): [] for name in steps for repo in (small, big)}
    for i in range(iterations):
        for repo in ((small, big) if i % 2 == 0 else (big, small)):
            t = b.timed([BIN, "start", "--task", f"bench {i}", "--json"], repo)[0]
            times[("start (then abandoned)", repo)].append(t)
            for name, args in steps.items():
                if args is None:
                    continue
                stdin = STOP_INPUT if name == "hook agent-stop" else None
                times[(name, repo)].append(b.timed(args, repo, stdin=stdin, check=False)[0])
            b.run([BIN, "abandon", "--json"], repo, check=False)
    ok = True
    for name in steps:
        ok &= row(f"{name}: {runs} runs vs 10 (three remotes pulled)",
                  statistics.median(times[(name, big)]),
                  statistics.median(times[(name, small)]), 1.2)
    staged = b.run(["git", "for-each-ref", "--format=x", "refs/pair-remotes/"], big).stdout.count(b"x")
    print(f"  staging refs kept after the three pulls: {staged} (packed; bounded by the remotes' runs)")
    return ok


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else ["push", "list", "flat"]
    work = os.path.join(ROOT, "target", "bench-fixtures", "scale-work")
    os.makedirs(work, exist_ok=True)
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    b = Bench(home)
    t = time.time()
    big = fixture(runs)
    small = fixture(10)
    print(f"fixtures ready ({time.time() - t:.0f} s): {runs} runs and 10 runs, three remotes each",
          file=sys.stderr)
    print(f"{runs} runs (make_runs.py), medians of {iterations} interleaved runs:")
    ok = True
    if "list" in only:
        ok &= list_bench(b, big, iterations)
    if "flat" in only:
        ok &= flat_bench(b, small, big, iterations, runs)
    if "push" in only:
        ok &= push_bench(b, big, work, iterations)
    print("  targets met" if ok else "  TARGET MISSED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
