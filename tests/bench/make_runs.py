#!/usr/bin/env python3
"""Builds a repository holding many git pair runs in the CLI's exact stored shape, fast.

The real binary first writes one template run (start, a coder round, a review by the stub
reviewer `fixtures/reviewers/approve.sh`, finish, and its note) in a throwaway repository.
Every generated run is that run's chain replayed through `git fast-import`, with what differs
from run to run rewritten in every blob, path and commit message: the run id, the record ids
(and so the record file names), the timestamps (shifted to the run id's time, commit dates
too), the task and the work tree. Blobs that hold none of these (the snapshot, the diff) are
shared by reference. A run stops after 2 commits (start + coder: active), 4 (reviewed) or all
5 (finished, with a note line on a code commit of its own on `main`), one in ten, one in ten
and eight in ten. The template run itself stays in the fixture, so a generated run can be
compared with one the binary wrote.

    tests/bench/make_runs.py --bin target/release/git-pair --out DIR --runs 100000 \
        [--remotes 3] [--verify 20]

Writes DIR/source (the repository; remotes a, b, c configured when --remotes), DIR/remote-a.git
… (bare repositories holding the runs of some days and, for a, the notes), DIR/template. With
--verify N, N generated runs are read back with `git pair show`, `list` and `verify` and their
tree shape and record keys compared with the template's; any difference exits 1.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STUB = os.path.join(ROOT, "fixtures", "reviewers", "approve.sh")
ISO = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
FIRST_RUN = datetime(2025, 1, 1, tzinfo=timezone.utc)
SPACING = 37  # seconds between generated runs: 100,000 runs span 43 days
TASK = "Template task for the fixture"


def env_for(home):
    env = dict(os.environ)
    for key in list(env):
        if key.startswith("GIT_") or key.startswith("PAIR_"):
            del env[key]
    env.update(
        HOME=home,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.path.join(home, ".gitconfig"),
        GIT_AUTHOR_NAME="Fixture",
        GIT_AUTHOR_EMAIL="fixture@example.com",
        GIT_COMMITTER_NAME="Fixture",
        GIT_COMMITTER_EMAIL="fixture@example.com",
        LC_ALL="C",
        TZ="UTC",
    )
    return env


def run(args, cwd, env, input=None, check=True):
    out = subprocess.run(args, cwd=cwd, env=env, input=input, capture_output=True)
    if check and out.returncode != 0:
        sys.exit(f"{' '.join(args)} failed in {cwd}:\n{out.stdout.decode()}{out.stderr.decode()}")
    return out.stdout


def git(cwd, env, *args, input=None):
    return run(["git", *args], cwd, env, input=input)


def make_template(binary, out, env):
    """One run written by the binary; returns its id and the repository."""
    repo = os.path.join(out, "template")
    os.makedirs(repo)
    git(repo, env, "init", "-q", "-b", "main")
    with open(os.path.join(repo, "README"), "w") as f:
        f.write("hello\n")
    git(repo, env, "add", "README")
    git(repo, env, "commit", "-q", "-m", "initial")
    started = json.loads(run([binary, "start", "--task", TASK, "--json"], repo, env))
    run_id = started["run_id"]
    with open(os.path.join(repo, "README"), "a") as f:
        f.write("more\n")
    git(repo, env, "commit", "-q", "-am", "the work")
    run([binary, "coder-done", "--summary", "did the work", "--json"], repo, env)
    run([binary, "review", "--reviewer-cmd", json.dumps([STUB]), "--json"], repo, env)
    run([binary, "finish", "--json"], repo, env)
    return run_id, repo


class Template:
    """The template run's chain: per commit its message, dates and files."""

    def __init__(self, repo, env, run_id):
        self.run_id = run_id
        ref = f"refs/pair/runs/{run_id}"
        shas = git(repo, env, "rev-list", "--reverse", ref).decode().split()
        self.commits = []
        blobs = {}
        for sha in shas:
            raw = git(repo, env, "cat-file", "commit", sha)
            header, _, message = raw.partition(b"\n\n")
            lines = header.decode().split("\n")
            author = next(l for l in lines if l.startswith("author "))[len("author "):]
            committer = next(l for l in lines if l.startswith("committer "))[len("committer "):]
            files = []
            for entry in git(repo, env, "ls-tree", "-r", "-z", sha).split(b"\0"):
                if not entry:
                    continue
                meta, path = entry.split(b"\t", 1)
                mode, kind, oid = meta.decode().split()
                files.append((mode, oid, path.decode()))
                blobs[oid] = None
            # The manifest's `records_tree` stamp: the id of this commit's records/ tree.
            records = git(repo, env, "rev-parse", f"{sha}:records").decode().strip()
            # The commit's own tree, which its `Pair-Approvals:` trailer names.
            tree = git(repo, env, "rev-parse", f"{sha}^{{tree}}").decode().strip()
            self.commits.append((author, committer, message, files, records, tree))
        for oid in blobs:
            blobs[oid] = git(repo, env, "cat-file", "blob", oid)
        self.blobs = blobs
        start = self.commits[0][3]
        start_record = next(
            blobs[oid] for _, oid, path in start if re.match(r"records/(\d{4}/)?000001-start-", path)
        )
        record = json.loads(start_record)
        self.cwd = record["cwd"].encode()
        self.start_time = datetime.fromisoformat(record["at"].replace("Z", "+00:00"))
        self.record_ids = sorted(
            {re.search(r"-([0-9a-f]{12})\.json$", p).group(1)
             for c in self.commits for _, _, p in c[3] if p.startswith("records/")}
        )
        needles = [run_id.encode(), self.cwd, TASK.encode(), *[r.encode() for r in self.record_ids]]
        # Blobs holding nothing that differs per run are shared, by id.
        self.varies = {oid: any(n in b for n in needles) or ISO.search(b) is not None
                       for oid, b in blobs.items()}
        self.note = None


