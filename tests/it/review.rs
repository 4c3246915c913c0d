//! `review` and `probe` (SPEC §6): the loop end to end with stub reviewers, fail-closed
//! verdicts, bounded waits, write-ahead dispatches, panels and the round rules.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{TestEnv, assert_one_error_line, fake_vendor_bin, fixtures, system_bin};

/// A run with one coder round on a change to `src/lib.rs`.
fn env_ready_for_review() -> (TestEnv, String) {
    let env = TestEnv::new();
    let run_id = env.start("Teach the fetcher to retry");
    env.write("src/lib.rs", "pub fn fetch() -> u32 {\n    42\n}\n");
    env.pair_json(&["coder-done", "--summary", "Added fetch"]);
    (env, run_id)
}

fn cmd(script: &str) -> String {
    format!(
        "[\"{}\"]",
        fixtures().join("reviewers").join(script).display()
    )
}

fn review(env: &TestEnv, script: &str, extra: &[&str]) -> crate::common::Output {
    let command = cmd(script);
    let mut args = vec!["review", "--reviewer-cmd", command.as_str(), "--json"];
    args.extend_from_slice(extra);
    env.pair(&args)
}

fn show(env: &TestEnv, run_id: &str, path: &str) -> String {
    env.git(&["show", &format!("refs/pair/runs/{run_id}:{path}")])
}

#[test]
fn the_loop_runs_end_to_end_with_stub_reviewers() {
    let (env, run_id) = env_ready_for_review();
    let out = review(&env, "request-changes.sh", &[]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["round"], 1);
    assert_eq!(v["verdict"], "CHANGES_REQUESTED");
    assert_eq!(v["outcome"], "completed");
    assert_eq!(v["fallback_used"], false);
    assert_eq!(
        v["findings"][0],
        serde_json::json!({"n": 1, "category": "correctness", "severity": "high", "location": "src/lib.rs:10", "text": "off by one in the range end"})
    );
    assert_eq!(
        v["findings"][1],
        serde_json::json!({"n": 2, "category": "tests", "severity": null, "location": "", "text": "no test covers the empty input"})
    );
    assert_eq!(env.pair_json(&["status"])["next_action"], "code");

    // Everything the reviewer saw and said is stored in the run.
    let diff = show(&env, &run_id, "reviews/1/diff.patch");
    assert!(diff.contains("+pub fn fetch() -> u32 {"), "{diff}");
    let prompt = show(&env, &run_id, "reviews/1/prompt.md");
    assert!(
        prompt.starts_with(&format!("<!-- git-pair: {run_id}/1/1 -->")),
        "{prompt}"
    );
    assert!(prompt.contains("Teach the fetcher to retry") && prompt.contains("Added fetch"));
    assert!(show(&env, &run_id, "reviews/1/output.txt").contains("VERDICT: CHANGES_REQUESTED"));
    let result: Value =
        serde_json::from_str(&show(&env, &run_id, "reviews/1/result.json")).expect("json");
    assert_eq!(result["verdict"], "CHANGES_REQUESTED");
    let attempts: Value =
        serde_json::from_str(&show(&env, &run_id, "reviews/1/attempts.json")).expect("json");
    assert_eq!(attempts[0]["attempt"]["exit_code"], 0);
    assert!(
        attempts[0]["attempt"]["argv"][0]
            .as_str()
            .expect("argv")
            .ends_with("request-changes.sh")
    );

    // The reviewed snapshot is the work tree as `git add -A && git write-tree` sees it.
    let index = env.home.join("tmp-index");
    let mut add = std::process::Command::new("git");
    add.args(["add", "-A"])
        .current_dir(&env.repo)
        .env("GIT_INDEX_FILE", &index);
    env.configure(&mut add);
    add.env("GIT_INDEX_FILE", &index);
    assert!(add.status().expect("git add").success());
    let mut write = std::process::Command::new("git");
    write.args(["write-tree"]).current_dir(&env.repo);
    env.configure(&mut write);
    write.env("GIT_INDEX_FILE", &index);
    let tree = String::from_utf8(write.output().expect("write-tree").stdout).expect("utf8");
    let snapshot = env.git(&[
        "rev-parse",
        &format!("refs/pair/runs/{run_id}:reviews/1/snapshot"),
    ]);
    assert_eq!(snapshot, tree);

    // Round 2: a scoped re-review that shows the open findings, then approval.
    env.write("src/lib.rs", "pub fn fetch() -> u32 {\n    43\n}\n");
    env.write_outside("responses.json", r#"[{"finding": 1, "status": "addressed"}, {"finding": 2, "status": "deferred", "reason": "tests come next"}]"#);
    let responses = env.home.join("responses.json");
    env.pair_json(&[
        "coder-done",
        "--summary",
        "Fixed the range",
        "--responses",
        responses.to_str().expect("utf8"),
    ]);
    let prompt_copy = env.home.join("prompt-2.md");
    let command = cmd("approve.sh");
    let out = env.pair_env(
        &["review", "--reviewer-cmd", &command, "--json"],
        &[("STUB_PROMPT_COPY", prompt_copy.to_str().expect("utf8"))],
    );
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["verdict"], "APPROVED");
    let prompt = std::fs::read_to_string(&prompt_copy).expect("prompt copy");
    assert!(prompt.contains("ADDRESSED or NOT ADDRESSED"), "{prompt}");
    assert!(
        prompt.contains("round 1 finding 2: [tests] no test covers the empty input"),
        "{prompt}"
    );
    assert!(
        prompt.contains("coder: deferred: tests come next"),
        "{prompt}"
    );
    assert!(
        prompt.contains("-    42\n+    43"),
        "the since-last-review diff is shown:\n{prompt}"
    );
    assert_eq!(env.pair_json(&["status"])["next_action"], "finish");

    let base = env.git(&["rev-parse", "HEAD"]);
    let log = env.git(&[
        "log",
        "--format=%s",
        &format!("{}..refs/pair/runs/{run_id}", base.trim()),
    ]);
    assert!(log.starts_with("review 2: APPROVED (command:approve.sh, 0 findings)\nreview 2: dispatched to command:approve.sh\ncoder 2: Fixed the range\nreview 1: CHANGES_REQUESTED (command:request-changes.sh, 2 findings)\n"), "{log}");
    let handoff = env.read("HANDOFF.md");
    assert!(
        handoff.contains("## Round 1 — REVIEWER (command:request-changes.sh)"),
        "{handoff}"
    );
    assert!(handoff.contains("VERDICT: APPROVED"), "{handoff}");
    let since = env.pair(&["diff", &run_id, "--round", "2"]);
    assert!(since.stdout.contains("-    42\n+    43"), "{since}");
    env.assert_fsck_clean();
}

