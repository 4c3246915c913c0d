//! The loop tells the truth (SPEC §2–§5): what the run's state and its advice say matches what
//! happened — a finished run shows `done`, an empty change is never reviewed, one review runs
//! at a time, a killed review leaves no reviewer behind, and every command agrees on the next
//! step.

use std::process::Stdio;
use std::time::Duration;

use crate::common::{TestEnv, alive, assert_one_error_line, eventually, fixtures, read_pid};

fn cmd(script: &str) -> String {
    format!(
        "[\"{}\"]",
        fixtures().join("reviewers").join(script).display()
    )
}

fn review(env: &TestEnv, script: &str) -> crate::common::Output {
    let command = cmd(script);
    env.pair(&["review", "--reviewer-cmd", command.as_str(), "--json"])
}

#[test]
fn status_after_finish_shows_the_finished_run_as_done() {
    let env = TestEnv::new();
    let run_id = env.start("ship it");
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "a"]);
    assert_eq!(review(&env, "approve.sh").code, 0);
    env.pair_json(&["finish"]);
    let out = env.pair(&["status", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["run_id"], run_id.as_str());
    assert_eq!(v["next_action"], "done");
    let human = env.pair(&["status"]);
    assert!(human.stdout.contains("next: done"), "{human}");
}

#[test]
fn an_empty_change_is_never_reviewed() {
    let env = TestEnv::new();
    let run_id = env.start("nothing yet");
    let out = env.pair(&["coder-done", "--summary", "claimed work", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stderr.contains("the work tree equals the run's base"),
        "{out}"
    );
    let before = env.pair_refs();
    let out = review(&env, "approve.sh");
    assert_one_error_line(&out, 1, "the work tree equals the base");
    assert_eq!(
        out.json()["error"]
            .as_str()
            .map(|e| e.contains("equals the base")),
        Some(true)
    );
    assert_eq!(env.pair_refs(), before, "a refused review stores nothing");
    assert_eq!(env.manifest(&run_id)["next_action"], "review");

    // After a reviewed round, a coder-done with no new change is flagged too.
    env.write("a.txt", "a\n");
    assert_eq!(review(&env, "request-changes.sh").code, 0);
    let out = env.pair(&["coder-done", "--summary", "no change really"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("nothing changed since the snapshot reviewed in round 1"),
        "{out}"
    );
}

#[test]
fn a_second_review_waits_while_the_first_reviewer_is_alive() {
    let env = TestEnv::new();
    env.start("one review at a time");
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "a"]);
    let pid_file = env.home.join("reviewer.pid");
    let hang = cmd("hang.sh");
    let mut first = env.pair_cmd(&["review", "--reviewer-cmd", &hang, "--timeout", "120"]);
    first
        .env("STUB_PID_FILE", &pid_file)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut first = first.spawn().expect("spawn the first review");
    assert!(
        eventually(Duration::from_secs(20), || pid_file.exists()),
        "the first reviewer never started"
    );
    let reviewer = read_pid(&pid_file).expect("reviewer pid");

    let before = env.pair_refs();
    let out = review(&env, "approve.sh");
    assert_one_error_line(&out, 1, "is running right now");
    assert!(out.stderr.contains(&format!("pid {}", first.id())), "{out}");
    assert_eq!(env.pair_refs(), before, "the refused review stored nothing");
    assert_eq!(env.pair_json(&["status"])["next_action"], "wait:review");

    // SIGKILL of `git pair review`: its reviewer dies with it, and the review can resume.
    first.kill().expect("kill the first review");
    first.wait().expect("reap");
    assert!(
        eventually(Duration::from_secs(10), || !alive(reviewer)),
        "the reviewer outlived its git pair"
    );
    assert_eq!(env.pair_json(&["status"])["next_action"], "resume:review");
    let out = review(&env, "approve.sh");
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["verdict"], "APPROVED");
}

