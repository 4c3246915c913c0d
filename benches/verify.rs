//! Benchmark: `git pair verify` over COMMITS commits against `git log` over the same range,
//! side by side in one run, in a CI-like clone holding RUNS runs.
//!
//! Run: `cargo bench --bench verify` (optionally `COMMITS=1000 RUNS=1000 ITERATIONS=9`), or
//! `tests/bench/verify.sh`. The fixture is generated once through the library (real runs:
//! `create_run` + `append`, one commit per record, reviewed snapshots stored as subtrees)
//! under target/bench-fixtures/, then cloned the way CI gets it: `git clone` of a gc'ed
//! mirror and a plain `git fetch` of `refs/pair/runs/*` and `refs/notes/pair`. One run
//! approved each commit of the range (its note attached); the other runs approved other
//! trees after a round of requested changes. Generation time is not measured.
//!
//! Two cases, interleaved so machine load hits both alike:
//!   notes:    every commit has its note: verify confirms each in the named run's records,
//!             against `git log --notes=pair` (which reads the same notes);
//!   no notes: the clone fetched the runs but not the notes (or a rebase dropped them):
//!             verify indexes every run's approved snapshots once, then looks trees up,
//!             against plain `git log`.
//! Wall-clock and CPU medians are both printed, each as a ratio (CPU time is not inflated by
//! other load on the machine; verify reads runs on up to two threads, so its wall clock can
//! be below its CPU time). Targets (issue "Scale"): ≤ 1.5× with notes, ≤ 2× without, on the
//! wall clock; exit status 1 when either is missed.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a benchmark's output is its purpose

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use gix::ObjectId;
use gix::object::tree::EntryKind;

use git_pair::model::{
    Body, Coder, Finish, Review, ReviewAttempt, ReviewDispatch, RunId, Start, Verdict,
};
use git_pair::store::{Append, Content, Material, Repo, notes};

/// verify / `git log --notes=pair`, notes fetched.
const TARGET_NOTES: f64 = 1.5;
/// verify / `git log`, no notes (every commit found by its tree).
const TARGET_NO_NOTES: f64 = 2.0;

