//! One reviewer, named the same everywhere: `status`, `review --json`, the stored manifest and
//! transcript, the PR body, the `Reviewed-by:` trailer, the review note and the run's log all
//! name the reviewer that ran (a reviewer command by its program: `command:approve.sh`), and
//! before any review the one that would bind by the one order.

use std::process::{Command, Stdio};

use crate::common::{Output, TestEnv, fake_vendor_bin, fixtures, pair_bin, run, system_bin};

fn cmd(script: &str) -> String {
    format!(
        "[\"{}\"]",
        fixtures().join("reviewers").join(script).display()
    )
}

/// Real git with `git-pair` on `PATH`, so the installed hooks run the binary under test.
fn git_hooked(env: &TestEnv, args: &[&str]) -> Output {
    let mut cmd = Command::new("git");
    cmd.args(args).current_dir(&env.repo).stdin(Stdio::null());
    env.configure(&mut cmd);
    cmd.env(
        "PATH",
        format!(
            "{}:{}:{}",
            pair_bin().display(),
            fixtures().join("reviewers").display(),
            system_bin().display()
        ),
    );
    run(cmd)
}

fn handoff(env: &TestEnv) -> String {
    env.pair(&["handoff"]).stdout
}

fn status_reviewer(env: &TestEnv) -> (String, String, String) {
    let s = env.pair_json(&["status"]);
    let text = |v: &serde_json::Value| v.as_str().expect("a string").to_owned();
    (
        text(&s["reviewer"]),
        text(&s["settings"]["reviewer"]["value"]),
        text(&s["settings"]["reviewer"]["from"]),
    )
}

/// Every place that names the reviewer names `want`, through one reviewed, gated commit.
fn assert_named_everywhere(env: &TestEnv, run_id: &str, want: &str) {
    let manifest = env.manifest(run_id);
    assert_eq!(manifest["reviewer"], want, "manifest: {manifest}");
    assert_eq!(
        manifest["rounds"][1]["tool"], want,
        "manifest round: {manifest}"
    );
    let transcript = handoff(env);
    assert!(
        transcript.contains(&format!("· Reviewer: {want}\n")),
        "HANDOFF header: {transcript}"
    );
    assert!(
        transcript.contains(&format!("## Round 1 — REVIEWER ({want}) ·")),
        "HANDOFF round: {transcript}"
    );
    let pr = env.pair(&["pr-body"]).stdout;
    assert!(
        pr.contains(&format!("**Reviewer:** {want} ·")),
        "PR body: {pr}"
    );
    assert!(
        pr.contains(&format!("| 1 | reviewer | {want} | APPROVED |")),
        "PR body rounds: {pr}"
    );
    let log = env.git(&["log", "--format=%s", &format!("refs/pair/runs/{run_id}")]);
    assert!(
        log.contains(&format!("review 1: APPROVED ({want}, "))
            && log.contains(&format!("review 1: dispatched to {want}\n")),
        "run log: {log}"
    );
    let status = env.pair(&["status"]);
    assert!(
        status.stderr.contains(&format!("reviewer: {want}\n"))
            || status.stdout.contains(&format!("reviewer: {want}\n")),
        "status: {status}"
    );

    env.git(&["add", "-A"]);
    let commit = git_hooked(env, &["commit", "-q", "-m", "Add f"]);
    assert_eq!(commit.code, 0, "{commit}");
    let message = env.git(&["log", "-1", "--format=%B"]);
    assert!(
        message.contains(&format!(
            "Pair-Run: {run_id}\nReviewed-by: {want} (git-pair round 1)\n"
        )),
        "trailers: {message}"
    );
    let note = env.git(&["notes", "--ref", "pair", "show", "HEAD"]);
    assert!(
        note.starts_with(&format!(
            "pair-run={run_id} verdict=APPROVED rounds=1 reviewer={want} "
        )),
        "note: {note}"
    );
}

#[test]
fn a_configured_reviewer_command_is_named_by_its_program_everywhere() {
    let env = TestEnv::new();
    env.git(&["config", "pair.reviewerCommand", &cmd("approve.sh")]);
    env.pair_json(&["hooks", "install", "--gate"]);
    let start = env.pair_json(&["start", "--task", "Add f"]);
    let run_id = start["run_id"].as_str().expect("run id").to_owned();
    let want = "command:approve.sh";
    assert_eq!(start["reviewer"], want, "start: {start}");
    // Before any review: the reviewer that would bind, not the default it would beat.
    assert_eq!(
        status_reviewer(&env),
        (want.into(), want.into(), "pair.reviewerCommand".into())
    );
    assert_eq!(env.manifest(&run_id)["reviewer"], want);
    assert!(handoff(&env).contains(&format!("· Reviewer: {want}\n")));

    env.write("src/lib.rs", "pub fn f() -> u32 {\n    1\n}\n");
    env.pair_json(&["coder-done", "--summary", "f"]);
    let review = env.pair_json(&["review"]);
    assert_eq!(review["outcomes"][0]["reviewer"], want, "{review}");
    assert_eq!(review["fallback_used"], false);
    assert_eq!(
        status_reviewer(&env),
        (want.into(), want.into(), "pair.reviewerCommand".into())
    );
    assert_named_everywhere(&env, &run_id, want);
}

