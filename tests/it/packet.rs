//! Packets built from real repositories: git's exact diff when it fits, tiers when it does
//! not, blindness refusals, and awkward content (huge, binary, non-UTF-8, symlinks,
//! submodules, file <-> directory, unborn base). Every packet must stay within its budget and
//! be valid UTF-8.

use std::io::Write;
use std::path::Path;

use git_pair::diff::{self, Differ};
use git_pair::packet::{self, Options, Packet};

use crate::common::{self, git_command, git_ok, git_str, oid, sh};

fn packet_between(repo_path: &Path, old: Option<&str>, new: &str, options: &Options) -> Packet {
    let repo = common::open(repo_path);
    let old = old.map(|rev| oid(&git_str(repo_path, &["rev-parse", rev])));
    let new = oid(&git_str(repo_path, &["rev-parse", new]));
    let mut differ = Differ::new(&repo, diff::Options::default()).expect("differ");
    let changes = differ.changes(old, new).expect("changes");
    let lazy = packet::build_from_changes(&mut differ, &changes, options).expect("packet");
    assert_bounded(&lazy, options);
    lazy
}

fn assert_bounded(packet: &Packet, options: &Options) {
    assert!(
        packet.diff.len() <= options.budget_bytes,
        "{} bytes over a {}-byte budget",
        packet.diff.len(),
        options.budget_bytes
    );
    assert!(
        std::str::from_utf8(&packet.diff).is_ok(),
        "the packet is not UTF-8"
    );
    let c = &packet.coverage;
    assert_eq!(c.v, 1);
    assert_eq!(
        c.full.count + c.clipped.count + c.names_only.count + c.not_included.count,
        c.files_total,
        "every file is in exactly one coverage list"
    );
    assert_eq!(c.bytes_included, packet.diff.len() as u64);
    assert_eq!(c.summary.is_some(), c.full.count < c.files_total);
    serde_json::to_string(c).expect("coverage serializes");
}

fn text(packet: &Packet) -> &str {
    std::str::from_utf8(&packet.diff).expect("UTF-8 packet")
}

fn commit_all(repo: &Path, message: &str) {
    git_ok(repo, &["add", "-A"]);
    git_ok(repo, &["commit", "-q", "--allow-empty", "-m", message]);
}

#[test]
fn under_budget_the_packet_is_git_diff() {
    let fixture = common::fixture("diff-cases", &[]);
    let commits = git_str(&fixture.path, &["rev-list", "--reverse", "HEAD"]);
    let options = Options::default();
    let mut previous: Option<String> = None;
    for commit in commits.lines() {
        let packet = packet_between(&fixture.path, previous.as_deref(), commit, &options);
        let git = git_ok(
            &fixture.path,
            &[
                "diff",
                previous
                    .as_deref()
                    .unwrap_or("4b825dc642cb6eb9a060e54bf8d69288fbee4904"),
                commit,
            ],
        );
        let reviewable = std::str::from_utf8(&git).is_ok() && !git.contains(&0);
        if reviewable {
            assert_eq!(packet.diff, git, "commit {commit}");
            assert!(packet.coverage.summary.is_none());
            assert_eq!(packet.coverage.bytes_total, Some(git.len() as u64));
        } else {
            // Binary content goes to the reviewer as metadata only; text with bytes that are
            // not UTF-8 is shown with them escaped (SPEC 6.2): the packet is text either way.
            let text = std::str::from_utf8(&packet.diff).expect("the packet is UTF-8");
            assert!(
                packet.coverage.binary > 0 || text.contains("are shown as \\xNN"),
                "commit {commit}"
            );
        }
        previous = Some(commit.to_owned());
    }
}

