//! Shared by the benchmarks that need many runs: a fixture generator that writes real runs
//! through the library's store, and hermetic command helpers that time a command.
#![allow(dead_code)] // each benchmark uses a part

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use git_pair::model::{Body, Coder, RunId, Start};
use git_pair::store::{Append, Repo, notes};

pub fn env_usize(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Writes `runs` runs of `records` records (one start, the rest coder rounds) and one note
/// per run into a fresh repository, then mirrors it into a bare, gc'ed remote.
pub fn generate(root: &Path, remote: &Path, runs: usize, records: usize) {
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
            base: Some(base.into()),
            coder: "claude".into(),
            reviewer: "codex".into(),
            max_rounds: 5,
            budget_usd: None,
            config: Default::default(),
            flags: None,
            // As an older git pair wrote them: no ownership ref per run.
            claimed: false,
            carrier: false,
            base_tree: None,
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

pub fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

pub fn command(home: &Path, dir: &Path, program: &str, args: &[&str]) -> Command {
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
pub fn run(home: &Path, dir: &Path, program: &str, args: &[&str]) -> Duration {
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

pub fn output(home: &Path, dir: &Path, program: &str, args: &[&str]) -> String {
    let out = command(home, dir, program, args).output().expect("spawn");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Peak resident memory (KiB) of one run of the command, from `/usr/bin/time -f %M` (a
/// child's own figure: measured from this process, a forked child would inherit ours).
pub fn peak_kib(home: &Path, dir: &Path, program: &str, args: &[&str]) -> Option<u64> {
    let mut all = vec!["-f", "%M", program];
    all.extend_from_slice(args);
    let out = command(home, dir, "/usr/bin/time", &all)
        .stdout(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}
