//! Benchmark of the review packet pipeline against git's equivalent, side by side in one run.
//!
//! A generated repository of 20,000 files is changed in its work tree (200 files, then all
//! 20,000); each iteration times, on the same work-tree state:
//! - ours: open the repository, snapshot the work tree (objects written), diff base →
//!   snapshot, render and budget the packet;
//! - ours with object memory: the same without writing any object to disk;
//! - git: `cp .git/index tmp && GIT_INDEX_FILE=tmp git add -A && GIT_INDEX_FILE=tmp git diff
//!   --cached HEAD`;
//! - and, for the diff engine alone, `git diff HEAD <tree>` against `diff::diff_trees` +
//!   `diff::render` with every file rendered (outputs asserted equal).
//!
//! Objects created by a run (loose or packed) are deleted before the next run, so every run
//! writes its objects, and the file system is synced between runs. Medians are printed. Run with `cargo bench --bench packet`
//! (`BENCH_ITERATIONS=n`, `BENCH_FILES=n` to change the defaults of 7 and 20000;
//! `BENCH_SCENARIOS=small`, `large` or `passes` to run some of them; `passes` times a
//! 5,000-file change reviewed in passes against `git diff` of it, and is not in the default).
//!
//! A benchmark's output is its point, hence the print lints are allowed here.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use git_pair::diff::{self, Differ};
use git_pair::packet;
use git_pair::worktree::snapshot;

fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .env("GIT_AUTHOR_DATE", "@1700000000 +0000")
        .env("GIT_COMMITTER_DATE", "@1700000000 +0000");
    cmd
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().expect("spawn git");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn file_path(i: usize) -> String {
    format!("src/m{:03}/file_{i:05}.rs", i % 400)
}

fn base_content(i: usize) -> String {
    let mut s = format!("// module {i}\n\nfn function_{i}(x: u32) -> u32 {{\n");
    for line in 0..24 {
        s.push_str(&format!(
            "    let v{line} = x.wrapping_mul({}) + {line};\n",
            i + line
        ));
    }
    s.push_str("    x\n}\n");
    s
}

/// A repository with `files` committed files, checked out, index refreshed.
fn setup(dir: &Path, files: usize) {
    run(git(dir).args(["init", "-q", "-b", "main"]));
    let mut stream = Vec::new();
    stream.extend_from_slice(b"commit refs/heads/main\ncommitter Bench <bench@example.com> 1700000000 +0000\ndata 4\nbase\n");
    for i in 0..files {
        let content = base_content(i);
        write!(
            stream,
            "M 100644 inline {}\ndata {}\n{content}\n",
            file_path(i),
            content.len()
        )
        .expect("memory");
    }
    let mut child = git(dir)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn fast-import");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&stream)
        .expect("stream");
    assert!(child.wait().expect("fast-import").success());
    run(git(dir).args(["reset", "-q", "--hard", "main"]));
    // Let file times fall clearly before the index's, so unchanged files are not racy.
    std::thread::sleep(Duration::from_millis(1100));
    run(git(dir).args(["update-index", "-q", "--refresh"]));
}

/// Appends an iteration-specific line to the first `changed` files.
fn change(dir: &Path, changed: usize, files: usize, iteration: usize) {
    let step = (files / changed).max(1);
    for i in (0..files).step_by(step).take(changed) {
        let path = dir.join(file_path(i));
        let mut content = base_content(i);
        content.push_str(&format!("// changed in iteration {iteration}\n"));
        std::fs::write(path, content).expect("write");
    }
}

/// Loose object files and pack files.
fn object_files(git_dir: &Path) -> HashSet<PathBuf> {
    let mut set = HashSet::new();
    for entry in std::fs::read_dir(git_dir.join("objects"))
        .expect("objects dir")
        .flatten()
    {
        let name = entry.file_name();
        if (name.len() == 2 || name == "pack") && entry.path().is_dir() {
            for object in std::fs::read_dir(entry.path())
                .expect("object dir")
                .flatten()
            {
                set.insert(object.path());
            }
        }
    }
    set
}

/// Deletes the objects a run added, then flushes the file system so that the next run does not
/// pay for this run's write-back.
fn remove_new_objects(git_dir: &Path, before: &HashSet<PathBuf>) {
    for path in object_files(git_dir) {
        if !before.contains(&path) {
            std::fs::remove_file(path).expect("remove new object file");
        }
    }
    let _ = Command::new("sync").status();
}

struct Ours {
    snapshot: Duration,
    diff_and_packet: Duration,
    total: Duration,
    tree: String,
    packet: packet::Packet,
}

fn ours(dir: &Path, in_memory: bool) -> Ours {
    let start = Instant::now();
    let mut repo = gix::open_opts(dir, gix::open::Options::isolated()).expect("open");
    if in_memory {
        repo = repo.with_object_memory();
    }
    let base = repo.head_id().expect("HEAD").detach();
    let tree = snapshot::write_worktree_tree(&repo).expect("snapshot");
    let snapshot_done = Instant::now();
    let mut differ = Differ::new(&repo, diff::Options::default()).expect("differ");
    let changes = differ.changes(Some(base), tree).expect("changes");
    let packet = packet::build_from_changes(&mut differ, &changes, &packet::Options::default())
        .expect("packet");
    let end = Instant::now();
    Ours {
        snapshot: snapshot_done - start,
        diff_and_packet: end - snapshot_done,
        total: end - start,
        tree: tree.to_string(),
        packet,
    }
}