#[test]
fn a_resumed_review_first_kills_what_the_killed_one_left_running() {
    let env = TestEnv::new();
    env.start("no orphan reviewers");
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "a"]);
    let pid_file = env.home.join("grandchild.pid");
    let forking = cmd("fork-and-hang.sh");
    let mut first = env.pair_cmd(&["review", "--reviewer-cmd", &forking, "--timeout", "120"]);
    first
        .env("STUB_PID_FILE", &pid_file)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut first = first.spawn().expect("spawn the review");
    assert!(eventually(Duration::from_secs(20), || pid_file.exists()));
    let grandchild = read_pid(&pid_file).expect("grandchild pid");
    first.kill().expect("kill git pair review");
    first.wait().expect("reap");
    // The reviewer's own child ignores SIGTERM and is not the direct child of git pair: it
    // survives, in the reviewer's process group.
    assert!(
        alive(grandchild),
        "the stub's grandchild should still be running"
    );

    let out = review(&env, "approve.sh");
    assert_eq!(out.code, 0, "{out}");
    assert!(
        eventually(Duration::from_secs(10), || !alive(grandchild)),
        "resume did not kill the orphaned reviewer group"
    );
    assert_eq!(out.json()["verdict"], "APPROVED");
}

#[test]
fn every_command_gives_the_same_next_step_at_the_round_cap() {
    let env = TestEnv::new();
    env.pair_json(&["start", "--task", "capped", "--max-rounds", "2"]);
    env.write("a.txt", "1\n");
    env.pair_json(&["coder-done", "--summary", "one"]);
    assert_eq!(review(&env, "request-changes.sh").code, 0);
    env.write("a.txt", "2\n");
    env.pair_json(&["coder-done", "--summary", "two"]);
    // The same findings again: stalled and capped at once; the cap wins (SPEC §5).
    let out = review(&env, "request-changes.sh");
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["next_action"], "stop:round-cap");
    assert_eq!(env.pair_json(&["status"])["next_action"], "stop:round-cap");
    let human = env.pair(&[
        "review",
        "--reviewer-cmd",
        &cmd("request-changes.sh"),
        "--again",
    ]);
    assert!(human.stdout.contains("next: stop:round-cap"), "{human}");
    assert!(!human.stdout.contains("fix the findings, then"), "{human}");
    let out = env.pair(&["coder-done", "--summary", "three"]);
    assert_one_error_line(&out, 1, "allows 2 rounds, and round 2 has been reviewed");
}

#[test]
fn an_unreadable_answer_asks_for_another_review_not_for_fixes() {
    let env = TestEnv::new();
    env.start("garbage in");
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "a"]);
    let out = env.pair(&["review", "--reviewer-cmd", &cmd("garbage.sh")]);
    assert_eq!(out.code, 0, "{out}");
    assert!(out.stdout.contains("[process]"), "{out}");
    assert!(!out.stdout.contains("fix the findings"), "{out}");
    assert!(out.stdout.contains("next: review"), "{out}");
    assert_eq!(env.pair_json(&["status"])["next_action"], "review");
    // Reviewing again needs no --again.
    let out = review(&env, "approve.sh");
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["verdict"], "APPROVED");
    assert_eq!(out.json()["next_action"], "finish");
}

