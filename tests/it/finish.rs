//! `finish`, `pr-body`, `demo` and the agent skill (SPEC §5, §11).

use serde_json::Value;

use crate::common::{TestEnv, assert_one_error_line, fixtures};

fn cmd(script: &str) -> String {
    format!(
        "[\"{}\"]",
        fixtures().join("reviewers").join(script).display()
    )
}

fn reviewed(env: &TestEnv, script: &str) {
    let command = cmd(script);
    let out = env.pair(&["review", "--reviewer-cmd", &command]);
    assert_eq!(out.code, 0, "{out}");
}

fn approved_run() -> (TestEnv, String) {
    let env = TestEnv::new();
    let run_id = env.start("Teach the fetcher to retry");
    env.write("src/lib.rs", "pub fn fetch() {}\n");
    env.pair_json(&["coder-done", "--summary", "first try"]);
    reviewed(&env, "request-changes.sh");
    env.write("src/lib.rs", "pub fn fetch() -> u8 { 1 }\n");
    env.pair_json(&["coder-done", "--summary", "second try"]);
    reviewed(&env, "approve.sh");
    (env, run_id)
}

#[test]
fn finish_renders_the_pr_body_outside_the_work_tree() {
    let (env, run_id) = approved_run();
    let v = env.pair_json(&["finish"]);
    assert_eq!(v["verdict"], "APPROVED");
    assert_eq!(v["pr"], Value::Null);
    let path = std::path::PathBuf::from(v["pr_body_path"].as_str().expect("path"));
    assert!(path.starts_with(env.repo.join(".git/pair")), "{path:?}");
    let body = std::fs::read_to_string(&path).expect("body");
    assert!(body.starts_with("<!-- git-pair:begin -->\n"));
    assert!(body.trim_end().ends_with("<!-- git-pair:end -->"));
    assert!(
        body.contains("**Outcome:** APPROVED after 2 rounds"),
        "{body}"
    );
    assert!(
        body.contains("| 1 | reviewer | command:request-changes.sh | CHANGES_REQUESTED | 2 | — |"),
        "{body}"
    );
    assert!(
        body.contains("off by one in the range end | addressed (not raised in round 2) |"),
        "{body}"
    );
    assert!(
        body.contains("<details>") && body.contains("## Round 2 — REVIEWER (command:approve.sh)")
    );
    assert_eq!(env.pair(&["pr-body"]).stdout.trim_end(), body.trim_end());
    assert_eq!(
        env.pair_json(&["--run", &run_id, "status"])["next_action"],
        "done"
    );
    // Nothing of this shows in the work tree; HANDOFF.md is never committed.
    assert_eq!(
        env.git(&["status", "--porcelain", "--ignored=no"]),
        "?? src/\n"
    );
    assert!(!env.git(&["ls-files"]).contains("HANDOFF.md"));
    env.assert_fsck_clean();
}

#[test]
fn finish_approved_needs_an_approving_review_or_a_recorded_override() {
    let env = TestEnv::new();
    let run_id = env.start("t");
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "a"]);
    reviewed(&env, "request-changes.sh");
    let before = env.pair_refs();
    let out = env.pair(&["finish"]);
    assert_one_error_line(&out, 1, "no approving last review");
    assert!(out.stderr.contains("--force"), "{out}");
    assert_eq!(env.pair_refs(), before);
    let v = env.pair_json(&["finish", "--force"]);
    assert_eq!(v["verdict"], "APPROVED");
    assert_eq!(v["override"], true);
    let body = std::fs::read_to_string(v["pr_body_path"].as_str().expect("path")).expect("body");
    assert!(
        body.contains("**Override:** finished with `--force`"),
        "{body}"
    );
    assert!(
        body.contains("| **open** |"),
        "the unaddressed findings stay open:\n{body}"
    );
    assert_eq!(env.manifest(&run_id)["outcome"]["override"], true);
}