/// `git add -A` into a copy of the index, then `git diff --cached HEAD`; returns the time,
/// the tree `git write-tree` gives (not timed) and the diff.
fn git_pipeline(dir: &Path) -> (Duration, String, Vec<u8>) {
    let tmp = dir.join(".git/bench-index");
    let start = Instant::now();
    std::fs::copy(dir.join(".git/index"), &tmp).expect("copy index");
    run(git(dir).env("GIT_INDEX_FILE", &tmp).args(["add", "-A"]));
    let diff = run(git(dir)
        .env("GIT_INDEX_FILE", &tmp)
        .args(["diff", "--cached", "HEAD"]));
    let elapsed = start.elapsed();
    let tree = String::from_utf8(run(git(dir).env("GIT_INDEX_FILE", &tmp).arg("write-tree")))
        .expect("hex")
        .trim()
        .to_owned();
    std::fs::remove_file(&tmp).expect("remove temporary index");
    (elapsed, tree, diff)
}

/// Times `git diff HEAD <tree>` and our `diff_trees` + `render` of the same trees (both
/// render every file), asserting equal output; `ours_first` alternates the order.
fn full_diffs(dir: &Path, tree: &str, ours_first: bool) -> (Duration, Duration) {
    let time_git = || {
        let start = Instant::now();
        let out = run(git(dir).args(["diff", "HEAD", tree]));
        (start.elapsed(), out)
    };
    let time_ours = || {
        let start = Instant::now();
        let repo = gix::open_opts(dir, gix::open::Options::isolated()).expect("open");
        let base = repo.head_id().expect("HEAD").detach();
        let new = gix::ObjectId::from_hex(tree.as_bytes()).expect("hex");
        let files =
            diff::diff_trees(&repo, Some(base), new, &diff::Options::default()).expect("diff");
        let mut out = Vec::new();
        diff::render(&files, &mut out).expect("memory");
        (start.elapsed(), out)
    };
    let ((g, g_out), (o, o_out)) = if ours_first {
        let o = time_ours();
        (time_git(), o)
    } else {
        let g = time_git();
        (g, time_ours())
    };
    assert!(g_out == o_out, "full diff differs from git diff");
    (g, o)
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:8.1} ms", d.as_secs_f64() * 1000.0)
}

fn scenario(dir: &Path, files: usize, changed: usize, iterations: usize) {
    let git_dir = dir.join(".git");
    let (mut ours_total, mut ours_snapshot, mut ours_rest, mut memory_total, mut git_total) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut git_full_diff, mut ours_full_diff) = (Vec::new(), Vec::new());
    let mut last_packet = None;
    for iteration in 0..iterations {
        change(dir, changed, files, iteration);
        let before = object_files(&git_dir);
        let _ = Command::new("sync").status();
        // Alternate who goes first, so neither always profits from a warmer cache.
        let (mut o, mut g, mut m) = (None, None, None);
        let order = if iteration % 2 == 0 {
            [0, 1, 2]
        } else {
            [1, 0, 2]
        };
        for which in order {
            match which {
                0 => o = Some(ours(dir, false)),
                1 => {
                    let run = git_pipeline(dir);
                    // The renderer alone, everything rendered: `git diff HEAD <tree>` vs ours,
                    // on the tree git just wrote.
                    let (g_full, o_full) = full_diffs(dir, &run.1, iteration % 2 == 0);
                    git_full_diff.push(g_full);
                    ours_full_diff.push(o_full);
                    g = Some(run);
                }
                _ => m = Some(ours(dir, true)),
            }
            remove_new_objects(&git_dir, &before);
        }
        let (o, (g_time, g_tree, g_diff), m) = (o.expect("ran"), g.expect("ran"), m.expect("ran"));
        assert_eq!(o.tree, g_tree, "snapshot tree differs from git's");
        assert_eq!(m.tree, g_tree, "in-memory snapshot tree differs from git's");
        if o.packet.coverage.summary.is_none() {
            assert_eq!(
                o.packet.diff, g_diff,
                "packet differs from git diff --cached"
            );
        }
        assert!(o.packet.diff.len() <= packet::Options::default().budget_bytes);
        ours_total.push(o.total);
        ours_snapshot.push(o.snapshot);
        ours_rest.push(o.diff_and_packet);
        memory_total.push(m.total);
        git_total.push(g_time);
        last_packet = Some((o.packet, g_diff.len()));
    }
    let (packet, git_len) = last_packet.expect("at least one iteration");
    let c = &packet.coverage;
    println!("\n{files} files, {changed} changed, {iterations} iterations (median):");
    println!(
        "  git add -A (temp index) + git diff --cached   {}",
        ms(median(git_total.clone()))
    );
    println!(
        "  ours: snapshot + diff + render + budget        {}",
        ms(median(ours_total.clone()))
    );
    println!(
        "    of which snapshot (objects written)          {}",
        ms(median(ours_snapshot))
    );
    println!(
        "    of which diff + render + budget              {}",
        ms(median(ours_rest))
    );
    println!(
        "  ours with object memory (nothing written)      {}",
        ms(median(memory_total))
    );
    println!(
        "  ratio ours / git: {:.2}",
        median(ours_total).as_secs_f64() / median(git_total).as_secs_f64()
    );
    println!(
        "  diff alone, every file rendered: git diff HEAD <tree>  {}",
        ms(median(git_full_diff))
    );
    println!(
        "  diff alone, every file rendered: ours (diff_trees)    {}",
        ms(median(ours_full_diff))
    );
    println!(
        "  packet: {} bytes (git diff: {git_len} bytes); full {}, clipped {}, names only {}, not included {}; {}",
        packet.diff.len(),
        c.full.count,
        c.clipped.count,
        c.names_only.count,
        c.not_included.count,
        c.summary.as_deref().unwrap_or("complete")
    );
}