#[test]
fn blindness_refuses_before_anything_else() {
    let temp = common::empty_repo();
    sh(
        &temp.path,
        "printf 'a\\n' >a.txt && git add -A && git commit -qm base && printf 'transcript\\n' >HANDOFF.md && mkdir -p .pair/working && printf 'w\\n' >.pair/working/notes",
    );
    commit_all(&temp.path, "leak");
    let err = packet_between_err(&temp.path, "HEAD~1", "HEAD", &Options::default());
    let message = err.to_string();
    assert!(
        message.contains("HANDOFF.md") || message.contains(".pair/working/notes"),
        "{message}"
    );
    assert!(matches!(err, packet::Error::Blind { .. }));

    // A custom pattern; a rename away from an excluded path is refused too (old path).
    sh(
        &temp.path,
        "git rm -q --cached HANDOFF.md .pair/working/notes && rm -r HANDOFF.md .pair && mkdir secrets && printf 'k\\n' >secrets/key.pem",
    );
    commit_all(&temp.path, "secret");
    sh(&temp.path, "git mv secrets/key.pem public.pem");
    commit_all(&temp.path, "move it out");
    let options = Options {
        exclude: vec!["secrets/".to_owned()],
        ..Options::default()
    };
    let err = packet_between_err(&temp.path, "HEAD~1", "HEAD", &options);
    assert!(
        matches!(err, packet::Error::Blind { ref path, ref pattern } if path == "secrets/key.pem" && pattern == "secrets/")
    );
}

#[test]
fn blindness_patterns_agree_with_git_check_ignore() {
    // The same patterns as a .gitignore, judged by `git check-ignore --no-index`: negation,
    // last match wins, and nothing under an excluded directory can be re-included.
    let patterns = [
        "*.log",
        "!keep.log",
        "build/",
        "!build/keep.txt",
        "docs/**/*.tmp",
        "/root-only",
        "cache/*",
        "!cache/readme",
        "[Tt]emp?",
    ];
    let paths = [
        "a.log",
        "keep.log",
        "sub/keep.log",
        "build/keep.txt",
        "build/x/y",
        "docs/a/b/c.tmp",
        "docs/c.tmp",
        "root-only",
        "sub/root-only",
        "cache/readme",
        "cache/other",
        "Temp1",
        "x/temp2/f",
        "plain.txt",
    ];
    let temp = common::empty_repo();
    std::fs::write(temp.path.join(".gitignore"), patterns.join("\n")).expect("write .gitignore");
    let mut args = vec!["check-ignore", "--no-index"];
    args.extend(paths);
    // Exit status 1 means "nothing ignored"; the list on stdout is what counts.
    let out = common::git_raw(&temp.path, &args);
    let ignored = String::from_utf8(out.stdout).expect("UTF-8 paths");
    let set = packet::glob::PathSet::new(patterns);
    for path in paths {
        let by_git = ignored.lines().any(|l| l == path);
        assert_eq!(set.matches(path.as_bytes()), by_git, "{path}");
    }
    assert!(ignored.lines().count() > 5, "{ignored}");
    let err = packet::check_blindness([b"build/keep.txt".as_slice()], &patterns.map(String::from))
        .expect_err("build/ is excluded");
    assert!(
        matches!(err, packet::Error::Blind { ref pattern, .. } if pattern == "build/"),
        "{err}"
    );
}

fn packet_between_err(repo_path: &Path, old: &str, new: &str, options: &Options) -> packet::Error {
    let repo = common::open(repo_path);
    let old = oid(&git_str(repo_path, &["rev-parse", old]));
    let new = oid(&git_str(repo_path, &["rev-parse", new]));
    let files = diff::diff_trees(&repo, Some(old), new, &diff::Options::default()).expect("diff");
    packet::build(&files, options).expect_err("blind")
}