#[test]
fn pr_numbers_are_recorded_once_and_never_a_second_pr() {
    let (env, run_id) = approved_run();
    assert_eq!(env.pair_json(&["finish", "--pr", "41"])["pr"], 41);
    let before = env.pair_refs();
    assert_eq!(env.pair_json(&["finish", "--pr", "41"])["pr"], 41);
    assert_eq!(
        env.pair_refs(),
        before,
        "recording the same number again changes nothing"
    );
    let out = env.pair(&["finish", "--pr", "42"]);
    assert_one_error_line(&out, 1, "already has PR #41");
    assert_eq!(env.manifest(&run_id)["pr"], 41);
    let out = env.pair(&["finish", "--open-pr", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(out.stderr.contains("already has PR #41"), "{out}");
}

#[test]
fn open_pr_without_gh_is_a_clear_error() {
    let (env, _) = approved_run();
    let out = env.pair(&["finish", "--open-pr"]);
    assert_one_error_line(&out, 1, "needs the GitHub CLI (gh)");
}

#[test]
fn pr_body_update_replaces_only_the_generated_part() {
    let (env, _) = approved_run();
    env.pair_json(&["finish"]);
    env.write_outside(
        "description.md",
        "My own intro.\n\n<!-- git-pair:begin -->\nstale\n<!-- git-pair:end -->\nMy own outro.\n",
    );
    let file = env.home.join("description.md");
    let out = env.pair(&["pr-body", "--update", file.to_str().expect("utf8")]);
    assert_eq!(out.code, 0, "{out}");
    let updated = std::fs::read_to_string(&file).expect("read");
    assert!(
        updated
            .starts_with("My own intro.\n\n<!-- git-pair:begin -->\n## Teach the fetcher to retry"),
        "{updated}"
    );
    assert!(
        updated.ends_with("<!-- git-pair:end -->\nMy own outro.\n"),
        "{updated}"
    );
    assert!(!updated.contains("stale"));
}

#[test]
fn a_forty_round_run_with_megabytes_of_output_fits_the_pr_limit_keeping_the_newest_rounds() {
    let env = TestEnv::new();
    env.git(&["config", "pair.maxRounds", "50"]);
    env.start("A long haul");
    let long_finding = "x".repeat(3000);
    for round in 1..=40 {
        env.write("a.txt", &format!("{round}\n"));
        env.pair_json(&[
            "coder-done",
            "--summary",
            &format!("round {round} summary {}", "s".repeat(1500)),
        ]);
        let command = cmd(if round == 40 {
            "approve.sh"
        } else {
            "big-output.sh"
        });
        let out = env.pair_env(
            &["review", "--reviewer-cmd", &command],
            &[("STUB_BYTES", "200000"), ("STUB_NOTE", &long_finding)],
        );
        assert_eq!(out.code, 0, "round {round}: {out}");
    }
    let v = env.pair_json(&["finish"]);
    let body = std::fs::read_to_string(v["pr_body_path"].as_str().expect("path")).expect("body");
    let chars = body.chars().count();
    assert!(chars <= 65_536, "the PR body has {chars} characters");
    assert!(chars > 30_000, "the body uses the room it has: {chars}");
    assert!(
        body.contains("## Round 40 — REVIEWER (command:approve.sh)"),
        "the newest round is whole"
    );
    assert!(body.contains("## Round 39 — CODER (claude)"));
    assert!(
        body.contains("abbreviated: `git pair show"),
        "older rounds point at git pair show"
    );
    assert!(
        !body.contains("## Round 1 — CODER (claude) ·"),
        "the oldest round is abbreviated"
    );
    assert!(body.trim_end().ends_with("<!-- git-pair:end -->"));
}

#[test]
fn the_demo_runs_on_a_machine_with_no_git_identity() {
    // A fresh machine (a CI container, a new laptop) has no user.name: the demo uses its own.
    let env = TestEnv::empty();
    let mut cmd = env.pair_cmd(&["demo", "--json"]);
    for var in [
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    ] {
        cmd.env_remove(var);
    }
    let out = crate::common::run(cmd);
    assert_eq!(out.code, 0, "{out}");
    assert!(!out.stderr.contains("panicked"), "{out}");
    assert_eq!(
        out.json()["verdicts"],
        serde_json::json!(["CHANGES_REQUESTED", "APPROVED"])
    );
}

#[test]
fn the_demo_runs_a_whole_loop_offline() {
    let env = TestEnv::empty();
    let out = env.pair(&["demo", "--json", "--keep"]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(
        v["verdicts"],
        serde_json::json!(["CHANGES_REQUESTED", "APPROVED"])
    );
    let repo = std::path::PathBuf::from(v["repo"].as_str().expect("repo"));
    let run_id = v["run_id"].as_str().expect("run");
    let log = std::process::Command::new("git")
        .args(["log", "--format=%s", &format!("refs/pair/runs/{run_id}")])
        .current_dir(&repo)
        .output()
        .expect("git log");
    let log = String::from_utf8_lossy(&log.stdout).into_owned();
    assert!(log.starts_with("finish: APPROVED\n"), "{log}");
    // The approved work is committed, carries the review note, and verifies.
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .output()
            .expect("git");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(git(&["log", "--format=%s", "-1"]), "Add greet()\n");
    assert!(
        git(&["notes", "--ref=pair", "show", "HEAD"])
            .starts_with(&format!("pair-run={run_id} verdict=APPROVED rounds=2")),
        "the review note is on the commit"
    );
    assert_eq!(
        git(&["status", "--porcelain"]),
        "",
        "the work tree is clean"
    );
    let fsck = std::process::Command::new("git")
        .args(["fsck"])
        .current_dir(&repo)
        .output()
        .expect("fsck");
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    let _ = std::fs::remove_dir_all(repo);
    // Without --keep the throwaway repository is gone afterwards.
    let out = env.pair(&["demo", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let gone = std::path::PathBuf::from(out.json()["repo"].as_str().expect("repo"));
    assert!(!gone.exists(), "{gone:?} was left behind");
    let human = env.pair(&["demo"]);
    assert!(human.stdout.contains("===== PR body"), "{human}");
    assert!(human.stdout.contains("--findings-addressed 2"), "{human}");
    assert!(
        human.stdout.contains("review note attached to commit"),
        "{human}"
    );
    assert!(
        human
            .stdout
            .contains("ok: 1 commit in HEAD~1..HEAD reviewed"),
        "{human}"
    );
    assert!(
        !human.stdout.contains("/git-pair-demo-"),
        "no path into the removed repository: {human}"
    );
    assert!(human.stdout.contains("<!-- git-pair:begin -->"));
    assert!(human.stdout.contains("git pair demo --keep"), "{human}");
}

#[test]
fn the_skill_names_only_real_commands_and_handles_every_next_action() {
    let skill = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("skills/pair-loop/SKILL.md"),
    )
    .expect("skill");
    assert!(
        skill.starts_with("---\nname: pair-loop\ndescription: "),
        "front matter"
    );
    for action in git_pair::model::NextAction::ALL.map(|a| a.as_str()) {
        assert!(
            skill.contains(&format!("| `{action}` |")),
            "the skill does not handle next_action {action}"
        );
    }
    let env = TestEnv::new();
    let mut named = Vec::new();
    for (i, _) in skill.match_indices("git pair ") {
        let rest = &skill[i + "git pair ".len()..];
        let word: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '-')
            .collect();
        if !word.is_empty() && !named.contains(&word) {
            named.push(word);
        }
    }
    assert!(named.len() >= 8, "{named:?}");
    for command in &named {
        let out = env.pair(&[command, "--help"]);
        assert_eq!(
            out.code, 0,
            "the skill names `git pair {command}`, which does not exist:\n{out}"
        );
    }
}

#[test]
fn finish_notes_the_commit_that_carries_the_approved_work() {
    let (env, run_id) = approved_run();
    let out = env.pair(&["finish", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(
        out.json()["note_commit"],
        Value::Null,
        "the work is not committed yet"
    );
    assert!(out.stderr.contains("run git pair finish again"), "{out}");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "Teach the fetcher to retry"]);
    let head = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let v = env.pair_json(&["finish"]);
    assert_eq!(v["note_commit"], head.as_str());
    let note = env.git(&["notes", "--ref=pair", "show", "HEAD"]);
    let tree = env.git(&["rev-parse", "HEAD^{tree}"]);
    assert_eq!(
        note,
        format!(
            "pair-run={run_id} verdict=APPROVED rounds=2 reviewer=command:approve.sh tree={}",
            tree
        )
    );
    let log = env.git(&["log", "-1", "--notes=pair", "--format=%N"]);
    assert!(
        log.contains(&format!("pair-run={run_id} verdict=APPROVED")),
        "{log}"
    );
    env.pair_json(&["finish"]);
    assert_eq!(
        env.git(&["notes", "--ref=pair", "show", "HEAD"])
            .lines()
            .count(),
        1,
        "idempotent"
    );
    env.assert_fsck_clean();
}

#[test]
fn a_finished_run_is_read_by_handoff_budget_check_and_show_as_by_status() {
    let (env, run_id) = approved_run();
    env.pair_json(&["finish"]);
    // `handoff` and `budget-check` read the finished run, as `status` does.
    let handoff = env.pair(&["handoff", "--json"]);
    assert_eq!(handoff.code, 0, "{handoff}");
    assert_eq!(handoff.json()["run_id"], run_id.as_str());
    let budget = env.pair(&["budget-check", "--json"]);
    assert_eq!(budget.code, 0, "{budget}");
    assert_eq!(budget.json()["level"], Value::Null);
    // Nothing was measured: `show` says null, as `status` does, not 0.0.
    assert_eq!(env.pair_json(&["status"])["spent_usd"], Value::Null);
    assert_eq!(env.pair_json(&["show", &run_id])["spent_usd"], Value::Null);
}

#[test]
fn a_usage_error_with_json_is_one_json_object_on_stdout() {
    let env = TestEnv::new();
    for args in [
        &["--json", "nosuchcmd"][..],
        &["status", "--bogus", "--json"],
    ] {
        let out = env.pair(args);
        assert_eq!(out.code, 129, "{out}");
        let v = out.json();
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{out}");
        assert_eq!(
            out.stderr
                .lines()
                .filter(|l| l.starts_with("error: "))
                .count(),
            1
        );
    }
    // Without --json, stdout stays empty.
    let out = env.pair(&["nosuchcmd"]);
    assert_eq!((out.code, out.stdout.as_str()), (129, ""), "{out}");
}

#[test]
fn finish_says_what_is_left_by_where_things_stand() {
    // Refused after changes were requested: the way on is to fix the findings.
    let env = TestEnv::new();
    env.start("Teach the fetcher to retry");
    env.write("src/lib.rs", "pub fn fetch() {}\n");
    env.pair_json(&["coder-done", "--summary", "first try"]);
    reviewed(&env, "request-changes.sh");
    let out = env.pair(&["finish"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("hint: fix the findings"), "{out}");

    // Approved, not committed yet: commit, push the branch and the records, open the PR.
    let (env, _run_id) = approved_run();
    let out = env.pair(&["finish"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stdout
            .contains("next: commit exactly the approved work, then git pair finish --push (it attaches the commit's review note and publishes the records) and push the branch (git push)"),
        "{out}"
    );
    // Committed and a PR recorded: only publishing is left.
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "retry"]);
    let out = env.pair(&["finish", "--pr", "12"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stdout
            .contains("and the review records (git pair push); PR #12 is recorded"),
        "{out}"
    );
    assert!(!out.stdout.contains("open the PR"), "{out}");
    // Asking a finished run for another outcome: what still applies, and the way to new work.
    let out = env.pair(&["finish", "--verdict", "CHANGES_REQUESTED"]);
    assert_one_error_line(&out, 1, "is already finished");
    assert!(
        out.stderr.contains("(--pr N)")
            && out.stderr.contains("publishes the records (--push)")
            && out
                .stderr
                .contains("new work needs a new run: git pair start --task"),
        "{out}"
    );
}

#[test]
fn finish_push_publishes_the_records_and_a_refused_push_leaves_the_run_finished() {
    let net = crate::sync::Net::new(1);
    let env = &net.clones[0];
    let remote_refs = || {
        env.git(&[
            "--git-dir",
            net.remote.to_str().expect("utf-8 path"),
            "for-each-ref",
            "--format=%(refname)",
            "refs/pair",
            "refs/notes",
        ])
    };
    let run_id = env.start("Teach the fetcher to retry");
    env.write("src/lib.rs", "pub fn fetch() -> u8 { 1 }\n");
    env.pair_json(&["coder-done", "--summary", "retry"]);
    reviewed(env, "approve.sh");

    // A remote that does not exist: the run is finished all the same, its text is printed,
    // and the way on is git pair push.
    let out = env.pair(&["finish", "--push=nowhere"]);
    assert_one_error_line(
        &out,
        1,
        "is finished, but its review records were not published",
    );
    assert!(
        out.stdout.contains(&format!("Finished run {run_id}")),
        "{out}"
    );
    assert!(
        out.stderr.contains("the run stays finished;")
            && out
                .stderr
                .contains("then publish the records with: git pair push 'nowhere'"),
        "{out}"
    );
    assert_eq!(env.manifest(&run_id)["outcome"]["verdict"], "APPROVED");
    assert_eq!(remote_refs(), "");
    let out = env.pair(&["finish", "--push=nowhere", "--json"]);
    assert_eq!(out.code, 1, "{out}");
    let v = out.json();
    assert_eq!(
        (v["run_id"].as_str(), v["push"].is_null()),
        (Some(run_id.as_str()), true),
        "{v}"
    );
    assert!(
        v["error"]
            .as_str()
            .expect("error")
            .contains("not published"),
        "{v}"
    );

    // Committed, then --push: the records and the commit's note reach the remote.
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "retry"]);
    let out = env.pair(&["finish", "--push"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stdout.contains("Pushed 1 run and notes to origin"),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("next: push the branch (git push), then open the PR"),
        "{out}"
    );
    assert!(!out.stdout.contains("git pair push"), "{out}");
    assert_eq!(
        remote_refs(),
        format!("refs/notes/pair\nrefs/pair/runs/{run_id}\n")
    );
    let head = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let note = env.git(&[
        "--git-dir",
        net.remote.to_str().expect("utf-8 path"),
        "notes",
        "--ref=pair",
        "show",
        &head,
    ]);
    assert!(note.contains(&run_id), "{note}");
    let v = env.pair_json(&["finish", "--push"]);
    assert_eq!(v["push"]["remote"], "origin", "{v}");
    assert_eq!(v["push"]["pushed"], 0, "nothing new the second time: {v}");
}

#[test]
fn finish_push_before_the_commit_says_to_finish_again_after_it() {
    let net = crate::sync::Net::new(1);
    let env = &net.clones[0];
    env.start("Teach the fetcher to retry");
    env.write("src/lib.rs", "pub fn fetch() -> u8 { 1 }\n");
    env.pair_json(&["coder-done", "--summary", "retry"]);
    reviewed(env, "approve.sh");
    let out = env.pair(&["finish", "--push"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(out.stdout.contains("Pushed 1 run to origin"), "{out}");
    assert!(
        out.stdout.contains(
            "next: commit exactly the approved work, then git pair finish --push=origin again (it attaches the commit's review note"
        ),
        "{out}"
    );
}