/// The review of a change over the packet budget: `git diff HEAD <tree>` against the passes
/// that carry every changed byte (rendered, redacted, escaped, split), attributes from the
/// tree alone; `ours_first` alternates the order. Returns (git, ours, passes, bytes).
fn passes_vs_git(dir: &Path, tree: &str, ours_first: bool) -> (Duration, Duration, usize, usize) {
    let time_git = || {
        let start = Instant::now();
        let out = run(git(dir).args(["diff", "HEAD", tree]));
        (start.elapsed(), out.len())
    };
    let time_ours = || {
        let start = Instant::now();
        let repo = gix::open_opts(dir, gix::open::Options::isolated()).expect("open");
        let base = repo.head_id().expect("HEAD").detach();
        let new = gix::ObjectId::from_hex(tree.as_bytes()).expect("hex");
        let mut differ = Differ::for_tree(&repo, diff::Options::default(), new).expect("differ");
        let changes = differ.changes(Some(base), new).expect("changes");
        let passes = packet::passes::build(
            &mut differ,
            &changes,
            &packet::Options::default(),
            1024 * 1024,
            &git_pair::secrets::Scanner::builtin(),
        )
        .expect("passes");
        assert!(
            passes.coverage.unreviewed.count == 0,
            "every file is carried"
        );
        let bytes = passes.passes.iter().map(Vec::len).sum();
        (start.elapsed(), passes.passes.len(), bytes)
    };
    if ours_first {
        let (o, n, bytes) = time_ours();
        let (g, _) = time_git();
        (g, o, n, bytes)
    } else {
        let (g, _) = time_git();
        let (o, n, bytes) = time_ours();
        (g, o, n, bytes)
    }
}

/// A change of `changed` files, well over the packet budget, reviewed in passes.
fn passes_scenario(dir: &Path, files: usize, changed: usize, iterations: usize) {
    let (mut git_times, mut our_times) = (Vec::new(), Vec::new());
    let mut shape = (0, 0);
    for iteration in 0..iterations {
        change(dir, changed, files, iteration);
        let (_, tree, _) = git_pipeline(dir);
        let (g, o, n, bytes) = passes_vs_git(dir, &tree, iteration % 2 == 0);
        git_times.push(g);
        our_times.push(o);
        shape = (n, bytes);
    }
    let (g, o) = (median(git_times), median(our_times));
    println!(
        "\n{files} files, {changed} changed, reviewed in passes, {iterations} iterations (median):"
    );
    println!(
        "  git diff HEAD <tree>                              {}",
        ms(g)
    );
    println!(
        "  ours: every pass (render, redact, escape, split)   {}",
        ms(o)
    );
    println!(
        "  ratio ours / git: {:.2}; {} passes, {} bytes in all",
        o.as_secs_f64() / g.as_secs_f64(),
        shape.0,
        shape.1
    );
}

fn main() {
    let iterations: usize = std::env::var("BENCH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let files: usize = std::env::var("BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = temp.path().join("repo");
    std::fs::create_dir(&dir).expect("repo dir");
    let setup_start = Instant::now();
    setup(&dir, files);
    println!(
        "set up {files} files in {:.1} s",
        setup_start.elapsed().as_secs_f64()
    );
    let scenarios = std::env::var("BENCH_SCENARIOS").unwrap_or_else(|_| "small large".to_owned());
    if scenarios.contains("small") {
        scenario(&dir, files, 200, iterations);
        run(git(&dir).args(["checkout", "-q", "--", "."]));
    }
    if scenarios.contains("large") {
        scenario(&dir, files, files, iterations.min(5));
        run(git(&dir).args(["checkout", "-q", "--", "."]));
    }
    if scenarios.contains("passes") {
        passes_scenario(&dir, files, 5_000, iterations);
    }
}
