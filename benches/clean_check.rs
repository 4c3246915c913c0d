//! Benchmark: the clean-tree check (`git pair start`'s precondition) against
//! `git status --porcelain` on the same generated 20,000-file repository, side by side.
//!
//! Run: `cargo bench --bench clean_check` (builds the fixture with fixtures/make-big-repo.sh
//! under target/bench-fixtures unless BENCH_REPO points at a repository).

#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let repo_dir = std::env::var_os("BENCH_REPO")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/bench-fixtures/big-20000"));
    if !repo_dir.join(".git").exists() {
        let status = Command::new(root.join("fixtures/make-big-repo.sh"))
            .arg(&repo_dir)
            .arg("20000")
            .status()
            .expect("run make-big-repo.sh");
        assert!(status.success(), "fixture script failed");
    }
    let iterations = 15;
    let repo = git_pair::store::Repo::discover(&repo_dir).expect("open fixture repo");
    let mut ours = Vec::new();
    let mut git = Vec::new();
    // Interleave the two so machine load affects both alike.
    for _ in 0..iterations {
        let t = Instant::now();
        let dirty = git_pair::worktree::first_dirty(&repo).expect("check");
        ours.push(t.elapsed());
        assert!(dirty.is_none(), "fixture repo is dirty: {dirty:?}");

        let t = Instant::now();
        let out = Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(&repo_dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git status");
        git.push(t.elapsed());
        assert!(out.status.success() && out.stdout.is_empty());
    }
    let (ours, git) = (median(ours), median(git));
    println!("clean-tree check, 20,000 files, median of {iterations}:");
    println!(
        "  git pair (in-process)     {:>8.1} ms",
        ours.as_secs_f64() * 1e3
    );
    println!(
        "  git status --porcelain    {:>8.1} ms",
        git.as_secs_f64() * 1e3
    );
    println!(
        "  ratio ours/git            {:>8.2}",
        ours.as_secs_f64() / git.as_secs_f64()
    );
}