#[test]
fn over_budget_tiers_apply_in_order() {
    let temp = common::empty_repo();
    sh(
        &temp.path,
        r#"
seq 1 3000 | sed 's/^/lock entry /' >Cargo.lock
seq 1 2000 | sed 's/^/doomed line /' >doomed.txt
for f in a b c; do seq 1 1500 | sed "s/^/$f line /" >$f.txt; done
git add -A && git commit -qm base
seq 1 3000 | sed 's/^/lock entry v2 /' >Cargo.lock
sed -i '100,1900d' doomed.txt && sed -i 's/^doomed line 1$/doomed line ONE/' doomed.txt
for f in a b c; do sed -i 's/5$/five/' $f.txt; done
git add -A && git commit -qm change
"#,
    );
    let full = git_ok(&temp.path, &["diff", "HEAD~1", "HEAD"]);
    let budget = |n: usize| Options {
        budget_bytes: n,
        ..Options::default()
    };

    // Everything fits: git's diff.
    let p = packet_between(&temp.path, Some("HEAD~1"), "HEAD", &budget(full.len()));
    assert_eq!(p.diff, full);

    // Tier 1: the lockfile goes to names only, the rest is complete.
    let lock_len = git_ok(&temp.path, &["diff", "HEAD~1", "HEAD", "--", "Cargo.lock"]).len();
    let p = packet_between(
        &temp.path,
        Some("HEAD~1"),
        "HEAD",
        &budget(full.len() - lock_len + 300),
    );
    assert_eq!(p.coverage.names_only.paths, vec!["Cargo.lock"]);
    assert_eq!(p.coverage.full.count, 4);
    assert!(text(&p).contains("[git-pair] names only (lockfile, generated or vendored)"));

    // Tier 2: the deletion-only hunk is dropped with a line count.
    let doomed_len = git_ok(&temp.path, &["diff", "HEAD~1", "HEAD", "--", "doomed.txt"]).len();
    let p = packet_between(
        &temp.path,
        Some("HEAD~1"),
        "HEAD",
        &budget(full.len() - lock_len - doomed_len + 600),
    );
    assert!(
        text(&p)
            .contains("[git-pair] deletion-only hunk dropped (@@ -97,1807 +97,6 @@): -1801 lines"),
        "{}",
        text(&p)
    );
    assert!(
        text(&p).contains("+doomed line ONE\n"),
        "the file's other hunk stays"
    );
    assert_eq!(p.coverage.clipped.paths, vec!["doomed.txt"]);
    assert_eq!(p.coverage.summary.as_deref(), Some("reviewed 3 of 5 files"));

    // Tier 3: the largest files are clipped, with a marker.
    let p = packet_between(&temp.path, Some("HEAD~1"), "HEAD", &budget(12_000));
    assert!(text(&p).contains("[git-pair] clipped: "), "{}", text(&p));
    assert!(p.coverage.clipped.count >= 3);

    // Tier 4: a tiny budget leaves files out and lists them.
    let p = packet_between(&temp.path, Some("HEAD~1"), "HEAD", &budget(2_500));
    assert!(p.coverage.not_included.count > 0);
    assert!(text(&p).contains("[git-pair] not included"), "{}", text(&p));

    // Degenerate budgets still give a bounded (possibly empty) packet.
    for n in [0, 1, 40, 100, 500] {
        packet_between(&temp.path, Some("HEAD~1"), "HEAD", &budget(n));
    }
}