fn env_usize(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> ExitCode {
    if std::env::args().any(|a| a == "--list") {
        return ExitCode::SUCCESS;
    }
    let commits = env_usize("COMMITS", 1000);
    let runs = env_usize("RUNS", 1000).max(commits);
    let iterations = env_usize("ITERATIONS", 9);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/bench-fixtures")
        .join(format!("verify-{commits}c-{runs}r"));
    let remote = root.join("remote.git");
    if !remote.join("packed-refs").exists() {
        let t = Instant::now();
        generate(&root, &remote, commits, runs);
        eprintln!("fixture generated in {:.1} s", t.elapsed().as_secs_f64());
    }
    let home = root.join("home");
    let with_notes = root.join("ci");
    let without_notes = root.join("ci-no-notes");
    for (dir, refspecs) in [
        (
            &with_notes,
            &[
                "+refs/pair/runs/*:refs/pair/runs/*",
                "+refs/notes/pair:refs/notes/pair",
            ][..],
        ),
        (&without_notes, &["+refs/pair/runs/*:refs/pair/runs/*"][..]),
    ] {
        let _ = std::fs::remove_dir_all(dir);
        run(
            &home,
            &root,
            "git",
            &["clone", "-q", path(&remote), path(dir)],
        );
        let mut fetch = vec!["fetch", "-q", "--no-tags", "origin"];
        fetch.extend_from_slice(refspecs);
        run(&home, dir, "git", &fetch);
        run(
            &home,
            dir,
            "git",
            &["checkout", "-q", "--detach", "origin/feature"],
        );
    }
    let range = "origin/main..HEAD";
    let verify_args = ["verify", range, "--json"];
    let log_args = ["log", "--notes=pair", range];
    let plain_log_args = ["log", range];

    // Correctness first: every commit approved, through the note and through the index.
    for (dir, via) in [(&with_notes, "note"), (&without_notes, "tree")] {
        let out = output(&home, dir, bin(), &verify_args);
        let v: serde_json::Value = serde_json::from_str(out.trim()).expect("verify prints JSON");
        assert_eq!(v["ok"], true, "{out}");
        let list = v["commits"].as_array().expect("commits");
        assert_eq!(list.len(), commits);
        assert!(list.iter().all(|c| c["via"] == via), "{out}");
    }
    let noted = output(&home, &with_notes, "git", &log_args);
    assert_eq!(noted.matches("Notes (pair):").count(), commits);

    // Interleaved, so machine load hits all four alike.
    let mut samples: [Vec<Sample>; 4] = Default::default();
    for _ in 0..iterations {
        samples[0].push(timed(&home, &with_notes, bin(), &verify_args));
        samples[1].push(timed(&home, &with_notes, "git", &log_args));
        samples[2].push(timed(&home, &without_notes, bin(), &verify_args));
        samples[3].push(timed(&home, &without_notes, "git", &plain_log_args));
    }
    let wall: Vec<Duration> = samples
        .iter()
        .map(|s| median(s.iter().map(|x| x.wall).collect()))
        .collect();
    let cpu: Vec<Duration> = samples
        .iter()
        .map(|s| median(s.iter().map(|x| x.cpu).collect()))
        .collect();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!(
        "verify {commits} commits with {runs} runs present, median of {iterations}, release build \
         (wall clock, and CPU time that machine load does not inflate):"
    );
    let mut met = true;
    for (case, i, git, target) in [
        (
            "notes fetched (the CI setup)",
            0,
            "git log --notes=pair",
            TARGET_NOTES,
        ),
        (
            "no notes: every commit found by its tree",
            2,
            "git log",
            TARGET_NO_NOTES,
        ),
    ] {
        let (w, c) = (ratio(wall[i], wall[i + 1]), ratio(cpu[i], cpu[i + 1]));
        println!("  {case}:");
        println!(
            "    wall  git pair verify {:>7.1} ms   {git:<20} {:>6.1} ms   ratio {w:>5.2}   (target <= {target})",
            ms(wall[i]),
            ms(wall[i + 1])
        );
        println!(
            "    cpu   git pair verify {:>7.1} ms   {git:<20} {:>6.1} ms   ratio {c:>5.2}",
            ms(cpu[i]),
            ms(cpu[i + 1])
        );
        met &= w <= target;
    }
    println!(
        "  targets: wall ratio <= {TARGET_NOTES} with notes, <= {TARGET_NO_NOTES} without (CPU ratios reported)"
    );
    if met {
        println!("  target met");
        ExitCode::SUCCESS
    } else {
        println!("  TARGET MISSED");
        ExitCode::FAILURE
    }
}

/// A repository whose `feature` branch holds `commits` commits on top of `main`, each
/// approved by its own run (note attached), plus `runs - commits` runs that approved other
/// trees; mirrored into a bare, gc'ed remote.
fn generate(root: &Path, remote: &Path, commits: usize, runs: usize) {
    let _ = std::fs::remove_dir_all(root);
    let source = root.join("source");
    std::fs::create_dir_all(&source).expect("mkdir");
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    run(&home, &source, "git", &["init", "-q", "-b", "main"]);
    for i in 0..50 {
        let dir = source.join(format!("src/m{}", i % 5));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join(format!("f{i}.rs")),
            format!("pub fn f{i}() {{}}\n"),
        )
        .expect("write");
    }
    run(&home, &source, "git", &["add", "-A"]);
    run(&home, &source, "git", &["commit", "-q", "-m", "initial"]);
    run(&home, &source, "git", &["checkout", "-q", "-b", "feature"]);
    let repo = Repo::discover(&source).expect("open");
    let main = repo.resolve_commit("main").expect("main");
    let mut parent = main;
    for i in 0..runs {
        let run_id = RunId::generate(1_795_994_100 + i as i64);
        // The run's work: for the first `commits` runs, the next commit of the branch; for
        // the others, a tree that is never committed.
        let base_tree = repo.commit_tree(parent).expect("tree");
        let mut editor = repo.gix().edit_tree(base_tree).expect("tree editor");
        let blob = repo
            .write_blob(format!("pub fn work_{i}() -> u32 {{ {i} }}\n").as_bytes())
            .expect("blob");
        editor
            .upsert(format!("src/m{}/work_{i}.rs", i % 5), EntryKind::Blob, blob)
            .expect("upsert");
        let tree = editor.write().expect("write tree").detach();
        let committed = i < commits;
        let base = if committed { parent } else { main };
        write_run(&repo, &run_id, base, tree, &source, !committed);
        if committed {
            let commit = repo
                .write_commit(&format!("work {i}\n"), tree, vec![parent])
                .expect("commit");
            let line = format!(
                "pair-run={run_id} verdict=APPROVED rounds=1 reviewer=codex cost_usd=0.42 tree={tree}"
            );
            notes::add_line(&repo, commit, &line).expect("note");
            parent = commit;
        }
    }
    run(
        &home,
        &source,
        "git",
        &["update-ref", "refs/heads/feature", &parent.to_string()],
    );
    run(
        &home,
        root,
        "git",
        &["clone", "-q", "--mirror", path(&source), path(remote)],
    );
    run(&home, remote, "git", &["gc", "-q"]);
}

