//! End-to-end reviewer attempts against the stub reviewers and fake vendor CLIs in
//! `fixtures/reviewers/`: probe → bind → `run_attempt` → outcome. No live AI CLI is ever run:
//! every PATH here holds only fixtures and a few POSIX tools.
//! Only `ctrl_c_cancels_the_reviewer` catches SIGINT; every other test turns that off so the
//! signal it sends to this process cannot cancel them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{alive, eventually, read_pid};
use git_pair::diff::{Change, ChangeKind, FileDiff, HunkSpan};
use git_pair::process::find_executable;
use git_pair::process::{self, Cancel, Limits, Spawn};
use git_pair::review::{
    BoundRealization, Outcome, Parsed, ProbeRequest, ReviewInput, RunOptions, Surfaces, Verdict,
    planned_argv, probe, run_attempt,
};

fn fixtures(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/reviewers")
        .join(rel)
}

/// A PATH with the given fixture dirs and private links to the POSIX tools the fakes use.
struct TestPath {
    _tools: tempfile::TempDir,
    path: OsString,
}

fn test_path(dirs: &[&str]) -> TestPath {
    let tools = tempfile::tempdir().expect("tempdir");
    for tool in ["sh", "cat", "grep", "dirname", "sleep", "mv", "head", "yes"] {
        let real = find_executable(tool, None).expect("POSIX tool on the test machine");
        std::os::unix::fs::symlink(real, tools.path().join(tool)).expect("symlink");
    }
    let mut all: Vec<PathBuf> = dirs.iter().map(|d| fixtures(d)).collect();
    all.push(tools.path().to_path_buf());
    let path = std::env::join_paths(all).expect("joinable");
    TestPath {
        _tools: tools,
        path,
    }
}

fn bind(configured: &str, command: Option<&str>, dirs: &[&str]) -> BoundRealization {
    let surfaces = Surfaces::shipped().expect("shipped surfaces");
    let path = test_path(dirs);
    let command = command.map(|text| {
        git_pair::review::probe::parse_reviewer_command(text).expect("valid test command")
    });
    probe(
        &surfaces,
        &ProbeRequest {
            configured,
            reviewer_command: command.as_deref(),
            path_env: Some(&path.path),
            cache: None,
            fallback_order: None,
        },
    )
    .expect("binds")
    .into_bound()
    .expect("bound")
}

fn stub(script: &str) -> BoundRealization {
    let argv = serde_json::to_string(&[fixtures(script).display().to_string()]).expect("json");
    bind("command", Some(&argv), &[])
}

fn options(env: &[(&str, &str)]) -> RunOptions {
    RunOptions {
        timeout: Duration::from_secs(30),
        kill_grace: Duration::from_millis(500),
        env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
        handle_sigint: false,
        ..RunOptions::default()
    }
}

const PROMPT: &str = "Review this change.\n<!-- git-pair: r/1/1 -->\n";

fn input() -> ReviewInput<'static> {
    ReviewInput {
        prompt: PROMPT,
        ..ReviewInput::default()
    }
}

/// A modified file's diff, as the diff module hands it over: `text` is its section of `git
/// diff`, whose hunks are found by their `@@` lines.
fn file_diff(path: &str, text: String) -> FileDiff {
    let text = text.into_bytes();
    let mut starts = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive(|&b| b == b'\n') {
        if line.starts_with(b"@@ ") {
            starts.push(at);
        }
        at += line.len();
    }
    let ends = starts.iter().skip(1).copied().chain([text.len()]);
    let hunks: Vec<HunkSpan> = starts
        .iter()
        .zip(ends)
        .map(|(&start, end)| {
            let count = |marker: u8| {
                text[start..end]
                    .split(|&b| b == b'\n')
                    .filter(|l| l.first() == Some(&marker))
                    .count() as u32
            };
            HunkSpan {
                start,
                end,
                added: count(b'+'),
                deleted: count(b'-'),
            }
        })
        .collect();
    FileDiff {
        change: Change {
            kind: ChangeKind::Modified,
            old_path: path.into(),
            new_path: path.into(),
            old_mode: Some(0o100644),
            new_mode: Some(0o100644),
            old_id: None,
            new_id: None,
        },
        binary: false,
        generated: false,
        added_lines: hunks.iter().map(|h| h.added).sum(),
        deleted_lines: hunks.iter().map(|h| h.deleted).sum(),
        header_len: starts.first().copied().unwrap_or(text.len()),
        text,
        hunks,
    }
}