#[test]
fn a_handoff_file_git_pair_does_not_own_is_never_overwritten() {
    // Tracked by the repository: the view goes under .git/pair instead.
    let env = TestEnv::new();
    env.write("HANDOFF.md", "# Our team's handoff notes\n");
    env.git(&["add", "HANDOFF.md"]);
    env.git(&["commit", "-q", "-m", "notes"]);
    let out = env.pair(&["start", "--task", "t", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let path = out.json()["handoff_path"]
        .as_str()
        .expect("path")
        .to_owned();
    assert!(path.ends_with(".git/pair/HANDOFF.md"), "{path}");
    assert_eq!(env.read("HANDOFF.md"), "# Our team's handoff notes\n");
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    assert!(
        std::fs::read_to_string(&path)
            .expect("view")
            .starts_with("# Pair-Loop Handoff — ")
    );

    // Untracked and not ours (ignored by the user): left alone too, and not hidden by us.
    let env = TestEnv::new();
    env.write(".gitignore", "HANDOFF.md\n");
    env.git(&["add", ".gitignore"]);
    env.git(&["commit", "-q", "-m", "ignore"]);
    env.write("HANDOFF.md", "mine\n");
    let out = env.pair(&["start", "--task", "t", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(env.read("HANDOFF.md"), "mine\n");
    let exclude = std::fs::read_to_string(env.repo.join(".git/info/exclude")).unwrap_or_default();
    assert!(!exclude.contains("HANDOFF.md"), "{exclude}");

    // Ours: written in the work tree, mode 0644, excluded.
    let env = TestEnv::new();
    env.start("t");
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(env.repo.join("HANDOFF.md"))
        .expect("view")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644);
    assert_eq!(env.git(&["status", "--porcelain"]), "");
}

#[test]
fn settings_not_given_at_start_follow_git_config_and_status_says_where_from() {
    let env = TestEnv::new();
    env.start("follow config");
    env.write("a.txt", "1\n");
    env.pair_json(&["coder-done", "--summary", "one"]);
    assert_eq!(review(&env, "request-changes.sh").code, 0);
    assert_eq!(env.pair_json(&["status"])["next_action"], "code");
    // Lowering the cap in git config takes effect on the next command.
    env.git(&["config", "pair.maxRounds", "1"]);
    let status = env.pair_json(&["status"]);
    assert_eq!(status["next_action"], "stop:round-cap");
    assert_eq!(status["max_rounds"], 1);
    assert_eq!(status["settings"]["max-rounds"]["from"], "pair.maxRounds");
    assert_eq!(status["settings"]["reviewer"]["from"], "default");
    // `set` makes it the run's own; `--unset` hands it back.
    let set = env.pair_json(&["set", "max-rounds", "3"]);
    assert_eq!(set["from"], "run");
    let status = env.pair_json(&["status"]);
    assert_eq!(status["next_action"], "code");
    assert_eq!(
        status["settings"]["max-rounds"],
        serde_json::json!({"value": 3, "from": "run"})
    );
    env.pair_json(&["set", "--unset", "max-rounds"]);
    assert_eq!(env.pair_json(&["status"])["next_action"], "stop:round-cap");
    // A budget set in config mid-run is what budget-check measures against.
    env.git(&["config", "pair.budgetUsd", "7.5"]);
    assert_eq!(env.pair_json(&["budget-check"])["limit"], 7.5);
}

#[test]
fn a_reviewer_set_in_config_after_a_failed_review_is_used() {
    let env = TestEnv::new();
    env.start("reviewer from config");
    env.write("src/lib.rs", "pub fn f() {}\n");
    env.pair_json(&["coder-done", "--summary", "f"]);
    // The default reviewer (codex, falling back to claude) is not installed here.
    let out = env.pair(&["review"]);
    assert_eq!(out.code, 1, "{out}");
    env.git(&["config", "pair.reviewer", "builtin"]);
    let out = env.pair(&["review", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["outcomes"][0]["reviewer"], "builtin");
    // A flag to start is the run's own and wins over config.
    let env = TestEnv::new();
    env.pair_json(&["start", "--task", "t", "--reviewer", "builtin"]);
    env.git(&["config", "pair.reviewer", "claude"]);
    let status = env.pair_json(&["status"]);
    assert_eq!(
        status["settings"]["reviewer"],
        serde_json::json!({"value": "builtin", "from": "run"})
    );
}

#[test]
fn unknown_reviewers_and_a_second_start_are_refused_and_abandon_closes() {
    let env = TestEnv::new();
    let before = env.pair_refs();
    let out = env.pair(&["start", "--task", "t", "--reviewer", "bogus"]);
    assert_one_error_line(&out, 1, "unknown reviewer `bogus`");
    assert_eq!(env.pair_refs(), before);
    let first = env.start("first");
    let out = env.pair(&["set", "reviewer", "bogus"]);
    assert_one_error_line(&out, 1, "unknown reviewer `bogus`");
    let out = env.pair(&["set", "max-rounds", "zero"]);
    assert_one_error_line(&out, 129, "not a valid max-rounds");
    let out = env.pair(&["start", "--task", "second"]);
    assert_one_error_line(&out, 1, &format!("already has an unfinished run, {first}"));
    let replaced = env.pair_json(&["start", "--task", "second", "--replace"]);
    assert_eq!(replaced["replaced"], first.as_str());
    assert_eq!(env.manifest(&first)["outcome"]["abandoned"], true);
    assert_eq!(env.manifest(&first)["next_action"], "done");
    let abandoned = env.pair_json(&["abandon", "--reason", "not needed"]);
    assert_eq!(abandoned["outcome"], "abandoned");
    assert_eq!(env.pair_json(&["status"])["next_action"], "done");
}

#[test]
fn messages_say_what_failed_and_the_way_on() {
    let env = TestEnv::new();
    // No arguments: usage, exit 129 as git does.
    assert_eq!(env.pair(&[]).code, 129);
    // A negative budget is a number refused by meaning, not an unknown argument.
    let out = env.pair(&["start", "--task", "t", "--budget-usd", "-1"]);
    assert_one_error_line(&out, 129, "--budget-usd must be a non-negative number");
    // --run does not apply to start.
    let out = env.pair(&["--run", "20261129-231500-a1b2c3", "start", "--task", "t"]);
    assert_one_error_line(&out, 129, "--run does not apply to start");
    // A revision git does not know, said as git says it.
    let out = env.pair(&["start", "--task", "t", "--base", "nonexistent"]);
    assert_one_error_line(&out, 1, "cannot resolve revision 'nonexistent'");
    assert!(!out.stderr.contains("input="), "{out}");
    // A bad --reviewer-cmd is not a config value.
    env.start("t");
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "a"]);
    let out = env.pair(&["review", "--reviewer-cmd", "not json"]);
    assert_one_error_line(&out, 129, "reviewer command");
    assert!(!out.stderr.contains("bad config value"), "{out}");
    // A reviewer command whose program is missing: the hint is about that program.
    let out = env.pair(&["review", "--reviewer-cmd", "[\"/nonexistent/reviewer\"]"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stderr.contains("first element of --reviewer-cmd"),
        "{out}"
    );
    // A reviewer that exits non-zero: its stderr is in the error.
    let out = env.pair(&["review", "--reviewer-cmd", &cmd("fail.sh")]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("out of cheese"), "{out}");
    // show and diff honour --run.
    let run = env.pair_json(&["status"])["run_id"]
        .as_str()
        .expect("id")
        .to_owned();
    assert_eq!(
        env.pair_json(&["--run", &run, "show"])["run_id"],
        run.as_str()
    );
    // A bare repository gets a hint.
    let bare = env.home.join("bare.git");
    env.git(&["init", "-q", "--bare", bare.to_str().expect("utf8")]);
    let out = env.pair(&["-C", bare.to_str().expect("utf8"), "start", "--task", "t"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("bare repository"), "{out}");
    assert!(out.stderr.contains("hint:"), "{out}");
}

#[test]
fn the_pr_body_says_addressed_only_when_someone_did() {
    let env = TestEnv::new();
    env.start("ledger");
    env.write("a.txt", "1\n");
    env.pair_json(&["coder-done", "--summary", "one"]);
    assert_eq!(review(&env, "request-changes.sh").code, 0);
    // Answers are checked against the open findings (two of them).
    let before = env.pair_refs();
    let out = env.pair(&["coder-done", "--summary", "x", "--findings-addressed", "3"]);
    assert_one_error_line(
        &out,
        1,
        "--findings-addressed 3 is more than the 2 open finding(s)",
    );
    env.write_outside(
        "responses.json",
        r#"[{"finding": 7, "status": "addressed"}]"#,
    );
    let responses = env.home.join("responses.json");
    let out = env.pair(&[
        "coder-done",
        "--summary",
        "x",
        "--responses",
        responses.to_str().expect("utf8"),
    ]);
    assert_one_error_line(&out, 1, "--responses names finding 7");
    assert_eq!(env.pair_refs(), before, "refusals store nothing");

    // A bare count is not a claim about which: the same findings raised again stay open.
    env.write("a.txt", "2\n");
    env.pair_json(&[
        "coder-done",
        "--summary",
        "two",
        "--findings-addressed",
        "1",
    ]);
    assert_eq!(review(&env, "request-changes.sh").code, 0);
    // The last review approves with a low-severity note: that note stays open.
    env.write("a.txt", "3\n");
    env.write_outside("answers.json", r#"[{"finding": 1, "status": "addressed"}]"#);
    let answers = env.home.join("answers.json");
    env.pair_json(&[
        "coder-done",
        "--summary",
        "three",
        "--responses",
        answers.to_str().expect("utf8"),
    ]);
    let nit = r#"["sh", "-c", "cat >/dev/null; echo '1. [style] [severity: low] a.txt:1 — a nit'; echo 'VERDICT: APPROVED'"]"#;
    let out = env.pair(&["review", "--reviewer-cmd", nit, "--json"]);
    assert_eq!(out.json()["verdict"], "APPROVED", "{out}");
    let body = env.pair(&["pr-body"]).stdout;
    let rows: Vec<&str> = body.lines().filter(|l| l.starts_with("| ")).collect();
    let row = |round: &str, n: &str| -> String {
        rows.iter()
            .find(|l| l.starts_with(&format!("| {round} | {n} |")))
            .map(|l| (*l).to_owned())
            .unwrap_or_else(|| panic!("no ledger row {round}/{n}:\n{body}"))
    };
    assert!(row("1", "1").ends_with("| **open** |"), "{body}");
    assert!(row("1", "2").ends_with("| **open** |"), "{body}");
    assert!(row("2", "1").ends_with("| addressed |"), "{body}");
    assert!(row("2", "2").contains("not raised in round 3"), "{body}");
    assert!(row("3", "1").ends_with("| **open** |"), "{body}");
}

#[test]
fn runs_started_in_the_same_second_are_ordered_by_creation() {
    for attempt in 0..6 {
        let env = TestEnv::new();
        let mut ids = Vec::new();
        for (i, now) in ["1795994100.101", "1795994100.102", "1795994100.950"]
            .iter()
            .enumerate()
        {
            env.git(&["checkout", "-q", "-b", &format!("b{i}")]);
            let out = env.pair_env(
                &["start", "--task", "t", "--json"],
                &[("GIT_PAIR_NOW", now)],
            );
            assert_eq!(out.code, 0, "{out}");
            ids.push(out.json()["run_id"].as_str().expect("id").to_owned());
        }
        let listed: Vec<String> = env.pair_json(&["list"])["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .map(|r| r["run_id"].as_str().expect("id").to_owned())
            .collect();
        let newest_first: Vec<String> = ids.iter().rev().cloned().collect();
        assert_eq!(listed, newest_first, "attempt {attempt}");
    }
}

#[test]
fn the_builtin_reviewer_judges_file_sizes_from_the_snapshot() {
    let env = TestEnv::new();
    env.pair_json(&["start", "--task", "big file", "--reviewer", "builtin"]);
    // 2 MB of text: the packet (256 KiB by default) shows at most part of it.
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
    env.write("data/big.txt", &line.repeat(2 * 1024 * 1024 / line.len()));
    env.write("src/lib.rs", "pub fn f() {}\n");
    env.write("tests/f.rs", "#[test]\nfn f() {}\n");
    env.pair_json(&["coder-done", "--summary", "big"]);
    let out = env.pair(&["review", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v}");
    assert!(
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["category"] == "large-file" && f["location"] == "data/big.txt"),
        "{v}"
    );
}

#[test]
fn finish_confirms_the_note_and_coverage_names_paths_in_utf8() {
    let env = TestEnv::new();
    let run_id = env.start("notes and names");
    env.write("données/été.txt", "chaud\n");
    env.pair_json(&["coder-done", "--summary", "été"]);
    assert_eq!(review(&env, "approve.sh").code, 0);
    let coverage = env.git(&[
        "show",
        &format!("refs/pair/runs/{run_id}:reviews/1/coverage.json"),
    ]);
    assert!(coverage.contains("données/été.txt"), "{coverage}");
    assert!(!coverage.contains("\\\\303"), "{coverage}");
    let out = env.pair(&["finish"]);
    assert!(
        out.stderr
            .contains("HEAD does not hold the reviewed work yet"),
        "{out}"
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "été"]);
    let out = env.pair(&["finish"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stderr.contains("review note attached to commit"),
        "{out}"
    );
    let out = env.pair(&["finish"]);
    assert!(
        out.stderr
            .contains("already carries this run's review note"),
        "{out}"
    );
    let note = env.git(&["notes", "--ref=pair", "show", "HEAD"]);
    assert_eq!(note.lines().count(), 1, "{note}");
}

#[test]
fn probe_shows_every_realization_and_dry_run_works_without_a_reviewer() {
    let env = TestEnv::new();
    let out = env.pair(&["probe", "--json"]);
    // Neither vendor CLI is on this PATH: the configured codex (and its claude fallback)
    // does not bind, yet every realization is reported.
    assert_eq!(out.code, 1, "{out}");
    let v = out.json();
    let names: Vec<&str> = v["realizations"]
        .as_array()
        .expect("realizations")
        .iter()
        .map(|r| r["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "acp", "builtin", "claude", "codex", "command", "copilot", "gemini", "opencode", "qwen"
        ]
    );
    assert_eq!(v["realizations"][0]["binds"], false, "no pair.acpCommand");
    assert_eq!(v["realizations"][1]["binds"], true);
    assert_eq!(v["realizations"][3]["binds"], false);
    let human = env.pair(&["probe"]);
    assert!(human.stdout.contains("realizations here:"), "{human}");

    env.start("dry run");
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "a"]);
    let out = env.pair(&["review", "--dry-run", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert!(
        v["prompt"].as_str().expect("prompt").contains("a.txt"),
        "{v}"
    );
    assert_eq!(v["unbound"][0]["configured"], "codex");
    assert!(
        out.stderr
            .contains("no reviewer realization binds for codex"),
        "{out}"
    );
}

#[test]
fn list_reads_moved_runs_again_and_survives_a_broken_cache() {
    let env = TestEnv::new();
    let run = env.start("cached");
    assert_eq!(env.pair_json(&["list"])["runs"][0]["round"], 0);
    env.pair_json(&["coder-done", "--summary", "one"]);
    let runs = env.pair_json(&["list"]);
    assert_eq!(runs["runs"][0]["run_id"], run.as_str());
    assert_eq!(
        runs["runs"][0]["round"], 1,
        "a run that moved is read again"
    );
    assert_eq!(runs["runs"][0]["next_action"], "review");
    std::fs::write(
        env.repo.join(".git/pair/cache/runs-v3.jsonl"),
        "garbage\n{\"x\n",
    )
    .expect("write");
    assert_eq!(env.pair_json(&["list"])["runs"][0]["round"], 1);
}

#[test]
fn many_loose_run_refs_are_packed_without_losing_a_run() {
    use git_pair::model::{Body, RunId, Start};
    use git_pair::store::{Append, Repo};
    let env = TestEnv::new();
    let repo = Repo::open_isolated(&env.repo).expect("open");
    let base = repo.resolve_commit("HEAD").expect("HEAD");
    let mut ids = Vec::new();
    for i in 0..260 {
        let run_id = RunId::generate(1_795_994_100 + i);
        let start = Body::Start(Start {
            run_id: run_id.to_string(),
            task: format!("t{i}"),
            cwd: env.repo.display().to_string(),
            branch: "elsewhere".into(),
            base: Some(base.into()),
            coder: "claude".into(),
            reviewer: "codex".into(),
            max_rounds: 5,
            budget_usd: None,
            config: Default::default(),
            flags: None,
            claimed: true,
            carrier: false,
            base_tree: None,
        });
        repo.create_run(&run_id, Some(base), Append::record(start, "start"))
            .expect("create");
        ids.push(run_id);
    }
    let tips_before = env.git(&["for-each-ref", "refs/pair/runs"]);
    let owned_before = env.git(&["for-each-ref", "refs/pair-local/owned"]);
    assert_eq!(owned_before.lines().count(), 260);
    // The next start packs them, and this clone's ownership refs with them.
    let run = env.start("the 261st");
    let loose = std::fs::read_dir(env.repo.join(".git/refs/pair/runs"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert!(loose <= 1, "{loose} loose run refs left");
    let tips_after = env.git(&["for-each-ref", "refs/pair/runs"]);
    for line in tips_before.lines() {
        assert!(tips_after.contains(line), "lost {line}");
    }
    assert!(tips_after.contains(&run));
    assert_eq!(tips_after.lines().count(), 261);
    let loose_owned = std::fs::read_dir(env.repo.join(".git/refs/pair-local/owned"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert!(loose_owned <= 1, "{loose_owned} loose ownership refs left");
    let owned_after = env.git(&["for-each-ref", "refs/pair-local/owned"]);
    for line in owned_before.lines() {
        assert!(owned_after.contains(line), "lost {line}");
    }
    assert_eq!(owned_after.lines().count(), 261);
    assert_eq!(env.pair_json(&["status"])["run_id"], run.as_str());
    env.assert_fsck_clean();
}