#[test]
fn unreadable_answers_are_reasked_once_then_changes_requested_never_approved() {
    for script in ["garbage.sh", "silent.sh"] {
        let (env, run_id) = env_ready_for_review();
        let out = review(&env, script, &[]);
        assert_eq!(out.code, 0, "{script}: {out}");
        let v = out.json();
        assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{script}");
        assert_eq!(v["findings"][0]["category"], "process", "{script}");
        assert_eq!(v["outcomes"][0]["outcome"], "failed-validation");
        assert_eq!(v["outcomes"][0]["attempts"], 2, "one re-ask");
        let output = show(&env, &run_id, "reviews/1/output.txt");
        assert_eq!(
            output
                .matches(&format!("===== command:{script} attempt"))
                .count(),
            2,
            "{output}"
        );
    }
}

#[test]
fn a_reviewer_that_fails_twice_records_no_verdict_and_uses_no_round() {
    let (env, run_id) = env_ready_for_review();
    let out = review(&env, "fail.sh", &[]);
    assert_one_error_line(&out, 1, "no verdict for round 1");
    let v = out.json();
    assert_eq!(v["verdict"], Value::Null);
    assert_eq!(v["outcome"], "died");
    assert_eq!(v["outcomes"][0]["attempts"], 2, "one retry");
    assert!(
        v["error"].as_str().expect("error").contains("died"),
        "{out}"
    );
    // The stub printed VERDICT: APPROVED before failing: that is never read as approval.
    let m = env.manifest(&run_id);
    assert_eq!(m["rounds"][1]["verdict"], Value::Null);
    assert_eq!(m["rounds"][1]["outcome"], "died");
    assert_eq!(m["next_action"], "review", "no round used");
    assert_eq!(env.pair_json(&["status"])["last_verdict"], Value::Null);
    // The next review is still round 1.
    let out = review(&env, "approve.sh", &[]);
    assert_eq!(out.json()["round"], 1, "{out}");
}

#[test]
fn a_hanging_reviewer_times_out_and_its_whole_process_group_is_killed() {
    let (env, _) = env_ready_for_review();
    let pid_file = env.home.join("grandchild.pid");
    let command = cmd("fork-and-hang.sh");
    let started = Instant::now();
    let out = env.pair_env(
        &[
            "review",
            "--reviewer-cmd",
            &command,
            "--timeout",
            "1",
            "--json",
        ],
        &[("STUB_PID_FILE", pid_file.to_str().expect("utf8"))],
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the wait was not bounded"
    );
    assert_one_error_line(&out, 1, "timed out");
    assert_eq!(out.json()["outcome"], "timed-out");
    assert_eq!(
        out.json()["outcomes"][0]["attempts"],
        1,
        "the timeout bounds the whole review: no retry after it"
    );
    let pid = std::fs::read_to_string(&pid_file)
        .expect("pid")
        .trim()
        .to_owned();
    let alive = std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ");
    assert!(!alive, "the reviewer's grandchild {pid} is still running");
}

#[test]
fn megabytes_of_output_are_stored_and_the_json_stays_small() {
    let (env, run_id) = env_ready_for_review();
    let out = review(&env, "big-output.sh", &[]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["verdict"], "CHANGES_REQUESTED");
    let findings_text: usize = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["text"].as_str().unwrap_or("").len())
        .sum();
    assert!(
        out.stdout.len() - findings_text < 4096,
        "review --json is {} bytes",
        out.stdout.len()
    );
    let size = env.git(&[
        "cat-file",
        "-s",
        &format!("refs/pair/runs/{run_id}:reviews/1/output.txt"),
    ]);
    assert!(size.trim().parse::<u64>().expect("size") > 5_000_000);
}

#[test]
fn vendor_sessions_are_captured_and_the_next_round_resumes_them() {
    let (env, run_id) = env_ready_for_review();
    let argv_file = env.home.join("argv.txt");
    let argv = argv_file.to_str().expect("utf8");
    let out = env.pair_with_vendors(
        &["review", "--json"],
        &[("FAKE_REVIEW", "changes"), ("FAKE_ARGV_FILE", argv)],
    );
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["outcomes"][0]["reviewer"], "codex");
    assert_eq!(
        v["outcomes"][0]["session_id"],
        "0199f0aa-1111-7222-8333-444455556666"
    );
    let first = std::fs::read_to_string(&argv_file).expect("argv");
    assert!(first.starts_with("exec\n--sandbox\nread-only\n"), "{first}");
    let m = env.manifest(&run_id);
    assert_eq!(
        m["sessions"]["0199f0aa-1111-7222-8333-444455556666"]["role"],
        "reviewer"
    );
    env.pair_json(&["coder-done", "--summary", "fixed"]);
    let out = env.pair_with_vendors(&["review", "--json"], &[("FAKE_ARGV_FILE", argv)]);
    assert_eq!(out.json()["verdict"], "APPROVED", "{out}");
    let second = std::fs::read_to_string(&argv_file).expect("argv");
    assert!(
        second.contains("resume\n") && second.contains("0199f0aa-1111-7222-8333-444455556666\n"),
        "{second}"
    );
}