#[test]
fn codex_approves_with_session_id_structured_output_and_the_prompt_on_stdin() {
    let codex = bind("codex", None, &["bin"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let (argv_file, prompt_file) = (dir.path().join("argv"), dir.path().join("prompt"));
    let a = run_attempt(
        &codex,
        &input(),
        &options(&[
            ("FAKE_ARGV_FILE", argv_file.to_str().expect("utf8")),
            ("FAKE_PROMPT_FILE", prompt_file.to_str().expect("utf8")),
        ]),
    );
    assert_eq!(a.outcome, Outcome::Completed, "{a:?}");
    assert_eq!(a.verdict(), Some(Verdict::Approved));
    assert_eq!(
        a.session_id.as_deref(),
        Some("0199f0aa-1111-7222-8333-444455556666")
    );
    assert!(a.structured_output && !a.resumed);
    assert_eq!(a.exit_code, Some(0));
    assert_eq!(
        std::fs::read_to_string(&prompt_file).expect("prompt"),
        PROMPT
    );
    let argv = std::fs::read_to_string(&argv_file).expect("argv");
    let argv: Vec<&str> = argv.lines().collect();
    assert_eq!(&argv[..4], ["exec", "--sandbox", "read-only", "--json"]);
    assert!(argv.contains(&"--output-schema"));
    assert_eq!(argv.last(), Some(&"-"));
    assert_eq!(a.argv[1..], argv);
    let planned = planned_argv(&codex, &input(), &options(&[])).expect("plan");
    assert_eq!(planned.len(), a.argv.len());
    assert_eq!(planned[..5], a.argv[..5]);
}

#[test]
fn codex_findings_come_from_the_last_message_file() {
    let a = run_attempt(
        &bind("codex", None, &["bin"]),
        &input(),
        &options(&[("FAKE_REVIEW", "changes")]),
    );
    assert_eq!(a.verdict(), Some(Verdict::ChangesRequested));
    let f = &a.findings()[0];
    assert_eq!(
        (f.category.as_str(), f.location.as_str(), f.text.as_str()),
        ("correctness", "src/lib.rs:10", "off by one")
    );
}

#[test]
fn json_answers_are_validated_against_the_schema() {
    let codex = bind("codex", None, &["bin"]);
    let ok = run_attempt(&codex, &input(), &options(&[("FAKE_REVIEW", "json")]));
    assert_eq!(ok.verdict(), Some(Verdict::ChangesRequested));
    assert_eq!(ok.findings()[0].location, "a.rs:2");
    let bad = run_attempt(&codex, &input(), &options(&[("FAKE_REVIEW", "wrong-enum")]));
    assert_eq!(bad.outcome, Outcome::FailedValidation);
    assert!(
        bad.message.as_deref().expect("reason").contains("/verdict"),
        "{bad:?}"
    );
    assert_eq!(bad.verdict(), None);
}

#[test]
fn codex_reporting_its_own_failure_is_died_with_its_message() {
    let a = run_attempt(
        &bind("codex", None, &["bin"]),
        &input(),
        &options(&[("FAKE_REVIEW", "turn-failed")]),
    );
    assert_eq!(a.outcome, Outcome::Died);
    assert_eq!(
        a.vendor_message.as_deref(),
        Some("stream disconnected before completion")
    );
}

/// The CLI's own retries reach the progress callback (a terminal's progress lines) while it
/// runs, named by the reviewer; its other events do not.
#[test]
fn codex_reconnects_reach_the_progress_while_it_runs() {
    let lines = std::sync::Mutex::new(Vec::<(String, Duration)>::new());
    let started = Instant::now();
    let a = git_pair::review::run_attempt_with_progress(
        &bind("codex", None, &["bin"]),
        &input(),
        &options(&[("FAKE_REVIEW", "reconnect-approve")]),
        &|line| {
            lines
                .lock()
                .expect("lock")
                .push((line.to_owned(), started.elapsed()))
        },
    );
    assert_eq!(a.outcome, Outcome::Completed);
    let lines = lines.into_inner().expect("lock");
    let text: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        text,
        [
            "codex: Reconnecting... 1/5 (stream disconnected before completion)",
            "codex: Reconnecting... 2/5 (stream disconnected before completion)"
        ]
    );
    assert!(
        lines[0].1 < Duration::from_millis(a.duration_ms),
        "shown before the CLI ended"
    );
}

/// A reviewer that prints nothing while it works (Claude until its result) still shows, on
/// a terminal, how long it has been running.
#[test]
fn a_silent_reviewer_shows_its_elapsed_time() {
    let lines = std::sync::Mutex::new(Vec::<String>::new());
    let mut o = options(&[("FAKE_REVIEW", "hang")]);
    o.timeout = Duration::from_millis(1300);
    o.heartbeat = Duration::from_millis(400);
    let a = git_pair::review::run_attempt_with_progress(
        &bind("claude", None, &["bin"]),
        &input(),
        &o,
        &|line| lines.lock().expect("lock").push(line.to_owned()),
    );
    assert_eq!(a.outcome, Outcome::TimedOut);
    let lines = lines.into_inner().expect("lock");
    assert!(lines.len() >= 2, "{lines:?}");
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("claude: still running (") && l.ends_with(" s)…")),
        "{lines:?}"
    );
}

