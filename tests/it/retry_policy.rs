//! One retry policy across layers (issue 23): no git pair retry after a CLI that already ran
//! out its own retries or failed on authentication, `--timeout` bounding the whole review
//! (re-asks included), failure messages that say what happened with the vendor's words as
//! detail and never a vendor warning in their place, and a read-only `.git` (Codex's
//! `workspace-write` sandbox) answered with the setting that fixes it. Fake CLIs only.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{TestEnv, fixtures, system_bin};

/// A run reviewed by `reviewer` (the fake CLIs), one coder round recorded.
fn ready(reviewer: &str) -> TestEnv {
    let env = TestEnv::new();
    env.git(&["config", "pair.reviewer", reviewer]);
    env.start("Teach the fetcher to retry");
    env.write("src/lib.rs", "pub fn fetch() -> u32 {\n    42\n}\n");
    env.pair_json(&["coder-done", "--summary", "Added fetch"]);
    env
}

/// `review --json` through the fake CLI as `fake_review` says; returns the output, the calls
/// the fake saw (one line each) and how long the review took.
fn review(
    env: &TestEnv,
    fake_review: &str,
    extra: &[&str],
) -> (crate::common::Output, Vec<String>, Duration) {
    let calls = env.home.join("fake-calls");
    let _ = std::fs::remove_file(&calls);
    let mut args = vec!["review", "--json"];
    args.extend_from_slice(extra);
    let started = Instant::now();
    let out = env.pair_with_vendors(
        &args,
        &[
            ("FAKE_REVIEW", fake_review),
            ("FAKE_CALLS", calls.to_str().expect("utf8")),
        ],
    );
    let took = started.elapsed();
    let calls = std::fs::read_to_string(&calls)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    (out, calls, took)
}

