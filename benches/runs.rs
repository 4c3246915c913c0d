//! Benchmark: many runs in one repository. `git pair list` over RUNS runs against
//! `git for-each-ref refs/pair/runs` (target ≤ 3×), and `git pair status` with RUNS runs
//! present against the same command with 1 run (target: no slower, within 10%), side by side
//! in one run, interleaved so machine load hits both alike; peak memory of each (from
//! `getrusage` of the finished child).
//!
//! Run: `cargo bench --bench runs` (optionally `RUNS=10000 RECORDS=2 ITERATIONS=11`). The
//! fixtures are generated once through the library's run store under
//! target/bench-fixtures/ (generation is not measured). Exit status 1 when a target is missed.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a benchmark's output is its purpose

#[path = "common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use common::{command, env_usize, generate, median, path};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_git-pair")
}

/// A fixture with `runs` runs on branch `main`: its source repository.
fn fixture(runs: usize, records: usize) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/bench-fixtures")
        .join(format!("runs-{runs}x{records}"));
    let remote = root.join("remote.git");
    if !remote.join("packed-refs").exists() {
        let t = Instant::now();
        generate(&root, &remote, runs, records);
        eprintln!(
            "fixture of {runs} runs generated in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    root.join("source")
}

/// Runs a command to success; returns its wall time and peak resident memory (KiB).
fn timed(home: &Path, dir: &Path, program: &str, args: &[&str]) -> (Duration, u64) {
    let t = Instant::now();
    let mut child = command(home, dir, program, args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    // wait4 gives this child's own rusage (getrusage(CHILDREN) would be the max so far).
    let mut status = 0;
    // SAFETY: `rusage` is plain data that wait4 fills; `pid` is our unreaped child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid as i32, &mut status, 0, &mut usage) };
    let elapsed = t.elapsed();
    assert_eq!(waited, pid as i32, "wait4");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{program} {args:?} failed"
    );
    // The child is reaped; drop the handle without waiting again.
    let _ = child.stderr.take();
    std::mem::forget(child);
    (elapsed, usage.ru_maxrss as u64)
}

fn main() -> ExitCode {
    if std::env::args().any(|a| a == "--list") {
        return ExitCode::SUCCESS;
    }
    let runs = env_usize("RUNS", 10_000);
    let records = env_usize("RECORDS", 2);
    let iterations = env_usize("ITERATIONS", 11);
    let many = fixture(runs, records);
    let one = fixture(1, records);
    let work = tempfile::tempdir().expect("temp dir");
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let cache = many.join(".git/pair/cache/runs.jsonl");

    let (mut list_cold, mut list_warm, mut for_each_ref) = (Vec::new(), Vec::new(), Vec::new());
    let (mut status_many, mut status_one) = (Vec::new(), Vec::new());
    let mut peak = [0u64; 5];
    for _ in 0..iterations {
        let _ = std::fs::remove_file(&cache);
        let samples = [
            timed(&home, &many, bin(), &["list", "--json"]),
            timed(&home, &many, bin(), &["list", "--json"]),
            timed(&home, &many, "git", &["for-each-ref", "refs/pair/runs"]),
            timed(&home, &many, bin(), &["status", "--json"]),
            timed(&home, &one, bin(), &["status", "--json"]),
        ];
        for (i, (_, kib)) in samples.iter().enumerate() {
            peak[i] = peak[i].max(*kib);
        }
        list_cold.push(samples[0].0);
        list_warm.push(samples[1].0);
        for_each_ref.push(samples[2].0);
        status_many.push(samples[3].0);
        status_one.push(samples[4].0);
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let (lc, lw, fe, sm, so) = (
        median(list_cold),
        median(list_warm),
        median(for_each_ref),
        median(status_many),
        median(status_one),
    );
    let list_ratio = ms(lw) / ms(fe);
    let status_ratio = ms(sm) / ms(so);
    println!("{runs} runs × {records} records, median of {iterations}, peak memory:");
    println!(
        "  git pair list (first, no cache)      {:8.1} ms  {:7} KiB",
        ms(lc),
        peak[0]
    );
    println!(
        "  git pair list                        {:8.1} ms  {:7} KiB",
        ms(lw),
        peak[1]
    );
    println!(
        "  git for-each-ref refs/pair/runs      {:8.1} ms  {:7} KiB",
        ms(fe),
        peak[2]
    );
    println!("  ratio list / for-each-ref            {list_ratio:8.2}   (target <= 3)");
    println!(
        "  git pair status, {runs} runs {:>9.1} ms  {:7} KiB",
        ms(sm),
        peak[3]
    );
    println!(
        "  git pair status, 1 run               {:8.1} ms  {:7} KiB",
        ms(so),
        peak[4]
    );
    println!("  ratio status {runs} runs / 1 run      {status_ratio:8.2}   (target <= 1.1)");
    let _ = path(&many);
    if list_ratio <= 3.0 && status_ratio <= 1.1 {
        println!("  targets met");
        ExitCode::SUCCESS
    } else {
        println!("  TARGET MISSED");
        ExitCode::FAILURE
    }
}