#[test]
fn codex_waiting_for_network_gives_up_early_with_the_vendor_message() {
    // The real CLI offline reconnects forever; the data's give_up rule ends it after three
    // such events instead of waiting out the whole timeout (and its retry).
    let mut o = options(&[("FAKE_REVIEW", "offline")]);
    o.timeout = Duration::from_secs(60);
    let started = std::time::Instant::now();
    let a = run_attempt(&bind("codex", None, &["bin"]), &input(), &o);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(a.outcome, Outcome::Died);
    assert!(
        a.vendor_message
            .as_deref()
            .expect("vendor")
            .contains("waiting for network")
    );
    assert!(
        a.session_id.is_some(),
        "session id is read even from a hung run"
    );
}

#[test]
fn codex_resumes_and_a_failed_resume_asks_for_a_fresh_run() {
    let codex = bind("codex", None, &["bin"]);
    let resume = ReviewInput {
        resume_session_id: Some("0199aaaa-0000-7000-8000-000000000009"),
        ..input()
    };
    let a = run_attempt(&codex, &resume, &options(&[]));
    assert!(a.resumed);
    let at = a
        .argv
        .iter()
        .position(|x| x == "resume")
        .expect("resume argv");
    assert!(a.argv[at..].contains(&"0199aaaa-0000-7000-8000-000000000009".to_owned()));
    assert_eq!(
        a.session_id.as_deref(),
        Some("0199aaaa-0000-7000-8000-000000000009")
    );
    assert!(!a.should_retry_fresh(&codex));

    let failed = run_attempt(&codex, &resume, &options(&[("FAKE_RESUME", "fail")]));
    assert_eq!(failed.outcome, Outcome::Died);
    assert!(
        failed
            .vendor_message
            .as_deref()
            .expect("msg")
            .contains("no rollout found")
    );
    assert!(failed.should_retry_fresh(&codex));
    let fresh = run_attempt(&codex, &input(), &options(&[("FAKE_RESUME", "fail")]));
    assert_eq!(fresh.outcome, Outcome::Completed);
}