fn error_of(out: &crate::common::Output) -> String {
    out.json()["error"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn after_an_authentication_failure_the_hint_says_to_fix_the_credentials_first() {
    for reviewer in ["claude", "codex"] {
        let env = ready(reviewer);
        let (out, _, _) = review(&env, "auth", &[]);
        assert_eq!(out.code, 1, "{reviewer}: {out}");
        let hint = out.json()["hint"].as_str().unwrap_or_default().to_owned();
        let (fix, again) = (
            hint.find("fix them first")
                .unwrap_or_else(|| panic!("{reviewer}: {hint}")),
            hint.find("run git pair review again")
                .unwrap_or_else(|| panic!("{reviewer}: {hint}")),
        );
        assert!(
            fix < again,
            "{reviewer}: credentials before a new review: {hint}"
        );
        assert!(
            hint.contains(&format!("{reviewer} refused the credentials")),
            "{reviewer}: {hint}"
        );
        // The human output says it too.
        let human = env.pair_with_vendors(&["review"], &[("FAKE_REVIEW", "auth")]);
        assert_eq!(human.code, 1, "{reviewer}: {human}");
        assert!(
            human.stderr.contains("fix them first"),
            "{reviewer}: {human}"
        );
        // A server error is worth another try as it is: no word of credentials.
        let (out, _, _) = review(&env, "exhausted", &[]);
        assert_eq!(out.code, 1, "{reviewer}: {out}");
        let hint = out.json()["hint"].as_str().unwrap_or_default().to_owned();
        assert!(
            hint.contains("run git pair review again") && !hint.contains("credentials"),
            "{reviewer}: {hint}"
        );
    }
}

#[test]
fn an_authentication_failure_is_one_attempt_and_says_authentication() {
    for (reviewer, status) in [("claude", "(HTTP 401)"), ("codex", "(HTTP 401)")] {
        let env = ready(reviewer);
        let (out, calls, _) = review(&env, "auth", &[]);
        assert_eq!(out.code, 1, "{reviewer}: {out}");
        assert_eq!(calls.len(), 1, "{reviewer}: no retry after a 401: {out}");
        let error = error_of(&out);
        assert!(
            error.contains(&format!("authentication failed {status}")),
            "{reviewer}: {error}"
        );
        // The vendor's words come after git pair's, as detail.
        let vendor = if reviewer == "claude" {
            "Invalid API key"
        } else {
            "Incorrect API key"
        };
        let (what, words) = (
            error.find("authentication failed").expect("what"),
            error.find(vendor).expect("the vendor's words"),
        );
        assert!(what < words, "{reviewer}: {error}");
        assert_eq!(out.json()["outcomes"][0]["attempts"], 1, "{reviewer}");
    }
}

#[test]
fn a_cli_that_exhausted_its_own_retries_is_not_retried() {
    for (reviewer, says) in [
        ("claude", "server error (HTTP 500)"),
        ("codex", "connection dropped"),
    ] {
        let env = ready(reviewer);
        let (out, calls, _) = review(&env, "exhausted", &[]);
        assert_eq!(out.code, 1, "{reviewer}: {out}");
        assert_eq!(calls.len(), 1, "{reviewer}: no second attempt: {out}");
        let error = error_of(&out);
        assert!(error.contains(says), "{reviewer}: {error}");
        assert_eq!(out.json()["outcome"], "died", "{reviewer}");
    }
    // A crash the CLI did not report as its own final failure is still retried once.
    let env = ready("claude");
    let (out, calls, _) = review(&env, "fail", &[]);
    assert_eq!(calls.len(), 2, "{out}");
}

#[test]
fn claudes_own_retries_are_bounded_by_the_time_the_review_has() {
    let env = ready("claude");
    let (_, short, _) = review(&env, "auth", &["--timeout", "3"]);
    assert_eq!(short, ["max_retries=1"]);
    let (_, long, _) = review(&env, "auth", &["--timeout", "600"]);
    assert_eq!(long, ["max_retries=5"]);
}

/// `sequence.sh` answering call by call; returns the output, the number of calls and how
/// long the review took.
fn review_in_sequence(
    env: &TestEnv,
    seq: &str,
    timeout: &str,
) -> (crate::common::Output, u32, Duration) {
    let count = env.home.join("calls");
    let command = format!(
        "[\"{}\"]",
        fixtures().join("reviewers/sequence.sh").display()
    );
    let started = Instant::now();
    let out = env.pair_env(
        &[
            "review",
            "--reviewer-cmd",
            &command,
            "--json",
            "--timeout",
            timeout,
        ],
        &[
            ("STUB_SEQ", seq),
            ("STUB_COUNT", count.to_str().expect("utf8")),
        ],
    );
    let took = started.elapsed();
    let calls = std::fs::read_to_string(&count)
        .expect("the stub counted")
        .trim()
        .parse()
        .expect("a count");
    (out, calls, took)
}

#[test]
fn the_timeout_bounds_the_whole_review_reask_included() {
    let slack = Duration::from_millis(1500);
    let fresh = || {
        let env = TestEnv::new();
        env.start("t");
        env.write("a.txt", "a\n");
        env.pair_json(&["coder-done", "--summary", "a"]);
        env
    };
    // An unreadable answer after 2 s, then a re-ask that hangs: the re-ask gets what is left
    // of the 3 s, not 3 s of its own.
    let env = fresh();
    let (out, calls, took) = review_in_sequence(&env, "slow-garbage,hang", "3");
    assert_eq!(calls, 2, "{out}");
    assert!(
        took < Duration::from_secs(3) + slack,
        "the review took {took:?}, more than its 3 s timeout: {out}"
    );
    assert_eq!(out.json()["outcome"], "timed-out", "{out}");
    assert!(error_of(&out).contains("timed out"), "{out}");
    // A hang is not retried: the time is spent.
    let env = fresh();
    let (out, calls, took) = review_in_sequence(&env, "hang,approve", "2");
    assert_eq!(calls, 1, "{out}");
    assert!(took < Duration::from_secs(2) + slack, "{took:?}: {out}");
    assert_eq!(out.json()["outcome"], "timed-out", "{out}");
}

#[test]
fn a_codex_warning_never_replaces_the_timeout_message() {
    let env = ready("codex");
    let (out, calls, _) = review(&env, "warning-hang", &["--timeout", "2"]);
    assert_eq!(calls.len(), 1, "{out}");
    let error = error_of(&out);
    assert!(error.contains("timed out"), "{error}");
    // The warning is at most detail: after git pair's words, marked as a warning.
    let at = error.find("Model metadata").expect("the warning as detail");
    let said = error.find("also warned").expect("marked as a warning");
    let timed_out = error.find("timed out").expect("what happened");
    assert!(timed_out < said && said < at, "{error}");
    assert!(
        !out.stderr
            .lines()
            .any(|l| l.starts_with("error: Model metadata")),
        "{out}"
    );
}

#[test]
fn an_empty_codex_answer_is_reasked_like_claudes() {
    for reviewer in ["codex", "claude"] {
        let env = ready(reviewer);
        let fake = if reviewer == "codex" {
            "warning-silent"
        } else {
            "silent"
        };
        let (out, calls, _) = review(&env, fake, &[]);
        assert_eq!(calls.len(), 2, "{reviewer}: re-asked once: {out}");
        let v = out.json();
        assert_eq!(v["outcome"], "failed-validation", "{reviewer}: {v}");
        assert_eq!(
            v["verdict"], "CHANGES_REQUESTED",
            "{reviewer}: never approved"
        );
        let text = v["findings"][0]["text"].as_str().unwrap_or_default();
        assert!(!text.contains("Model metadata"), "{reviewer}: {text}");
    }
}

#[test]
fn codex_reconnects_do_not_fail_a_review_that_then_answers() {
    let env = ready("codex");
    let (out, calls, _) = review(&env, "reconnect-approve", &[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(calls.len(), 1);
    assert_eq!(out.json()["verdict"], "APPROVED");
}

/// Whether this machine lets an unprivileged process mount a read-only bind in its own
/// namespaces (what produces a real EROFS here, for root too).
fn can_mount_read_only() -> bool {
    std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

/// A `.git` that is really read-only (a read-only bind mount, as Codex's `workspace-write`
/// sandbox makes it): `coder-done` fails with the setting that fixes it and itself again.
#[test]
fn a_read_only_git_directory_names_the_codex_setting_and_the_command_again() {
    if !can_mount_read_only() {
        // The classification itself is tested at unit level (cli::error).
        eprintln!("skipped: unshare cannot make a read-only mount on this machine");
        return;
    }
    let env = TestEnv::new();
    env.start("t");
    env.write("a.txt", "a\n");
    let git_dir = std::fs::canonicalize(env.repo.join(".git")).expect("git dir");
    let script = format!(
        "mount --bind -o ro '{g}' '{g}' && exec '{bin}' coder-done --summary 'made a' --json",
        g = git_dir.display(),
        bin = crate::common::bin(),
    );
    let mut cmd = std::process::Command::new("unshare");
    cmd.args(["--user", "--map-root-user", "--mount", "sh", "-c", &script]);
    crate::common::hermetic(&mut cmd, &env.home, &system_bin().display().to_string());
    cmd.current_dir(&env.repo);
    let out = crate::common::run(cmd);
    assert_eq!(out.code, 1, "{out}");
    let v: Value = out.json();
    assert!(
        v["error"]
            .as_str()
            .expect("error")
            .contains("Read-only file system"),
        "{out}"
    );
    assert_eq!(v["kind"], "user", "{out}");
    let hint = v["hint"].as_str().expect("a hint");
    let roots = format!("writable_roots = [\"{}\"]", git_dir.display());
    for needle in [
        "[sandbox_workspace_write]",
        roots.as_str(),
        "~/.codex/config.toml",
        "git pair coder-done --summary 'made a' --json",
    ] {
        assert!(hint.contains(needle), "{needle}: {hint}");
    }
    // Nothing was recorded; with a writable .git the same command works.
    let again = env.pair(&["coder-done", "--summary", "made a", "--json"]);
    assert_eq!(again.code, 0, "{again}");
}