class Rewrite:
    """What changes from the template to generated run `i`."""

    def __init__(self, tpl, i, own_cwd):
        when = FIRST_RUN + timedelta(seconds=i * SPACING)
        suffix = hashlib.sha1(f"run {i}".encode()).hexdigest()[:6]
        self.run_id = when.strftime("%Y%m%d-%H%M%S-") + suffix
        self.delta = when - tpl.start_time
        pairs = [(tpl.run_id.encode(), self.run_id.encode())]
        for old in tpl.record_ids:
            new = hashlib.sha1(f"{self.run_id} {old}".encode()).hexdigest()[:12]
            pairs.append((old.encode(), new.encode()))
        pairs.append((tpl.cwd, (own_cwd or f"/home/dev{i % 7}/project").encode()))
        pairs.append((TASK.encode(), f"Fixture run {i}: {TASK.lower()}".encode()))
        self.pairs = pairs

    def bytes(self, data):
        for old, new in self.pairs:
            data = data.replace(old, new)
        delta = self.delta

        def shift(m):
            t = datetime.strptime(m.group(0).decode(), "%Y-%m-%dT%H:%M:%SZ")
            return (t + delta).strftime("%Y-%m-%dT%H:%M:%SZ").encode()

        return ISO.sub(shift, data)

    def ident(self, ident):
        name, _, rest = ident.rpartition("> ")
        stamp, zone = rest.split()
        return f"{name}> {int(stamp) + int(self.delta.total_seconds())} {zone}"


def blob_id(content):
    return hashlib.sha1(b"blob %d\0" % len(content) + content).digest()


def tree_id(files):
    """The id git gives the tree of `files` ((mode, path, raw id), paths relative to it)."""
    here, below = {}, {}
    for mode, path, raw in files:
        head, sep, rest = path.partition(b"/")
        if sep:
            below.setdefault(head, []).append((mode, rest, raw))
        else:
            here[head] = (mode, raw)
    for name, entries in below.items():
        here[name] = (b"40000", tree_id(entries))
    # Git sorts a subtree as if its name ended in a slash.
    order = sorted(here, key=lambda n: n + b"/" if n in below else n)
    body = b"".join(here[n][0] + b" " + n + b"\0" + here[n][1] for n in order)
    return hashlib.sha1(b"tree %d\0" % len(body) + body).digest()


def data(payload):
    return b"data %d\n%s\n" % (len(payload), payload)