#[test]
fn the_runs_reviewer_is_named_everywhere_over_a_configured_command() {
    let env = TestEnv::new();
    let spawned = env.home.join("spawned");
    env.git(&["config", "pair.reviewerCommand", &cmd("approve.sh")]);
    env.pair_json(&["hooks", "install", "--gate"]);
    let start = env.pair_json(&["start", "--task", "Add f", "--reviewer", "builtin"]);
    let run_id = start["run_id"].as_str().expect("run id").to_owned();
    assert_eq!(start["reviewer"], "builtin", "start: {start}");
    assert_eq!(
        status_reviewer(&env),
        ("builtin".into(), "builtin".into(), "run".into())
    );

    env.write("src/lib.rs", "pub fn f() -> u32 {\n    1\n}\n");
    env.write("tests/f.rs", "#[test]\nfn f() {}\n");
    env.pair_json(&["coder-done", "--summary", "f"]);
    let review = env.pair_env(
        &["review", "--json"],
        &[("STUB_PROMPT_COPY", spawned.to_str().expect("utf8"))],
    );
    assert_eq!(review.code, 0, "{review}");
    assert_eq!(
        review.json()["outcomes"][0]["reviewer"],
        "builtin",
        "{review}"
    );
    assert_eq!(review.json()["verdict"], "APPROVED", "{review}");
    assert!(!spawned.exists(), "the configured command did not run");
    assert_named_everywhere(&env, &run_id, "builtin");
}

/// `set` changes which reviewer would bind, and status, the manifest and the transcript's
/// header (rendered incrementally until then) follow; `--unset` hands it back to the order.
#[test]
fn a_set_reviewer_is_named_before_it_runs_and_unset_hands_back_to_the_command() {
    let env = TestEnv::new();
    env.git(&["config", "pair.reviewerCommand", &cmd("approve.sh")]);
    let run_id = env.start("Add f");
    env.pair_json(&["set", "reviewer", "builtin"]);
    assert_eq!(
        status_reviewer(&env),
        ("builtin".into(), "builtin".into(), "run".into())
    );
    assert_eq!(env.manifest(&run_id)["reviewer"], "builtin");
    let view = env.read("HANDOFF.md");
    assert!(view.contains("· Reviewer: builtin\n"), "{view}");

    let unset = env.pair_json(&["set", "--unset", "reviewer"]);
    assert_eq!(unset["value"], "command:approve.sh", "{unset}");
    assert_eq!(unset["from"], "pair.reviewerCommand", "{unset}");
    env.write("src/lib.rs", "pub fn f() -> u32 {\n    1\n}\n");
    env.pair_json(&["coder-done", "--summary", "f"]);
    let review = env.pair_json(&["review"]);
    assert_eq!(review["outcomes"][0]["reviewer"], "command:approve.sh");
    // The view on disk was brought up to date record by record; its header names who ran.
    let view = env.read("HANDOFF.md");
    assert!(view.contains("· Reviewer: command:approve.sh\n"), "{view}");
    assert_eq!(
        view,
        handoff(&env),
        "the incremental view is the full render"
    );
}

#[test]
fn a_fallback_is_named_as_the_reviewer_that_ran_and_stays_visible() {
    let env = TestEnv::new();
    let run_id = env.start("Add f");
    // Before any review: the configured codex is the one named (status does not probe).
    assert_eq!(
        status_reviewer(&env),
        ("codex".into(), "codex".into(), "default".into())
    );
    env.write("src/lib.rs", "pub fn f() -> u32 {\n    1\n}\n");
    env.pair_json(&["coder-done", "--summary", "f"]);
    let only_claude = env.home.join("only-claude");
    std::fs::create_dir_all(&only_claude).expect("mkdir");
    std::os::unix::fs::symlink(fake_vendor_bin().join("claude"), only_claude.join("claude"))
        .expect("link");
    let path = format!("{}:{}", only_claude.display(), system_bin().display());
    let review = env.pair_env(&["review", "--json"], &[("PATH", &path)]);
    assert_eq!(review.code, 0, "{review}");
    assert_eq!(review.json()["fallback_used"], true, "{review}");
    assert_eq!(
        review.json()["outcomes"][0]["reviewer"],
        "claude",
        "{review}"
    );

    let status = env.pair_json(&["status"]);
    assert_eq!(status["reviewer"], "claude", "{status}");
    assert_eq!(status["reviewer_fallback"], true, "{status}");
    assert_eq!(status["settings"]["reviewer"]["value"], "codex", "{status}");
    let human = env.pair(&["status"]);
    assert!(
        format!("{human}")
            .contains("reviewer: claude (a fallback: the configured reviewer was not available)"),
        "{human}"
    );
    let manifest = env.manifest(&run_id);
    assert_eq!(manifest["reviewer"], "claude", "{manifest}");
    assert_eq!(manifest["reviewer_fallback"], true, "{manifest}");
    assert!(handoff(&env).contains("· Reviewer: claude\n"));
    let pr = env.pair(&["pr-body"]).stdout;
    assert!(
        pr.contains("**Reviewer:** claude (fallback: the configured codex was not available) ·"),
        "{pr}"
    );
}

/// `start`, `set` and `review` say the order in the same one sentence.
#[test]
fn help_of_start_set_and_review_says_the_reviewer_order_in_one_sentence() {
    let sentence = "Which reviewer runs, first match wins: review --reviewer-cmd, the run's own \
                    reviewer (start --reviewer, git pair set reviewer), pair.reviewer, \
                    pair.reviewerCommand, then codex.";
    for command in ["start", "set", "review"] {
        let env = TestEnv::new();
        let out = env.pair(&[command, "--help"]);
        assert_eq!(out.code, 0, "{out}");
        let flat = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(sentence), "{command} --help: {out}");
    }
}
