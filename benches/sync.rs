//! Benchmark: `git pair pull` against a plain `git fetch` of the same refs, side by side in
//! one run, on a remote holding RUNS runs of RECORDS records each plus one note per run.
//!
//! Run: `cargo bench --bench sync` (optionally `RUNS=1000 RECORDS=10 ITERATIONS=5`). The
//! fixture is generated once through the library's run store (real runs: `create_run` +
//! `append`, one commit per record) under target/bench-fixtures/, then mirrored into a bare,
//! gc'ed remote; generation time is not measured. Each iteration, interleaved so machine
//! load hits both alike:
//!   cold:  a fresh clone (code only) → `git pair pull`, vs a fresh clone →
//!          `git fetch origin +refs/pair/*:refs/pair/* +refs/notes/pair:refs/notes/pair`;
//!   no-op: the same two commands again in those clones (nothing to transfer), and the
//!          git fetch once more after `git pack-refs --all` (git pair packs its own
//!          namespaces, so this is the like-for-like figure).
//!   push, nothing new: `git pair push` in the clone that just pulled everything (it pulls,
//!          finds nothing to publish, so scans nothing), vs `git push --atomic` of the same
//!          refs from the plain clone (everything up to date); with `BASELINE_BIN=<path>`,
//!          also that other git-pair binary's push (e.g. one built before the push scan).
//! Then, for information, `git pair push` of everything to an empty bare remote (which
//! scans every run it publishes for secrets) against `git push --atomic` of the same refs.
//! Targets: cold ≤ 2× git fetch, no-op ≤ 1.5× git fetch. Exit status 1 when one is missed.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a benchmark's output is its purpose

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use git_pair::model::{Body, Coder, RunId, Start};
use git_pair::store::{Append, Repo, notes};

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
    let runs = env_usize("RUNS", 1000);
    let records = env_usize("RECORDS", 10);
    let iterations = env_usize("ITERATIONS", 5);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/bench-fixtures")
        .join(format!("sync-{runs}x{records}"));
    let remote = root.join("remote.git");
    if !remote.join("packed-refs").exists() {
        let t = Instant::now();
        generate(&root, &remote, runs, records);
        eprintln!("fixture generated in {:.1} s", t.elapsed().as_secs_f64());
    }
    let work = tempfile::tempdir().expect("temp dir");
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).expect("home");

    let fetch_args = [
        "fetch",
        "--no-tags",
        "origin",
        "+refs/pair/*:refs/pair/*",
        "+refs/notes/pair:refs/notes/pair",
    ];
    let (mut cold_ours, mut cold_git, mut noop_ours, mut noop_git, mut noop_git_packed) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut push_ours, mut push_git) = (Vec::new(), Vec::new());
    let (mut push_noop_ours, mut push_noop_git, mut push_noop_base, mut push_base) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let baseline = std::env::var("BASELINE_BIN").ok();
    let git_push_all = |remote: &str| -> Vec<String> {
        [
            "push",
            "-q",
            "--atomic",
            remote,
            "refs/pair/runs/*:refs/pair/runs/*",
            "refs/notes/pair:refs/notes/pair",
        ]
        .map(String::from)
        .to_vec()
    };
    for i in 0..iterations {
        let ours = work.path().join(format!("ours-{i}"));
        let theirs = work.path().join(format!("git-{i}"));
        for dir in [&ours, &theirs] {
            run(
                &home,
                work.path(),
                "git",
                &["clone", "-q", path(&remote), path(dir)],
            );
        }
        cold_ours.push(run(&home, &ours, bin(), &["pull"]));
        cold_git.push(run(&home, &theirs, "git", &fetch_args));
        noop_ours.push(run(&home, &ours, bin(), &["pull"]));
        noop_git.push(run(&home, &theirs, "git", &fetch_args));
        // git pair keeps its namespaces in packed-refs; the same favour for plain git.
        run(&home, &theirs, "git", &["pack-refs", "--all"]);
        noop_git_packed.push(run(&home, &theirs, "git", &fetch_args));
        // Publishing when the remote has everything already: nothing to scan, nothing sent.
        push_noop_ours.push(run(&home, &ours, bin(), &["push"]));
        let args = git_push_all("origin");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        push_noop_git.push(run(&home, &theirs, "git", &args));
        if let Some(base) = &baseline {
            push_noop_base.push(run(&home, &ours, base, &["push"]));
        }
        // Publishing everything to an empty remote (informational, no target).
        let (ours_remote, git_remote) = (work.path().join("ours.git"), work.path().join("git.git"));
        for dir in [&ours_remote, &git_remote] {
            let _ = std::fs::remove_dir_all(dir);
            run(
                &home,
                work.path(),
                "git",
                &["init", "-q", "--bare", path(dir)],
            );
        }
        push_ours.push(run(&home, &ours, bin(), &["push", path(&ours_remote)]));
        if let Some(base) = &baseline {
            let base_remote = work.path().join("base.git");
            let _ = std::fs::remove_dir_all(&base_remote);
            run(
                &home,
                work.path(),
                "git",
                &["init", "-q", "--bare", path(&base_remote)],
            );
            push_base.push(run(&home, &ours, base, &["push", path(&base_remote)]));
        }
        push_git.push(run(
            &home,
            &theirs,
            "git",
            &[
                "push",
                "-q",
                "--atomic",
                path(&git_remote),
                "refs/pair/runs/*:refs/pair/runs/*",
                "refs/notes/pair:refs/notes/pair",
            ],
        ));
        // Same result: every run and the notes arrived in both.
        let count = |dir: &Path| {
            let out = output(
                &home,
                dir,
                "git",
                &["for-each-ref", "refs/pair/runs", "refs/notes/pair"],
            );
            out.lines().count()
        };
        assert_eq!(count(&ours), runs + 1, "git pair pull fetched everything");
        assert_eq!(count(&theirs), runs + 1, "git fetch fetched everything");
        for dir in [&ours, &theirs] {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    let (co, cg, no, ng, ngp) = (
        median(cold_ours),
        median(cold_git),
        median(noop_ours),
        median(noop_git),
        median(noop_git_packed),
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let cold_ratio = co.as_secs_f64() / cg.as_secs_f64();
    let noop_ratio = no.as_secs_f64() / ng.as_secs_f64();
    println!("pull of {runs} runs x {records} records (+{runs} notes), median of {iterations}:");
    println!(
        "  empty clone:  git pair pull {:>8.1} ms   git fetch {:>8.1} ms   ratio {cold_ratio:.2} (target <= 2.0)",
        ms(co),
        ms(cg)
    );
    println!(
        "  nothing new:  git pair pull {:>8.1} ms   git fetch {:>8.1} ms   ratio {noop_ratio:.2} (target <= 1.5)",
        ms(no),
        ms(ng)
    );
    println!(
        "  nothing new, git's refs packed too:  git fetch {:>8.1} ms   ratio {:.2}",
        ms(ngp),
        no.as_secs_f64() / ngp.as_secs_f64()
    );
    let (pno, png) = (median(push_noop_ours), median(push_noop_git));
    println!(
        "  push, nothing new:  git pair push {:>8.1} ms   git push {:>8.1} ms   ratio {:.2}",
        ms(pno),
        ms(png),
        pno.as_secs_f64() / png.as_secs_f64()
    );
    if !push_noop_base.is_empty() {
        let pnb = median(push_noop_base);
        println!(
            "  push, nothing new, BASELINE_BIN:  {:>8.1} ms   (this build / baseline {:.2})",
            ms(pnb),
            pno.as_secs_f64() / pnb.as_secs_f64()
        );
    }
    let (po, pg) = (median(push_ours), median(push_git));
    println!(
        "  push all to an empty remote (no target):  git pair push {:>8.1} ms   git push {:>8.1} ms   ratio {:.2}",
        ms(po),
        ms(pg),
        po.as_secs_f64() / pg.as_secs_f64()
    );
    if !push_base.is_empty() {
        let pb = median(push_base);
        println!(
            "  push all to an empty remote, BASELINE_BIN:  {:>8.1} ms   (this build / baseline {:.2})",
            ms(pb),
            po.as_secs_f64() / pb.as_secs_f64()
        );
    }
    if cold_ratio <= 2.0 && noop_ratio <= 1.5 {
        println!("  targets met");
        ExitCode::SUCCESS
    } else {
        println!("  TARGET MISSED");
        ExitCode::FAILURE
    }
}

/// Writes `runs` runs of `records` records (one start, the rest coder rounds) and one note
/// per run into a fresh repository, then mirrors it into a bare, gc'ed remote.
fn generate(root: &Path, remote: &Path, runs: usize, records: usize) {
    let _ = std::fs::remove_dir_all(root);
    let source = root.join("source");
    std::fs::create_dir_all(&source).expect("mkdir");
    let home = root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    run(&home, &source, "git", &["init", "-q", "-b", "main"]);
    std::fs::write(source.join("README"), "bench\n").expect("write");
    run(&home, &source, "git", &["add", "README"]);
    run(&home, &source, "git", &["commit", "-q", "-m", "initial"]);
    let repo = Repo::discover(&source).expect("open");
    let base = repo.resolve_commit("HEAD").expect("HEAD");
    for i in 0..runs {
        let run_id = RunId::generate(1_795_994_100 + i as i64);
        let start = Body::Start(Start {
            run_id: run_id.to_string(),
            task: format!("benchmark task {i}"),
            cwd: source.display().to_string(),
            branch: "main".into(),
            base: Some(base.to_string()),
            coder: "claude".into(),
            reviewer: "codex".into(),
            max_rounds: 5,
            budget_usd: None,
            config: Default::default(),
            flags: None,
        });
        repo.create_run(&run_id, Some(base), Append::record(start, "start: bench"))
            .expect("create run");
        for r in 1..records {
            let body = Body::Coder(Coder {
                summary: format!("round {r} of run {i}: changed a few files and ran the tests"),
                tool: "claude".into(),
                findings_addressed: None,
                session_id: None,
                responses: vec![],
                extra_round: false,
                round: None,
            });
            repo.append(&run_id, |_| {
                Ok(Append::record(body.clone(), format!("coder {r}")))
            })
            .expect("append");
        }
        let annotated = repo
            .write_blob(format!("commit stand-in {i}\n").as_bytes())
            .expect("blob");
        notes::add_line(
            &repo,
            annotated,
            &format!("pair-run={run_id} verdict=APPROVED rounds=2 reviewer=codex cost_usd=0.42"),
        )
        .expect("note");
    }
    run(
        &home,
        root,
        "git",
        &["clone", "-q", "--mirror", path(&source), path(remote)],
    );
    run(&home, remote, "git", &["gc", "-q"]);
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

/// Runs a command to success and returns how long it took.
fn run(home: &Path, dir: &Path, program: &str, args: &[&str]) -> Duration {
    let t = Instant::now();
    let out = command(home, dir, program, args).output().expect("spawn");
    let elapsed = t.elapsed();
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    elapsed
}

fn output(home: &Path, dir: &Path, program: &str, args: &[&str]) -> String {
    let out = command(home, dir, program, args).output().expect("spawn");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}