#[test]
fn a_missing_reviewer_cli_falls_back_to_the_other_vendor() {
    let (env, run_id) = env_ready_for_review();
    let only_claude = env.home.join("only-claude");
    std::fs::create_dir_all(&only_claude).expect("mkdir");
    std::os::unix::fs::symlink(fake_vendor_bin().join("claude"), only_claude.join("claude"))
        .expect("link");
    let path = format!("{}:{}", only_claude.display(), system_bin().display());
    let out = env.pair_env(&["review", "--json"], &[("PATH", &path)]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["fallback_used"], true);
    assert_eq!(v["outcomes"][0]["reviewer"], "claude");
    assert_eq!(
        v["outcomes"][0]["session_id"],
        "11111111-2222-4333-8444-555555555555"
    );
    assert_eq!(env.manifest(&run_id)["reviewer_fallback"], true);
    let probe = env.pair_env(&["probe", "--json"], &[("PATH", &path)]);
    assert_eq!(probe.code, 0, "{probe}");
    let p = probe.json();
    assert_eq!(p["reviewers"][0]["configured"], "codex");
    assert_eq!(p["reviewers"][0]["winner"], "claude");
    assert_eq!(p["reviewers"][0]["fallback_used"], true);
}

#[test]
fn nothing_binding_is_an_error_naming_what_was_probed_and_stores_nothing() {
    let (env, _) = env_ready_for_review();
    let before = env.pair_refs();
    let out = env.pair(&["review"]);
    assert_one_error_line(&out, 1, "no reviewer realization binds");
    assert!(
        out.stderr.contains("codex") && out.stderr.contains("claude"),
        "{out}"
    );
    // The way on is a command to paste, the offline reviewer among them.
    assert!(
        out.stderr.contains(
            "git config pair.reviewer builtin (this run only: git pair set reviewer builtin)"
        ),
        "{out}"
    );
    // The missing CLIs by the install commands the realization data names.
    let hint = out.stderr.lines().nth(1).unwrap_or_default();
    assert!(
        hint.contains(
            "install codex (npm install -g @openai/codex) or claude (npm install -g @anthropic-ai/claude-code)"
        ),
        "{out}"
    );
    assert_eq!(env.pair_refs(), before);
    let out = env.pair(&["probe"]);
    assert_one_error_line(&out, 1, "no reviewer realization binds");
    assert!(
        out.stderr.contains("git config pair.reviewer builtin"),
        "{out}"
    );
    // Following it, the review runs.
    let out = env.pair(&["set", "reviewer", "builtin"]);
    assert_eq!(out.code, 0, "{out}");
    let out = env.pair(&["review"]);
    assert_eq!(out.code, 0, "{out}");
}

#[test]
fn a_vendor_reporting_its_own_failure_is_not_a_verdict() {
    let (env, _) = env_ready_for_review();
    env.git(&["config", "pair.reviewer", "claude"]);
    let out = env.pair_with_vendors(&["review", "--json"], &[("FAKE_REVIEW", "not-logged-in")]);
    // The run's reviewer was fixed at start (codex); claude's failure is checked on a new run.
    assert!(out.code == 0 || out.code == 1, "{out}");
    let env = TestEnv::new();
    env.git(&["config", "pair.reviewer", "claude"]);
    env.start("t");
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "a"]);
    let out = env.pair_with_vendors(&["review", "--json"], &[("FAKE_REVIEW", "not-logged-in")]);
    assert_one_error_line(&out, 1, "Not logged in");
    assert_eq!(out.json()["outcome"], "died");
}