def stream_runs(tpl, count, feed, main_tip, note_template):
    """Writes the fast-import stream of `count` runs, code commits and notes to `feed`."""
    mark = 0
    notes = []
    code_parent = main_tip
    lengths = {0: 2, 1: 4}
    run_ids = []
    for i in range(count):
        rw = Rewrite(tpl, i, None)
        run_ids.append(rw.run_id)
        keep = lengths.get(i % 10, len(tpl.commits))
        prev = None
        for author, committer, message, files, records, tree in tpl.commits[:keep]:
            mark += 1
            # Rewritten first, so that the manifest's stamp names the records tree this run's
            # commit really holds (as the CLI writes it: a listing trusts a stamped manifest),
            # and the message's `Pair-Approvals:` trailer the commit's own tree.
            rewritten = []
            for mode, oid, path in files:
                path = rw.bytes(path.encode())
                content = rw.bytes(tpl.blobs[oid]) if tpl.varies[oid] else None
                rewritten.append((mode, oid, path, content))
            stamp = tree_id([(mode.encode(), path[len(b"records/"):],
                              blob_id(content) if content is not None else bytes.fromhex(oid))
                             for mode, oid, path, content in rewritten
                             if path.startswith(b"records/")]).hex().encode()
            rewritten = [(mode, oid, path,
                          content.replace(records.encode(), stamp)
                          if content is not None and path == b"manifest.json" else content)
                         for mode, oid, path, content in rewritten]
            own_tree = tree_id([(mode.encode(), path,
                                 blob_id(content) if content is not None else bytes.fromhex(oid))
                                for mode, oid, path, content in rewritten]).hex().encode()
            message = rw.bytes(message).replace(b'"tree":"%s"' % tree.encode(),
                                                b'"tree":"%s"' % own_tree)
            out = [b"commit refs/pair/runs/%s\n" % rw.run_id.encode(), b"mark :%d\n" % mark,
                   f"author {rw.ident(author)}\n".encode(),
                   f"committer {rw.ident(committer)}\n".encode(), data(message)]
            if prev:
                out.append(b"from :%d\n" % prev)
            out.append(b"deleteall\n")
            for mode, oid, path, content in rewritten:
                if content is not None:
                    out.append(b"M %s inline %s\n" % (mode.encode(), path))
                    out.append(data(content))
                else:
                    out.append(b"M %s %s %s\n" % (mode.encode(), oid.encode(), path))
            feed.write(b"".join(out))
            prev = mark
        if keep == len(tpl.commits):
            # The run's code commit on main, annotated with the run's note line.
            mark += 1
            stamp = int((FIRST_RUN + timedelta(seconds=i * SPACING + 30)).timestamp())
            who = f"Fixture <fixture@example.com> {stamp} +0000"
            feed.write(b"commit refs/heads/main\nmark :%d\nauthor %s\ncommitter %s\n%s"
                       % (mark, who.encode(), who.encode(),
                          data(f"work of fixture run {i}\n".encode())))
            feed.write(b"from %s\n" % (code_parent.encode() if isinstance(code_parent, str)
                                       else b":%d" % code_parent))
            code_parent = mark
            notes.append((mark, rw.bytes(note_template)))
    if notes:
        stamp = int((FIRST_RUN + timedelta(seconds=count * SPACING)).timestamp())
        who = f"Fixture <fixture@example.com> {stamp} +0000"
        feed.write(b"commit refs/notes/pair\nauthor %s\ncommitter %s\n%s"
                   % (who.encode(), who.encode(), data(b"Notes added by 'git pair'\n")))
        feed.write(b"from refs/notes/pair^0\n")
        for note_mark, text in notes:
            feed.write(b"N inline :%d\n%s" % (note_mark, data(text)))
    feed.write(b"done\n")
    return run_ids