#[test]
fn an_older_codex_runs_without_structured_output_or_resume() {
    let codex = bind("codex", None, &["bin-old-codex"]);
    let resume = ReviewInput {
        resume_session_id: Some("S-1"),
        ..input()
    };
    let a = run_attempt(&codex, &resume, &options(&[]));
    assert_eq!(a.outcome, Outcome::Completed);
    assert!(!a.resumed && !a.structured_output);
    assert!(
        !a.argv
            .iter()
            .any(|x| x == "--output-schema" || x == "resume")
    );
}

#[test]
fn claude_outcomes_table() {
    let claude = bind("claude", None, &["bin"]);
    let cases: &[(&str, Outcome, Option<Verdict>, Option<&str>)] = &[
        ("approve", Outcome::Completed, Some(Verdict::Approved), None),
        (
            "changes",
            Outcome::Completed,
            Some(Verdict::ChangesRequested),
            None,
        ),
        ("json", Outcome::Completed, Some(Verdict::Approved), None),
        ("garbage", Outcome::FailedValidation, None, None),
        ("silent", Outcome::FailedValidation, None, None),
        ("fail", Outcome::Died, None, None),
        (
            "not-logged-in",
            Outcome::Died,
            None,
            Some("Not logged in · Please run /login"),
        ),
        ("budget", Outcome::Died, None, Some("budget exceeded")),
    ];
    for (mode, outcome, verdict, vendor) in cases {
        let a = run_attempt(&claude, &input(), &options(&[("FAKE_REVIEW", mode)]));
        assert_eq!(
            (a.outcome, a.verdict()),
            (*outcome, *verdict),
            "{mode}: {a:?}"
        );
        if let Some(v) = vendor {
            assert_eq!(a.vendor_message.as_deref(), Some(*v), "{mode}");
        }
        if *mode != "fail" {
            assert_eq!(
                a.session_id.as_deref(),
                Some("11111111-2222-4333-8444-555555555555"),
                "{mode}"
            );
        }
    }
    // With --json-schema the answer is the structured_output object.
    let a = run_attempt(&claude, &input(), &options(&[("FAKE_REVIEW", "json")]));
    assert!(a.structured_output);
    assert_eq!(a.findings()[0].category, "nit");
    let changes = run_attempt(&claude, &input(), &options(&[("FAKE_REVIEW", "changes")]));
    let locs: Vec<&str> = changes
        .findings()
        .iter()
        .map(|f| f.location.as_str())
        .collect();
    assert_eq!(locs, ["src/auth.rs:3", ""]);
}

#[test]
fn claude_failed_resume_surfaces_its_stderr_and_asks_for_a_fresh_run() {
    let claude = bind("claude", None, &["bin"]);
    let resume = ReviewInput {
        resume_session_id: Some("22222222-0000-4000-8000-000000000000"),
        ..input()
    };
    let a = run_attempt(&claude, &resume, &options(&[("FAKE_RESUME", "fail")]));
    assert_eq!(a.outcome, Outcome::Died);
    assert_eq!(
        a.vendor_message.as_deref(),
        Some("No conversation found with session ID: 22222222-0000-4000-8000-000000000000")
    );
    assert!(a.should_retry_fresh(&claude));
    let ok = run_attempt(&claude, &resume, &options(&[]));
    assert_eq!(ok.outcome, Outcome::Completed);
    assert!(ok.argv.ends_with(&[
        "--resume".to_owned(),
        "22222222-0000-4000-8000-000000000000".to_owned()
    ]));
}