#[test]
fn a_review_killed_mid_flight_is_resumed_by_the_next_review() {
    let (env, run_id) = env_ready_for_review();
    let pid_file = env.home.join("stub.pid");
    let command = cmd("hang.sh");
    let mut child = env
        .pair_cmd(&["review", "--reviewer-cmd", &command])
        .env("STUB_PID_FILE", &pid_file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !pid_file.exists() {
        assert!(Instant::now() < deadline, "the reviewer never started");
        std::thread::yield_now();
    }
    child.kill().expect("SIGKILL the review");
    child.wait().expect("reap");
    let stub = std::fs::read_to_string(&pid_file)
        .expect("pid")
        .trim()
        .to_owned();
    let _ = std::process::Command::new("kill")
        .args(["-9", &stub])
        .status();

    assert_eq!(env.pair_json(&["status"])["next_action"], "resume:review");
    let records_before = env.records(&run_id);
    assert!(
        records_before
            .last()
            .expect("records")
            .contains("-review-dispatch-")
    );
    let out = review(&env, "approve.sh", &[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["round"], 1);
    assert_eq!(out.json()["verdict"], "APPROVED");
    let records = env.records(&run_id);
    assert_eq!(
        records
            .iter()
            .filter(|r| r.contains("-review-dispatch-"))
            .count(),
        2
    );
    assert_eq!(records.iter().filter(|r| r.contains("-review-")).count(), 3);
    assert_eq!(env.pair_json(&["status"])["next_action"], "finish");
    let prompt = show(&env, &run_id, "reviews/1/prompt.md");
    assert!(
        prompt.starts_with(&format!("<!-- git-pair: {run_id}/1/4 -->")),
        "a new attempt marker:\n{prompt}"
    );
}

#[test]
fn a_resumed_review_gives_the_builtin_the_dispatched_change() {
    let env = TestEnv::new();
    let run_id = env.start("Teach the fetcher to retry");
    env.write("src/lib.rs", "pub fn fetch() -> u32 {\n    dbg!(42)\n}\n");
    env.write("tests/fetch.rs", "#[test]\nfn fetch() {}\n");
    env.pair_json(&["coder-done", "--summary", "Added fetch"]);
    env.git(&["config", "pair.reviewers", "builtin,command"]);
    env.git(&["config", "pair.maxParallel", "1"]);
    env.git(&["config", "pair.reviewerCommand", &cmd("hang.sh")]);
    let pid_file = env.home.join("stub.pid");
    let mut child = env
        .pair_cmd(&["review"])
        .env("STUB_PID_FILE", &pid_file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !pid_file.exists() {
        assert!(Instant::now() < deadline, "the reviewer never started");
        std::thread::yield_now();
    }
    child.kill().expect("SIGKILL the review");
    child.wait().expect("reap");
    let stub = std::fs::read_to_string(&pid_file)
        .expect("pid")
        .trim()
        .to_owned();
    let _ = std::process::Command::new("kill")
        .args(["-9", &stub])
        .status();
    assert_eq!(env.pair_json(&["status"])["next_action"], "resume:review");
    // The work tree moves on; the resumed dispatch still reviews the snapshot it sent.
    env.write("src/lib.rs", "pub fn fetch() -> u32 {\n    42\n}\n");

    env.git(&["config", "pair.reviewerCommand", &cmd("approve.sh")]);
    let out = env.pair(&["review", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["round"], 1, "{out}");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{out}");
    assert_eq!(
        v["findings"],
        serde_json::json!([{
            "n": 1,
            "category": "debug-leftover",
            "severity": "medium",
            "location": "src/lib.rs:2",
            "text": "(builtin) dbg! left in the change"
        }]),
        "{out}"
    );
    assert_eq!(
        env.records(&run_id)
            .iter()
            .filter(|r| r.contains("-review-dispatch-"))
            .count(),
        2
    );
}

#[test]
fn when_the_dispatch_cannot_be_written_nothing_is_spawned() {
    let (env, _) = env_ready_for_review();
    // A file where the writer lock directory must go makes every write fail, for root too.
    std::fs::remove_dir_all(env.repo.join(".git/pair/locks")).expect("rm locks");
    std::fs::write(env.repo.join(".git/pair/locks"), "in the way").expect("write");
    let before = env.pair_refs();
    let spawned = env.home.join("spawned.md");
    let command = cmd("approve.sh");
    let out = env.pair_env(
        &["review", "--reviewer-cmd", &command],
        &[("STUB_PROMPT_COPY", spawned.to_str().expect("utf8"))],
    );
    assert_one_error_line(&out, 1, "cannot record the review dispatch");
    assert!(
        !spawned.exists(),
        "a reviewer was spawned although nothing could be recorded"
    );
    assert_eq!(env.pair_refs(), before);
}

#[test]
fn a_write_that_fails_inside_git_is_one_line_of_words_never_a_debug_dump() {
    let (env, _) = env_ready_for_review();
    // Every object packed, and a file where each loose-object directory must go: the next
    // object written fails inside gix (for root too).
    env.git(&["repack", "-adq"]);
    env.git(&["prune-packed"]);
    let objects = env.repo.join(".git/objects");
    for i in 0..=255u8 {
        let dir = objects.join(format!("{i:02x}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::write(&dir, "in the way").expect("write");
    }
    let before = env.pair_refs();
    let spawned = env.home.join("spawned.md");
    let command = cmd("approve.sh");
    let out = env.pair_env(
        &["review", "--reviewer-cmd", &command],
        &[("STUB_PROMPT_COPY", spawned.to_str().expect("utf8"))],
    );
    assert_one_error_line(&out, 1, "Not a directory (os error 20)");
    for debug in ["Message {", "Os {", "Caused by", "PersistError(", "kind:"] {
        assert!(!out.stderr.contains(debug), "a Debug dump ({debug}): {out}");
    }
    assert!(!spawned.exists(), "a reviewer was spawned");
    assert_eq!(env.pair_refs(), before);
}

#[test]
#[ignore = "root ignores file modes: run as a non-root user with --ignored (the test above covers the same path for root)"]
fn a_read_only_object_store_spawns_nothing() {
    assert!(
        !is_root(),
        "as root, file modes are ignored: run as another user"
    );
    let (env, _) = env_ready_for_review();
    let objects = env.repo.join(".git/objects");
    let chmod = |mode: &str| {
        assert!(
            std::process::Command::new("chmod")
                .args(["-R", mode, objects.to_str().expect("utf8")])
                .status()
                .expect("chmod")
                .success()
        );
    };
    chmod("a-w");
    let spawned = env.home.join("spawned.md");
    let command = cmd("approve.sh");
    let out = env.pair_env(
        &["review", "--reviewer-cmd", &command],
        &[("STUB_PROMPT_COPY", spawned.to_str().expect("utf8"))],
    );
    chmod("u+w");
    assert_eq!(out.code, 1, "{out}");
    assert!(
        !spawned.exists(),
        "a reviewer was spawned although nothing could be recorded"
    );
}

fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0\n"))
        .unwrap_or(false)
}

#[test]
fn a_blind_path_is_rejected_before_any_reviewer_is_spawned() {
    let (env, _) = env_ready_for_review();
    env.write(".pair/working/scratch.md", "notes for myself\n");
    env.git(&["config", "--add", "pair.review.exclude", "secrets/**"]);
    let before = env.pair_refs();
    let spawned = env.home.join("spawned.md");
    let command = cmd("approve.sh");
    let out = env.pair_env(
        &["review", "--reviewer-cmd", &command],
        &[("STUB_PROMPT_COPY", spawned.to_str().expect("utf8"))],
    );
    assert_one_error_line(&out, 1, ".pair/working/scratch.md");
    assert!(!spawned.exists());
    assert_eq!(env.pair_refs(), before);
    std::fs::remove_dir_all(env.repo.join(".pair")).expect("rm");
    env.write("secrets/key.txt", "k\n");
    let out = env.pair_env(
        &["review", "--reviewer-cmd", &command],
        &[("STUB_PROMPT_COPY", spawned.to_str().expect("utf8"))],
    );
    assert_one_error_line(&out, 1, "secrets/key.txt");
    assert!(!spawned.exists());
}

#[test]
fn dry_run_prints_the_packet_and_stores_nothing() {
    let (env, _) = env_ready_for_review();
    let before = env.pair_refs();
    let spawned = env.home.join("spawned.md");
    let command = cmd("approve.sh");
    let out = env.pair_env(
        &["review", "--reviewer-cmd", &command, "--dry-run"],
        &[("STUB_PROMPT_COPY", spawned.to_str().expect("utf8"))],
    );
    assert_eq!(out.code, 0, "{out}");
    assert!(out.stdout.contains("+pub fn fetch() -> u32 {"));
    assert!(
        out.stdout.contains("VERDICT: APPROVED"),
        "the contract is in the packet"
    );
    assert!(!spawned.exists());
    assert_eq!(env.pair_refs(), before);
    // The reviewer command line its help promises, on stderr (stdout is the prompt).
    let script = fixtures().join("reviewers").join("approve.sh");
    let with_space = format!("[\"{}\", \"--mode\", \"two words\"]", script.display());
    let out = env.pair(&["review", "--reviewer-cmd", &with_space, "--dry-run"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stderr.contains(&format!(
            "dry run: command:approve.sh would run: {} --mode 'two words'\n",
            script.display()
        )),
        "{out}"
    );
    assert!(!out.stdout.contains("would run"), "{out}");
    env.git(&["config", "pair.reviewer", "builtin"]);
    let out = env.pair(&["review", "--dry-run"]);
    assert!(
        out.stderr
            .contains("dry run: builtin would run: in-process (git pair's built-in checks"),
        "{out}"
    );
    assert_eq!(env.pair_refs(), before);
}

#[test]
fn realizations_are_data_a_renamed_flag_changes_the_argv() {
    let (env, _) = env_ready_for_review();
    let shipped = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/surfaces.json"),
    )
    .expect("data");
    let edited = shipped.replace(
        "\"--skip-git-repo-check\", \"--output-last-message\"",
        "\"--skip-repo-check-renamed\", \"--output-last-message\"",
    );
    assert_ne!(edited, shipped);
    env.write_outside("surfaces.json", &edited);
    env.git(&[
        "config",
        "pair.surfaceFile",
        env.home.join("surfaces.json").to_str().expect("utf8"),
    ]);
    let out = env.pair_with_vendors(&["review", "--dry-run", "--json"], &[]);
    assert_eq!(out.code, 0, "{out}");
    let argv: Vec<String> =
        serde_json::from_value(out.json()["reviewers"][0]["argv"].clone()).expect("argv");
    assert!(
        argv.contains(&"--skip-repo-check-renamed".to_owned()),
        "{argv:?}"
    );
    assert!(!argv.contains(&"--skip-git-repo-check".to_owned()));
}

#[test]
fn panels_keep_survivors_and_apply_the_quorum() {
    let (env, run_id) = env_ready_for_review();
    env.git(&["config", "pair.reviewers", "builtin,command"]);
    env.git(&["config", "pair.reviewerCommand", &cmd("fail.sh")]);
    env.git(&["config", "pair.maxParallel", "1"]);
    // Default quorum (all): the failed sibling leaves the round without a verdict…
    let out = env.pair(&["review", "--json"]);
    assert_one_error_line(&out, 1, "no verdict");
    let v = out.json();
    assert_eq!(v["outcomes"][0]["reviewer"], "builtin");
    assert_eq!(v["outcomes"][0]["outcome"], "completed");
    assert_eq!(v["outcomes"][1]["outcome"], "died");
    // …and with a quorum of one the survivor's approval carries the round.
    env.git(&["config", "pair.quorum", "1"]);
    let out = env.pair(&["review", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["verdict"], "APPROVED");
    let result: Value =
        serde_json::from_str(&show(&env, &run_id, "reviews/1/result.json")).expect("json");
    assert_eq!(result["parallelism"]["limit"], 1);
    assert_eq!(result["parallelism"]["bound_by"], "maxParallel");
}

#[test]
fn round_rules_are_enforced() {
    let (env, _) = env_ready_for_review();
    assert_eq!(review(&env, "request-changes.sh", &[]).code, 0);
    let out = review(&env, "approve.sh", &[]);
    assert_one_error_line(&out, 1, "already reviewed");
    let out = review(&env, "approve.sh", &["--again"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["round"], 1);

    let env = TestEnv::new();
    env.pair_json(&["start", "--task", "t", "--max-rounds", "2"]);
    let out = env.pair(&["review"]);
    assert_one_error_line(&out, 1, "nothing to review");
    for round in 1..=2 {
        env.write("a.txt", &format!("{round}\n"));
        env.pair_json(&["coder-done", "--summary", "x"]);
        let command = format!(
            "[\"{}\", \"finding {round}\"]",
            fixtures().join("reviewers/request-changes.sh").display()
        );
        let out = env.pair(&["review", "--reviewer-cmd", &command]);
        assert_eq!(out.code, 0, "{out}");
    }
    assert_eq!(env.pair_json(&["status"])["next_action"], "stop:round-cap");
    let out = env.pair(&["coder-done", "--summary", "more"]);
    assert_one_error_line(&out, 1, "round cap");
    assert_eq!(
        env.pair_json(&["coder-done", "--summary", "more", "--extra-round"])["round"],
        3
    );

    let env = TestEnv::new();
    env.start("stall");
    for _ in 0..2 {
        env.write("a.txt", &crate::common::NOW.to_string());
        env.pair_json(&["coder-done", "--summary", "x"]);
        assert_eq!(review(&env, "request-changes.sh", &[]).code, 0);
    }
    assert_eq!(env.pair_json(&["status"])["next_action"], "stop:stalled");
}

#[test]
fn a_plan_is_reviewed_as_a_plan() {
    let env = TestEnv::new();
    env.start("plan first");
    env.pair_json(&["coder-done", "--summary", "wrote the plan"]);
    env.write_outside("plan.md", "1. Add a retry loop\n2. Cap it at 3 tries\n");
    let prompt_copy = env.home.join("prompt.md");
    let command = cmd("approve.sh");
    let plan = env.home.join("plan.md");
    let out = env.pair_env(
        &[
            "review",
            "--reviewer-cmd",
            &command,
            "--plan",
            plan.to_str().expect("utf8"),
            "--json",
        ],
        &[("STUB_PROMPT_COPY", prompt_copy.to_str().expect("utf8"))],
    );
    assert_eq!(out.code, 0, "{out}");
    let prompt = std::fs::read_to_string(&prompt_copy).expect("prompt");
    assert!(
        prompt.contains("reviewing a plan") && prompt.contains("2. Cap it at 3 tries"),
        "{prompt}"
    );
}

#[test]
fn an_offline_vendor_cli_is_given_up_on_instead_of_waited_out() {
    let (env, _) = env_ready_for_review();
    let started = Instant::now();
    let out = env.pair_with_vendors(
        &["review", "--json", "--timeout", "120"],
        &[("FAKE_REVIEW", "offline")],
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "waited {:?}",
        started.elapsed()
    );
    assert_one_error_line(&out, 1, "waiting for network");
    assert!(out.stderr.contains("connection dropped"), "{out}");
    let v = out.json();
    assert_eq!(v["outcome"], "died");
    assert_eq!(
        v["outcomes"][0]["attempts"], 1,
        "no retry on top of the CLI's own retries"
    );
    assert_eq!(
        env.pair_json(&["status"])["next_action"],
        "review",
        "no round used"
    );
}

/// SPEC §6.3: an APPROVED answer carrying a high or critical finding, or a `[secret]` /
/// `[process]` one, is not an approval — recorded as CHANGES_REQUESTED with a `[process]`
/// finding saying why; the gate stays closed and `finish` refuses. Low and medium findings
/// under APPROVED leave it an approval.
#[test]
fn an_approval_carrying_a_blocking_finding_is_changes_requested() {
    for (severity, category, blocks) in [
        ("critical", "security", true),
        ("high", "correctness", true),
        ("low", "secret", true),
        ("low", "PROCESS", true),
        ("medium", "correctness", false),
        ("low", "nit", false),
    ] {
        let (env, run_id) = env_ready_for_review();
        let command = cmd("approve.sh");
        let out = env.pair_env(
            &["review", "--reviewer-cmd", &command, "--json"],
            &[
                ("STUB_NOTE", "leaks the admin password"),
                ("STUB_SEVERITY", severity),
                ("STUB_CATEGORY", category),
            ],
        );
        assert_eq!(out.code, 0, "{out}");
        let v = out.json();
        let findings = v["findings"].as_array().expect("findings");
        assert_eq!(findings[0]["text"], "leaks the admin password", "{v}");
        if blocks {
            assert_eq!(
                v["verdict"], "CHANGES_REQUESTED",
                "{severity} {category}: {v}"
            );
            assert_eq!(findings.len(), 2, "{v}");
            assert_eq!(findings[1]["category"], "process");
            let why = findings[1]["text"].as_str().expect("text");
            assert!(
                why.contains("answered APPROVED") && why.contains("#1"),
                "{why}"
            );
            assert_eq!(env.pair_json(&["status"])["next_action"], "code");
            let result: Value =
                serde_json::from_str(&show(&env, &run_id, "reviews/1/result.json")).expect("json");
            assert_eq!(result["verdict"], "CHANGES_REQUESTED");
            let finish = env.pair(&["finish"]);
            assert_eq!(finish.code, 1, "finish must refuse: {finish}");
            assert!(env.read("HANDOFF.md").contains("answered APPROVED"));
        } else {
            assert_eq!(v["verdict"], "APPROVED", "{severity} {category}: {v}");
            assert_eq!(findings.len(), 1, "{v}");
            assert_eq!(env.pair_json(&["status"])["next_action"], "finish");
        }
    }
}

/// `review` with `sequence.sh` answering call by call as `seq` says; returns the output and
/// the stub's call-count file.
fn review_in_sequence(env: &TestEnv, seq: &str) -> (crate::common::Output, std::path::PathBuf) {
    let count = env.home.join("calls");
    let command = cmd("sequence.sh");
    let out = env.pair_env(
        &["review", "--reviewer-cmd", &command, "--json"],
        &[
            ("STUB_SEQ", seq),
            ("STUB_COUNT", count.to_str().expect("utf8")),
        ],
    );
    (out, count)
}

/// The design's invariant (SPEC §6.3): at most two reviewer calls per round, across launch
/// failures, timeouts and re-asks together. Fail → retry → garbage ends there, fail-closed,
/// never APPROVED (it used to re-ask a third time and could approve).
#[test]
fn a_round_makes_at_most_two_reviewer_calls() {
    let cases: &[(&str, u32, Option<&str>)] = &[
        // (sequence, calls, verdict)
        ("fail,garbage,approve", 2, Some("CHANGES_REQUESTED")),
        ("fail,fail,approve", 2, None),
        ("garbage,garbage,approve", 2, Some("CHANGES_REQUESTED")),
        ("garbage,approve", 2, Some("APPROVED")),
        ("fail,approve", 2, Some("APPROVED")),
        ("approve", 1, Some("APPROVED")),
        // CHANGES_REQUESTED with no severity on any finding is format drift: asked once more,
        // then kept as it is; one with a severity is not asked again.
        ("cr-nosev,cr", 2, Some("CHANGES_REQUESTED")),
        ("cr-nosev,cr-nosev,approve", 2, Some("CHANGES_REQUESTED")),
        ("cr-nosev,approve", 2, Some("APPROVED")),
        ("cr,approve", 1, Some("CHANGES_REQUESTED")),
        ("fail,cr-nosev,approve", 2, Some("CHANGES_REQUESTED")),
    ];
    for &(seq, calls, verdict) in cases {
        let (env, run_id) = env_ready_for_review();
        let (out, count) = review_in_sequence(&env, seq);
        let made: u32 = std::fs::read_to_string(&count)
            .expect("the stub counted")
            .trim()
            .parse()
            .expect("a count");
        assert_eq!(made, calls, "{seq}: {out}");
        let v = out.json();
        match verdict {
            Some(verdict) => {
                assert_eq!(out.code, 0, "{seq}: {out}");
                assert_eq!(v["verdict"], verdict, "{seq}: {v}");
            }
            None => {
                assert_eq!(out.code, 1, "{seq}: {out}");
                assert!(v["verdict"].is_null(), "{seq}: {v}");
            }
        }
        let attempts: Value =
            serde_json::from_str(&show(&env, &run_id, "reviews/1/attempts.json")).expect("json");
        assert_eq!(
            attempts.as_array().expect("attempts").len() as u32,
            calls,
            "{seq}: every call is a recorded attempt"
        );
    }
}

/// A re-ask names what was wrong with the answer it re-asks.
#[test]
fn a_reask_says_what_was_wrong() {
    for (seq, says) in [
        ("garbage,approve", "no readable verdict"),
        ("cr-nosev,cr", "without a `[severity: …]` tag"),
        ("json-notext,approve", "finding 2 has no `text`"),
    ] {
        let (env, _) = env_ready_for_review();
        let (out, count) = review_in_sequence(&env, seq);
        assert_eq!(out.code, 0, "{out}");
        let prompts = std::fs::read_to_string(count.with_extension("prompts")).expect("prompts");
        let second = prompts.lines().nth(1).expect("a second call");
        assert!(
            second.starts_with("Your previous answer had") && second.contains(says),
            "{seq}: {second}"
        );
    }
}

/// SPEC: a finding's severity and location are optional, and an unknown key is ignored (and
/// noted), never fatal: the reviewer's findings are kept at the first call.
#[test]
fn a_json_answer_without_optional_keys_or_with_extra_keys_is_kept() {
    let (env, run_id) = env_ready_for_review();
    let (out, count) = review_in_sequence(&env, "json-lenient");
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(std::fs::read_to_string(&count).expect("count").trim(), "1");
    let v = out.json();
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v}");
    let findings = v["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 2, "{v}");
    assert_eq!(findings[1]["text"], "no test covers it");
    assert!(findings[1]["severity"].is_null(), "{v}");
    assert_eq!(findings[1]["location"], "");
    let attempts = show(&env, &run_id, "reviews/1/attempts.json");
    assert!(
        attempts.contains("/confidence") && attempts.contains("/findings/1/why"),
        "the ignored keys are recorded: {attempts}"
    );
    // The human view shows each finding's severity when it has one.
    let (env, _) = env_ready_for_review();
    let human = env.pair_env(
        &["review", "--reviewer-cmd", &cmd("sequence.sh")],
        &[
            ("STUB_SEQ", "json-lenient"),
            ("STUB_COUNT", env.home.join("c").to_str().expect("utf8")),
        ],
    );
    assert_eq!(human.code, 0, "{human}");
    assert!(
        human
            .stdout
            .contains("1. [correctness] [severity: high] src/lib.rs:1 — wrong answer\n2. [tests] no test covers it\n"),
        "{human}"
    );
}

/// One reviewer, chosen in one order: the run's own reviewer (`start --reviewer`, `set`) beats
/// a configured `pair.reviewerCommand`; `--reviewer-cmd` on the review beats both; with
/// neither named, the configured command reviews.
#[test]
fn the_runs_reviewer_beats_a_configured_reviewer_command() {
    let env = TestEnv::new();
    let spawned = env.home.join("spawned");
    env.git(&["config", "pair.reviewerCommand", &cmd("approve.sh")]);
    let start = env.pair(&["start", "--task", "t", "--reviewer", "builtin", "--json"]);
    assert_eq!(start.code, 0, "{start}");
    env.write("src/lib.rs", "pub fn f() -> u32 {\n    1\n}\n");
    env.pair_json(&["coder-done", "--summary", "f"]);
    let out = env.pair_env(
        &["review", "--json"],
        &[("STUB_PROMPT_COPY", spawned.to_str().expect("utf8"))],
    );
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["outcomes"][0]["reviewer"], "builtin", "{out}");
    assert!(!spawned.exists(), "the configured command did not run");
    assert_eq!(
        env.pair_json(&["status"])["settings"]["reviewer"]["value"],
        "builtin"
    );

    // With no reviewer named by the run or pair.reviewer, the configured command reviews.
    let env = TestEnv::new();
    env.git(&["config", "pair.reviewerCommand", &cmd("approve.sh")]);
    env.start("t");
    env.write("src/lib.rs", "pub fn f() -> u32 {\n    1\n}\n");
    env.pair_json(&["coder-done", "--summary", "f"]);
    let out = env.pair(&["review", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(
        out.json()["outcomes"][0]["reviewer"],
        "command:approve.sh",
        "{out}"
    );
}

/// An approval can be revoked: a later round's CHANGES_REQUESTED, or `review --again` saying so
/// on the same snapshot, closes the gate for the approved tree and `verify` fails it.
#[test]
fn a_later_changes_requested_revokes_an_approval() {
    for again in [false, true] {
        let (env, _) = env_ready_for_review();
        assert_eq!(
            review(&env, "approve.sh", &[]).json()["verdict"],
            "APPROVED"
        );
        env.git(&["add", "-A"]);
        let open = env.pair(&["gate", "--json"]);
        assert_eq!(open.code, 0, "the approved tree passes: {open}");
        if again {
            let out = review(&env, "request-changes.sh", &["--again"]);
            assert_eq!(out.json()["verdict"], "CHANGES_REQUESTED", "{out}");
        } else {
            env.write("src/lib.rs", "pub fn fetch() -> u32 {\n    43\n}\n");
            env.pair_json(&["coder-done", "--summary", "more"]);
            let out = review(&env, "request-changes.sh", &[]);
            assert_eq!(out.json()["verdict"], "CHANGES_REQUESTED", "{out}");
            // Back to the tree round 1 approved.
            env.write("src/lib.rs", "pub fn fetch() -> u32 {\n    42\n}\n");
        }
        env.git(&["add", "-A"]);
        let closed = env.pair(&["gate", "--json"]);
        assert_eq!(
            closed.code, 1,
            "again={again}: the revoked approval opens nothing: {closed}"
        );
        env.git(&["commit", "-qm", "the once-approved tree", "--no-verify"]);
        let verify = env.pair(&["verify", "HEAD", "--json"]);
        assert_eq!(verify.code, 1, "again={again}: {verify}");
    }
}

#[test]
fn log_tells_the_runs_story_round_by_round() {
    let env = TestEnv::new();
    let run_id = env.start("Teach the fetcher to retry");
    env.write("src/lib.rs", "pub fn fetch() -> u32 {\n    42\n}\n");
    env.pair_json(&["coder-done", "--summary", "Added fetch\nwith a second line"]);
    let out = review(&env, "request-changes.sh", &[]);
    assert_eq!(out.json()["verdict"], "CHANGES_REQUESTED", "{out}");
    let opened = out.json()["findings"].as_array().expect("findings").len();
    env.write("src/lib.rs", "pub fn fetch() -> u32 {\n    43\n}\n");
    env.pair_json(&[
        "coder-done",
        "--summary",
        "Fixed it",
        "--findings-addressed",
        "1",
    ]);
    assert_eq!(
        review(&env, "approve.sh", &[]).json()["verdict"],
        "APPROVED"
    );

    let log = env.pair_json(&["log"]);
    assert_eq!(log["run_id"], run_id.as_str());
    assert_eq!(
        log["outcome"],
        serde_json::Value::Null,
        "not finished: {log}"
    );
    let rounds = log["rounds"].as_array().expect("rounds");
    assert_eq!(rounds.len(), 2, "{log}");
    assert_eq!(
        rounds[0]["coder"][0]["summary"], "Added fetch",
        "first line only"
    );
    assert_eq!(rounds[0]["reviews"][0]["verdict"], "CHANGES_REQUESTED");
    assert_eq!(rounds[0]["reviews"][0]["findings"], opened);
    assert_eq!(rounds[1]["coder"][0]["findings_addressed"], 1);
    assert_eq!(rounds[1]["reviews"][0]["verdict"], "APPROVED");
    assert_eq!(log["next_action"], "finish");

    let human = env.pair(&["log", &run_id]);
    assert_eq!(human.code, 0, "{human}");
    let lines: Vec<&str> = human.stdout.lines().collect();
    assert!(
        lines[0].contains(&run_id) && lines[0].contains("open"),
        "{human}"
    );
    assert!(
        lines[1].starts_with("round 1") && lines[1].contains("\"Added fetch\""),
        "{human}"
    );
    assert!(
        lines.iter().any(|l| l.contains("CHANGES_REQUESTED")),
        "{human}"
    );
    assert!(lines.iter().any(|l| l.contains("addressed 1")), "{human}");
    assert_eq!(lines.last(), Some(&"next: finish"), "{human}");

    env.pair_json(&["finish"]);
    assert_eq!(
        env.pair_json(&["log"])["outcome"],
        "APPROVED",
        "a finished run still has a log"
    );
    let unknown = env.pair(&["log", "20200101-000000-abcdef"]);
    assert_eq!(unknown.code, 1, "{unknown}");
    assert!(unknown.stderr.starts_with("error: "), "{unknown}");
}