/// Writes a `git fast-import` stream creating `main` with the given commits (path, content).
fn fast_import(repo: &Path, commits: &[Vec<(String, Vec<u8>)>]) {
    let mut stream = Vec::new();
    for (n, files) in commits.iter().enumerate() {
        writeln!(stream, "commit refs/heads/main\nmark :{}", n + 1).expect("memory");
        writeln!(
            stream,
            "committer T <t@example.com> {} +0000\ndata 1\nc",
            1_700_000_000 + n
        )
        .expect("memory");
        if n > 0 {
            writeln!(stream, "from :{n}").expect("memory");
        }
        for (path, content) in files {
            writeln!(stream, "M 100644 inline {path}\ndata {}", content.len()).expect("memory");
            stream.extend_from_slice(content);
            stream.push(b'\n');
        }
    }
    let mut child = git_command(repo)
        .args(["fast-import", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("spawn fast-import");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&stream)
        .expect("write stream");
    assert!(child.wait().expect("fast-import").success());
}

#[test]
fn twenty_thousand_changed_files_stay_within_budget() {
    let temp = common::empty_repo();
    let files = |version: &str| -> Vec<(String, Vec<u8>)> {
        (0..20_000)
            .map(|i| {
                (
                    format!("d{:03}/file_{i}.txt", i % 200),
                    format!("header {i}\nline two\nversion {version}\nline four\n").into_bytes(),
                )
            })
            .collect()
    };
    fast_import(&temp.path, &[files("one"), files("two")]);
    let start = std::time::Instant::now();
    let options = Options::default();
    let p = packet_between(&temp.path, Some("main~1"), "main", &options);
    let elapsed = start.elapsed();
    assert_eq!(p.coverage.files_total, 20_000);
    assert!(
        p.coverage.not_included.count > 15_000,
        "{:?}",
        p.coverage.not_included.count
    );
    assert!(p.coverage.full.count > 100);
    assert_eq!(
        p.coverage.bytes_total, None,
        "left-out files are not diffed"
    );
    assert!(p.coverage.not_included.paths.len() <= packet::LISTED_PATHS);
    assert!(text(&p).contains("[git-pair] not included (over the 262144-byte budget): "));
    assert!(elapsed.as_secs() < 30, "took {elapsed:?}");
}

#[test]
fn fifty_megabyte_files() {
    let temp = common::empty_repo();
    let line = |i: usize| {
        format!("line {i:08} of a large generated text file, padded to look like data\n")
    };
    let big: String = (0..750_000).map(line).collect();
    assert!(big.len() > 50_000_000);
    std::fs::write(temp.path.join("big.txt"), &big).expect("write big file");
    commit_all(&temp.path, "big");
    let edited = big.replacen("line 00350000 of", "line 00350000 EDITED of", 1) + "appended\n";
    std::fs::write(temp.path.join("big.txt"), &edited).expect("write big file");
    std::fs::write(temp.path.join("big-new.txt"), &big).expect("write big file");
    commit_all(&temp.path, "edit big, add another");

    let options = Options::default();
    let p = packet_between(&temp.path, Some("HEAD~1"), "HEAD", &options);
    let git = git_ok(&temp.path, &["diff", "HEAD~1", "HEAD", "--", "big.txt"]);
    let t = text(&p);
    assert!(
        t.ends_with(std::str::from_utf8(&git).expect("UTF-8")),
        "the edited file's small diff is complete"
    );
    assert!(
        t.contains("[git-pair] clipped: "),
        "the new 50 MB file is clipped"
    );
    assert_eq!(p.coverage.clipped.paths, vec!["big-new.txt"]);

    // Unborn base: the whole 50 MB file is an addition.
    let p = packet_between(&temp.path, None, "HEAD~1", &options);
    assert_eq!(p.coverage.clipped.count, 1);
}

#[test]
fn binary_and_non_utf8_files() {
    let temp = common::empty_repo();
    sh(
        &temp.path,
        "printf 'PNG\\0\\1\\2' >img.png && printf 'caf\\351\\n' >latin1.txt && printf 'ok\\n' >ok.txt && git add -A && git commit -qm base && printf 'PNG\\0\\3' >img.png && printf 'cr\\350me\\n' >>latin1.txt && printf 'still ok\\n' >>ok.txt && printf '\\0\\0' >new.bin && git add -A && git commit -qm change",
    );
    let p = packet_between(&temp.path, Some("HEAD~1"), "HEAD", &Options::default());
    let t = text(&p);
    assert!(t.contains("Binary files a/img.png and b/img.png differ\n"));
    assert!(t.contains("Binary files /dev/null and b/new.bin differ\n"));
    assert!(t.contains("diff --git a/latin1.txt b/latin1.txt\nindex "));
    // Latin-1 text is text: shown with the stray bytes escaped, not called binary.
    assert!(t.contains("[git-pair] bytes that are not UTF-8 text (and NUL) are shown as \\xNN\n"));
    assert!(t.contains(" caf\\xe9\n+cr\\xe8me\n"), "{t}");
    assert!(t.contains("+still ok\n"));
    assert_eq!(p.coverage.binary, 2);
    assert_eq!(p.coverage.full.count, 4);
}

#[test]
fn symlinks() {
    let temp = common::empty_repo();
    sh(
        &temp.path,
        "printf 'x\\n' >target && ln -s target link && ln -s target will-be-file && git add -A && git commit -qm base && rm link && ln -s elsewhere link && rm will-be-file && printf 'file now\\n' >will-be-file && ln -s \"$(printf 'caf\\351')\" odd-link && git add -A && git commit -qm change",
    );
    let p = packet_between(&temp.path, Some("HEAD~1"), "HEAD", &Options::default());
    let t = text(&p);
    assert!(t.contains(
        "-target\n\\ No newline at end of file\n+elsewhere\n\\ No newline at end of file\n"
    ));
    assert!(t.contains("deleted file mode 120000"));
    assert!(t.contains("new file mode 100644"));
    // A symlink whose target is not UTF-8 is shown as metadata only.
    assert!(t.contains("diff --git a/odd-link b/odd-link\nnew file mode 120000\n"));
    assert_eq!(p.coverage.files_total, 3);
}

#[test]
fn submodules() {
    let temp = common::empty_repo();
    sh(
        &temp.path,
        r#"
mkdir ../subrepo && (cd ../subrepo && git init -q -b main && printf 's\n' >s && git add -A && git commit -qm s1 && printf 't\n' >t && git add -A && git commit -qm s2)
printf 'a\n' >a && git add -A && git commit -qm base
git -c protocol.file.allow=always submodule add -q ../subrepo sub >/dev/null 2>&1 && git commit -qm "add submodule"
(cd sub && git checkout -q HEAD~1) && git add sub && git commit -qm "move submodule"
"#,
    );
    for (old, new) in [("HEAD~2", "HEAD~1"), ("HEAD~1", "HEAD"), ("HEAD~2", "HEAD")] {
        let p = packet_between(&temp.path, Some(old), new, &Options::default());
        let git = git_ok(&temp.path, &["diff", old, new]);
        assert_eq!(p.diff, git, "{old}..{new}");
        assert!(text(&p).contains("Subproject commit "));
    }
}

#[test]
fn file_directory_changes() {
    let temp = common::empty_repo();
    sh(
        &temp.path,
        "printf 'f\\n' >thing && mkdir dir && printf 'd\\n' >dir/inner && git add -A && git commit -qm base && rm thing && mkdir thing && printf 'now inside\\n' >thing/file && rm -r dir && printf 'now a file\\n' >dir && git add -A && git commit -qm swap",
    );
    let p = packet_between(&temp.path, Some("HEAD~1"), "HEAD", &Options::default());
    assert_eq!(p.diff, git_ok(&temp.path, &["diff", "HEAD~1", "HEAD"]));
    assert_eq!(p.coverage.files_total, 4);
}

#[test]
fn unborn_base_diffs_against_the_empty_tree() {
    let temp = common::empty_repo();
    sh(
        &temp.path,
        "printf 'a\\n' >a && mkdir d && printf 'b\\n' >d/b && git add -A && git commit -qm first",
    );
    let p = packet_between(&temp.path, None, "HEAD", &Options::default());
    let git = git_ok(
        &temp.path,
        &["diff", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "HEAD"],
    );
    assert_eq!(p.diff, git);
    assert_eq!(p.coverage.full.count, 2);
}

#[test]
fn files_rendered_on_several_threads_come_out_in_git_order() {
    // Enough files for the parallel renderer, of uneven sizes so the threads finish out of
    // order; a packet and the passes must still be `git diff`, byte for byte.
    let temp = common::empty_repo();
    let dir = temp.path.as_path();
    for i in 0..80 {
        let body: String = (0..(i * 7) % 53 + 1)
            .map(|l| format!("line {l}\n"))
            .collect();
        std::fs::create_dir_all(dir.join(format!("d{}", i % 5))).expect("mkdir");
        std::fs::write(dir.join(format!("d{}/f{i:02}.txt", i % 5)), body).expect("write");
    }
    commit_all(dir, "base");
    for i in (0..80).filter(|i| i % 3 != 0) {
        let path = dir.join(format!("d{}/f{i:02}.txt", i % 5));
        let mut body = std::fs::read_to_string(&path).expect("read");
        body = body.replacen("line 0\n", &format!("changed {i}\n"), 1);
        body.push_str(&"tail\n".repeat(i % 11));
        std::fs::write(&path, body).expect("write");
    }
    commit_all(dir, "change");
    let git = git_ok(dir, &["diff", "HEAD~1", "HEAD"]);
    let repo = common::open(dir);
    let old = oid(&git_str(dir, &["rev-parse", "HEAD~1"]));
    let new = oid(&git_str(dir, &["rev-parse", "HEAD^{tree}"]));
    let scanner = git_pair::secrets::Scanner::builtin();

    let mut differ = Differ::new(&repo, diff::Options::default()).expect("differ");
    let changes = differ.changes(Some(old), new).expect("changes");
    assert!(changes.len() > 50, "{} changes", changes.len());
    let packet = packet::build_redacted(&mut differ, &changes, &Options::default(), &scanner)
        .expect("packet");
    assert_eq!(text(&packet), String::from_utf8_lossy(&git));

    let options = Options {
        budget_bytes: 4096,
        ..Options::default()
    };
    let mut differ = Differ::for_tree(&repo, diff::Options::default(), new).expect("differ");
    let passes =
        packet::passes::build(&mut differ, &changes, &options, 1 << 20, &scanner).expect("passes");
    assert!(passes.passes.len() > 3, "{} passes", passes.passes.len());
    assert_eq!(passes.passes.concat(), git);
}