def build(args):
    binary = os.path.abspath(args.bin)
    out = os.path.abspath(args.out)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    home = os.path.join(out, "home")
    os.makedirs(home)
    env = env_for(home)
    t0 = time.time()
    run_id, template_repo = make_template(binary, out, env)
    tpl = Template(template_repo, env, run_id)
    template_main = git(template_repo, env, "rev-parse", "refs/heads/main").decode().strip()
    note_template = git(template_repo, env, "notes", "--ref=pair", "show", template_main)

    source = os.path.join(out, "source")
    os.makedirs(source)
    git(source, env, "init", "-q", "-b", "main")
    # The template's objects (shared blobs, the base commit) and its run and notes.
    git(source, env, "fetch", "-q", "--no-tags", "--update-head-ok", template_repo,
        "refs/heads/main:refs/heads/main", "refs/pair/*:refs/pair/*",
        "refs/notes/pair:refs/notes/pair")
    git(source, env, "reset", "-q", "--hard", "main")
    proc = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=source, env=env,
                            stdin=subprocess.PIPE)
    run_ids = stream_runs(tpl, args.runs, proc.stdin, template_main, note_template)
    proc.stdin.close()
    if proc.wait() != 0:
        sys.exit("git fast-import failed")
    git(source, env, "pack-refs", "--all")
    git(source, env, "reset", "-q", "--hard", "main")
    print(f"{args.runs} runs generated in {time.time() - t0:.1f} s: {source}", file=sys.stderr)

    for k, name in enumerate("abc"[: args.remotes]):
        bare = os.path.join(out, f"remote-{name}.git")
        git(out, env, "init", "-q", "--bare", bare)
        # Remote a holds the runs of 1-9 January and the notes, b of 10-19, c of 20-29.
        specs = [f"refs/pair/runs/2025010*:refs/pair/runs/2025010*",
                 f"refs/pair/runs/2025011*:refs/pair/runs/2025011*",
                 f"refs/pair/runs/2025012*:refs/pair/runs/2025012*"][k: k + 1]
        if k == 0:
            specs.append("refs/notes/pair:refs/notes/pair")
        git(bare, env, "fetch", "-q", "--no-tags", source, *specs)
        git(source, env, "remote", "add", name, bare)
    if args.verify:
        verify(binary, source, env, tpl, run_ids, args.verify)
    print(json.dumps({"source": source, "runs": args.runs + 1, "template_run": run_id,
                      "sample": run_ids[:: max(1, len(run_ids) // 5)][:5]}))


def shape(repo, env, ref):
    """A run's tree as paths with the ids masked, and each record's keys."""
    paths = []
    keys = {}
    for line in git(repo, env, "ls-tree", "-r", "--name-only", ref).decode().splitlines():
        masked = re.sub(r"-[0-9a-f]{12}\.json$", "-ID.json", line)
        paths.append(masked)
        if line.startswith("records/") or line == "manifest.json":
            keys[masked] = sorted(json.loads(git(repo, env, "show", f"{ref}:{line}")))
    return paths, keys


def verify(binary, source, env, tpl, run_ids, n):
    """Reads generated runs back through the binary and compares them with the template."""
    want_paths, want_keys = shape(source, env, f"refs/pair/runs/{tpl.run_id}")
    listed = json.loads(run([binary, "list", "--json"], source, env))
    listed_ids = {r["run_id"] for r in listed["runs"]}
    if listed["malformed_runs"]:
        sys.exit(f"list found malformed runs: {listed['malformed_runs'][:3]}")
    missing = [r for r in run_ids if r not in listed_ids]
    if missing:
        sys.exit(f"list does not show {len(missing)} generated runs, e.g. {missing[0]}")
    # Finished runs (i % 10 >= 2) have the template's whole shape.
    finished = [r for i, r in enumerate(run_ids) if i % 10 >= 2]
    sample = finished[:: max(1, len(finished) // n)][:n]
    for run_id in sample:
        paths, keys = shape(source, env, f"refs/pair/runs/{run_id}")
        if (paths, keys) != (want_paths, want_keys):
            sys.exit(f"run {run_id} differs from the template run's shape:\n{paths}\n{want_paths}")
        # Its tip carries its approvals for the commit's own tree, as the CLI writes them.
        ref = f"refs/pair/runs/{run_id}"
        own_tree = git(source, env, "rev-parse", f"{ref}^{{tree}}").decode().strip()
        message = git(source, env, "log", "-1", "--format=%B", ref).decode()
        carried = [json.loads(line[len("Pair-Approvals: "):]) for line in message.splitlines()
                   if line.startswith("Pair-Approvals: ")]
        if len(carried) != 1 or carried[0].get("tree") != own_tree:
            sys.exit(f"run {run_id}'s tip does not carry its approvals for its tree: {carried}")
        shown = json.loads(run([binary, "show", run_id, "--json"], source, env))
        manifest = shown.get("manifest", shown)
        if manifest.get("run_id") != run_id or manifest.get("next_action") != "done":
            sys.exit(f"git pair show {run_id} reads back wrong: {json.dumps(shown)[:300]}")
    for i in (0, 1):
        if i < len(run_ids):
            shown = json.loads(run([binary, "show", run_ids[i], "--json"], source, env))
            want = {0: "review", 1: "finish"}[i]
            got = shown.get("manifest", shown).get("next_action")
            if got != want:
                sys.exit(f"run {run_ids[i]}: next_action {got}, want {want}")
    verified = run([binary, "verify", "--json", "main~20..main"], source, env, check=False)
    report = json.loads(verified)
    print(f"verified: {len(sample)} sample runs match the template's shape; list shows all "
          f"{len(listed_ids)}; verify of the last 20 code commits: "
          f"{json.dumps(report)[:200]}", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "git-pair"))
    p.add_argument("--out", required=True)
    p.add_argument("--runs", type=int, default=100_000)
    p.add_argument("--remotes", type=int, default=0, choices=[0, 1, 2, 3])
    p.add_argument("--verify", type=int, default=0, metavar="N")
    build(p.parse_args())


if __name__ == "__main__":
    main()