/// One finished run that approved `snapshot`: start, (a round of requested changes,) a coder
/// round, dispatch, approving review, finish — the records and material `git pair` writes.
fn write_run(
    repo: &Repo,
    run_id: &RunId,
    base: ObjectId,
    snapshot: ObjectId,
    cwd: &Path,
    two_rounds: bool,
) {
    let start = Body::Start(Start {
        run_id: run_id.to_string(),
        task: format!("benchmark task {run_id}"),
        cwd: cwd.display().to_string(),
        branch: "feature".into(),
        base: Some(base.into()),
        coder: "claude".into(),
        reviewer: "codex".into(),
        max_rounds: 5,
        budget_usd: None,
        config: Default::default(),
        flags: None,
        claimed: false,
        carrier: false,
        base_tree: None,
    });
    repo.create_run(run_id, Some(base), Append::record(start, "start: bench"))
        .expect("create run");
    let rounds: &[(u32, Verdict)] = if two_rounds {
        &[(1, Verdict::ChangesRequested), (2, Verdict::Approved)]
    } else {
        &[(1, Verdict::Approved)]
    };
    for &(round, verdict) in rounds {
        let append = |append: Append| {
            repo.append(run_id, |_| Ok(append.clone()))
                .expect("append")
                .record
        };
        append(Append::record(
            Body::Coder(Coder {
                summary: format!("round {round}: changed a few files and ran the tests"),
                tool: "claude".into(),
                findings_addressed: None,
                session_id: None,
                responses: vec![],
                extra_round: false,
                round: Some(round),
            }),
            format!("coder {round}"),
        ));
        let mut dispatch = Append::record(
            Body::ReviewDispatch(ReviewDispatch {
                round,
                reviewers: vec!["codex".into()],
                snapshot: snapshot.into(),
                mode: "code".into(),
                again: false,
                runner: None,
                redacted: Vec::new(),
                over_budget: false,
                parallelism: None,
                carried: Vec::new(),
            }),
            format!("review {round}: dispatched"),
        );
        dispatch.put(round, Material::Snapshot, Content::Tree(snapshot));
        dispatch.put(
            round,
            Material::Diff,
            Content::Blob(format!("diff of round {round}\n").into_bytes()),
        );
        let dispatched = append(dispatch);
        let mut review = Append::record(
            Body::Review(Review {
                model: None,
                effort: None,
                dispatch: dispatched.id,
                round,
                verdict: Some(verdict),
                outcome: "completed".into(),
                tool: "codex".into(),
                findings: vec![],
                reviewers: vec![ReviewAttempt {
                    reviewer: "codex".into(),
                    tool: "codex".into(),
                    outcome: "completed".into(),
                    verdict: Some(verdict),
                    session_id: None,
                    attempts: 1,
                    duration_ms: 1000,
                    error: None,
                    cost_usd: None,
                }],
                fallback_used: false,
                snapshot: Some(snapshot.into()),
                coverage_warning: None,
                error: None,
            }),
            format!("review {round}: {verdict}"),
        );
        review.put(
            round,
            Material::Output,
            Content::Blob(format!("VERDICT: {verdict}\n").into_bytes()),
        );
        // The stored answer verify re-reads before the run may approve anything.
        review.put(
            round,
            Material::Attempts,
            Content::Blob(
                format!(
                    "[{{\"reviewer\":\"codex\",\"attempt\":{{\"answer\":\"Reviewed.\\nVERDICT: {verdict}\\n\"}}}}]"
                )
                .into_bytes(),
            ),
        );
        append(review);
    }
    repo.append(run_id, |_| {
        Ok(Append::record(
            Body::Finish(Finish {
                pr_final: false,
                verdict: Verdict::Approved,
                override_: false,
                pr: None,
                accept_partial: false,
            }),
            "finish: APPROVED",
        ))
    })
    .expect("finish");
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_git-pair")
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn command(home: &Path, dir: &Path, program: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .env("HOME", home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .env("LC_ALL", "C");
    cmd
}

/// Runs a command to success (its output discarded) and returns how long it took.
fn run(home: &Path, dir: &Path, program: &str, args: &[&str]) -> Duration {
    timed(home, dir, program, args).wall
}

/// Wall-clock and CPU (user + system) time of one command.
struct Sample {
    wall: Duration,
    cpu: Duration,
}

/// Runs a command to success (its output discarded) and measures it.
fn timed(home: &Path, dir: &Path, program: &str, args: &[&str]) -> Sample {
    let mut cmd = command(home, dir, program, args);
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    let cpu_before = children_cpu();
    let t = Instant::now();
    let out = cmd.output().expect("spawn");
    let wall = t.elapsed();
    let cpu = children_cpu().saturating_sub(cpu_before);
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Sample { wall, cpu }
}

/// CPU time of every child process waited for so far. Unlike wall-clock time it does not
/// grow when other work competes for the machine's cores.
fn children_cpu() -> Duration {
    // SAFETY: getrusage only writes the struct it is given, which is plain data.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

fn output(home: &Path, dir: &Path, program: &str, args: &[&str]) -> String {
    let out = command(home, dir, program, args).output().expect("spawn");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}