#[test]
fn command_stub_outcomes_table() {
    let cases: &[(&str, Outcome, Option<Verdict>)] = &[
        ("approve.sh", Outcome::Completed, Some(Verdict::Approved)),
        (
            "request-changes.sh",
            Outcome::Completed,
            Some(Verdict::ChangesRequested),
        ),
        ("garbage.sh", Outcome::FailedValidation, None),
        ("silent.sh", Outcome::FailedValidation, None),
        ("fail.sh", Outcome::Died, None),
    ];
    for (script, outcome, verdict) in cases {
        let a = run_attempt(&stub(script), &input(), &options(&[]));
        assert_eq!(
            (a.outcome, a.verdict()),
            (*outcome, *verdict),
            "{script}: {a:?}"
        );
        assert_eq!(a.session_id, None);
    }
    let failed = run_attempt(&stub("fail.sh"), &input(), &options(&[]));
    assert_eq!(failed.exit_code, Some(3));
    assert_eq!(failed.stderr_tail, b"reviewer crashed: out of cheese\n");
    assert_eq!(failed.stdout, b"VERDICT: APPROVED\n", "raw stdout is kept");
    let garbage = run_attempt(&stub("garbage.sh"), &input(), &options(&[]));
    assert!(matches!(garbage.parsed, Some(Parsed::NoVerdict { .. })));
}

#[test]
fn command_argv_and_prompt_arrive_as_configured() {
    let argv = serde_json::to_string(&[
        fixtures("echo-argv.sh").display().to_string(),
        "--strict".into(),
        "two words".into(),
    ])
    .expect("json");
    let a = run_attempt(&bind("command", Some(&argv), &[]), &input(), &options(&[]));
    let texts: Vec<&str> = a.findings().iter().map(|f| f.text.as_str()).collect();
    assert_eq!(texts, ["--strict", "two words"]);

    let dir = tempfile::tempdir().expect("tempdir");
    let copy = dir.path().join("prompt");
    let a = run_attempt(
        &stub("approve.sh"),
        &input(),
        &options(&[("STUB_PROMPT_COPY", copy.to_str().expect("utf8"))]),
    );
    assert_eq!(a.outcome, Outcome::Completed);
    assert_eq!(std::fs::read_to_string(&copy).expect("copy"), PROMPT);
}

#[test]
fn a_hanging_reviewer_and_its_grandchild_are_gone_after_the_timeout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("grandchild.pid");
    let mut o = options(&[("STUB_PID_FILE", pid_file.to_str().expect("utf8"))]);
    o.timeout = Duration::from_millis(1000);
    let a = run_attempt(&stub("fork-and-hang.sh"), &input(), &o);
    assert_eq!(a.outcome, Outcome::TimedOut);
    assert_eq!(a.stdout, b"thinking...\n");
    let grandchild = read_pid(&pid_file).expect("grandchild pid");
    assert!(
        eventually(Duration::from_secs(5), || !alive(grandchild)),
        "grandchild {grandchild} is still running"
    );
}

#[test]
fn five_megabytes_of_output_are_captured_and_parsed() {
    let a = run_attempt(&stub("big-output.sh"), &input(), &options(&[]));
    assert_eq!(a.outcome, Outcome::Completed);
    assert!(a.stdout_bytes > 5 * 1024 * 1024, "{}", a.stdout_bytes);
    assert!(!a.stdout_truncated);
    assert_eq!(a.findings().len(), 1);
    let mut capped = options(&[]);
    capped.stdout_cap = 1024 * 1024;
    let a = run_attempt(&stub("big-output.sh"), &input(), &capped);
    assert!(a.stdout_truncated && a.stdout.len() == 1024 * 1024);
    // The verdict was past the cap: fail closed.
    assert_eq!(a.outcome, Outcome::FailedValidation);
}

#[test]
fn a_reviewer_that_vanished_after_probing_is_not_started() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("reviewer.sh");
    std::fs::copy(fixtures("approve.sh"), &script).expect("copy");
    let argv = serde_json::to_string(&[script.display().to_string()]).expect("json");
    let bound = bind("command", Some(&argv), &[]);
    std::fs::remove_file(&script).expect("remove");
    let a = run_attempt(&bound, &input(), &options(&[]));
    assert_eq!(a.outcome, Outcome::NotStarted);
    assert!(a.message.expect("message").contains("reviewer.sh"));
}

#[test]
fn builtin_reviews_the_diff_in_process() {
    let bound = bind("builtin", None, &[]);
    let files = [file_diff(
        "src/a.rs",
        "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1,2 @@\n fn a() {}\n+fn b() { dbg!(1); }\n".to_owned(),
    )];
    let a = run_attempt(
        &bound,
        &ReviewInput {
            files: &files,
            ..input()
        },
        &options(&[]),
    );
    assert_eq!(a.outcome, Outcome::Completed);
    assert_eq!(a.verdict(), Some(Verdict::ChangesRequested));
    assert_eq!(a.findings()[0].location, "src/a.rs:2");
    assert_eq!(a.argv, ["builtin"]);
    let json = serde_json::to_value(&a).expect("serializable");
    assert_eq!(json["outcome"], "completed");
    assert_eq!(json["parsed"]["verdict"], "CHANGES_REQUESTED");
}

#[test]
fn ctrl_c_cancels_the_reviewer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("grandchild.pid");
    let mut o = options(&[("STUB_PID_FILE", pid_file.to_str().expect("utf8"))]);
    o.handle_sigint = true;
    o.timeout = Duration::from_secs(60);
    let sender = {
        let pid_file = pid_file.clone();
        std::thread::spawn(move || {
            // The stub writes the file after spawn, and the handler is installed before it.
            assert!(eventually(Duration::from_secs(10), || pid_file.exists()));
            let me = std::process::id().to_string();
            process::run(
                &Spawn {
                    program: "/bin/sh".into(),
                    args: vec!["-c".into(), format!("kill -INT {me}")],
                    ..Spawn::default()
                },
                &Limits::default(),
                &Cancel::default(),
            )
        })
    };
    let started = Instant::now();
    let a = run_attempt(&stub("fork-and-hang.sh"), &input(), &o);
    let kill = sender.join().expect("sender");
    assert_eq!(kill.status.and_then(|s| s.code), Some(0));
    assert_eq!(a.outcome, Outcome::Cancelled, "{a:?}");
    assert!(started.elapsed() < Duration::from_secs(30));
    let grandchild = read_pid(&pid_file).expect("pid");
    assert!(eventually(Duration::from_secs(5), || !alive(grandchild)));
}

/// Probes the codex/claude actually installed on this machine (only their help output runs;
/// no model is called). Ignored by default: it depends on the machine.
/// `cargo test --test reviewers -- --ignored installed`
#[test]
#[ignore = "depends on the vendor CLIs installed on this machine"]
fn installed_vendor_clis_pass_the_probe() {
    let surfaces = Surfaces::shipped().expect("shipped surfaces");
    for name in ["codex", "claude"] {
        let report = probe(
            &surfaces,
            &ProbeRequest {
                configured: name,
                reviewer_command: None,
                path_env: None,
                cache: None,
                fallback_order: None,
            },
        );
        match report {
            Ok(r) => {
                println!("{name}: {}", r.probed[0].reason);
                for c in &r.probed[0].capabilities {
                    println!("  {} proven={} missing={:?}", c.name, c.proven, c.missing);
                }
                assert_eq!(r.winner.as_deref(), Some(name));
                let bound = r.bound.expect("bound");
                assert!(bound.supports_structured_output() && bound.supports_resume());
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
}

/// Timing figures, not assertions of speed: parse and built-in review of 5 MB inputs, and the
/// overhead of one stub attempt.
/// `cargo test --release --test reviewers -- --ignored figures --nocapture`
#[test]
#[ignore = "prints timings"]
fn figures() {
    use git_pair::review::{BuiltinOptions, builtin, parse};
    let line = "Reviewing a long line of output that says nothing in particular.\n";
    let mut big = line.repeat(5 * 1024 * 1024 / line.len() + 1);
    big.push_str("1. [bug] a.rs:1 — late\nVERDICT: CHANGES_REQUESTED\n");
    let t = Instant::now();
    let parsed = parse::parse_answer(big.as_bytes());
    println!("parse_answer {} bytes: {:?}", big.len(), t.elapsed());
    assert!(matches!(parsed, Parsed::Verdict { .. }));

    let mut files = Vec::new();
    for f in 0..500 {
        let mut diff = format!(
            "diff --git a/src/f{f}.rs b/src/f{f}.rs\n--- a/src/f{f}.rs\n+++ b/src/f{f}.rs\n@@ -0,0 +1,200 @@\n"
        );
        for l in 0..200 {
            diff.push_str(&format!(
                "+    let value_{l} = compute(input, {l}); // plain code line\n"
            ));
        }
        files.push(file_diff(&format!("src/f{f}.rs"), diff));
    }
    let bytes: usize = files.iter().map(|f| f.text.len()).sum();
    let t = Instant::now();
    let r = builtin::review(&files, &[], &[], &BuiltinOptions::default());
    println!(
        "builtin::review {} bytes / 100000 added lines: {:?} ({} findings)",
        bytes,
        t.elapsed(),
        r.findings.len()
    );

    let bound = stub("approve.sh");
    let t = Instant::now();
    for _ in 0..20 {
        assert_eq!(
            run_attempt(&bound, &input(), &options(&[])).outcome,
            Outcome::Completed
        );
    }
    println!("run_attempt approve.sh: {:?} per attempt", t.elapsed() / 20);
    let big = stub("big-output.sh");
    let t = Instant::now();
    let a = run_attempt(&big, &input(), &options(&[]));
    println!(
        "run_attempt big-output.sh ({} bytes): {:?}",
        a.stdout_bytes,
        t.elapsed()
    );
}

#[test]
fn a_session_id_of_the_wrong_shape_never_reaches_the_argv() {
    let claude = bind("claude", None, &["bin"]);
    for bad in ["--dangerously-skip-permissions", "S-1", "../x"] {
        let resume = ReviewInput {
            resume_session_id: Some(bad),
            ..input()
        };
        let a = run_attempt(&claude, &resume, &options(&[]));
        assert_eq!(a.outcome, Outcome::Completed, "{bad}");
        assert!(!a.resumed, "{bad}: a fresh review instead");
        assert!(!a.argv.iter().any(|x| x == bad), "{bad}: {:?}", a.argv);
    }
    // A malformed id in the output is refused too: never kept as the session.
    let a = run_attempt(
        &claude,
        &input(),
        &options(&[("FAKE_SESSION_ID", "--not-an-id")]),
    );
    assert_eq!(a.session_id, None);
    assert!(a.session_id_refused.is_some());
}

#[test]
fn output_cut_at_the_stdout_cap_is_a_failed_attempt_never_read() {
    // The reviewer's output reaches the cap exactly at the end of a `VERDICT: APPROVED` line
    // (quoted, say); its real answer, past the cap, requests changes.
    let cap = 1024 * 1024;
    let mut capped = options(&[("STUB_CUT_AT", &cap.to_string())]);
    capped.stdout_cap = cap;
    let a = run_attempt(&stub("big-output.sh"), &input(), &capped);
    assert!(
        a.stdout_truncated && a.stdout.len() == cap,
        "{}",
        a.stdout.len()
    );
    assert!(
        matches!(
            git_pair::review::parse_answer(&a.stdout),
            Parsed::Verdict {
                verdict: Verdict::Approved,
                ..
            }
        ),
        "the head alone would read as an approval"
    );
    assert_eq!(a.outcome, Outcome::FailedValidation);
    assert_eq!(a.verdict(), None);
    let message = a.message.expect("message");
    assert!(message.contains("capture limit"), "{message}");
    assert!(matches!(a.parsed, Some(Parsed::NoVerdict { .. })));
    // Under the cap, the whole answer is read.
    capped.stdout_cap = 8 * cap;
    let a = run_attempt(&stub("big-output.sh"), &input(), &capped);
    assert!(!a.stdout_truncated);
    assert_eq!(a.verdict(), Some(Verdict::ChangesRequested));
}
