//! Bad input (SPEC §13) and every refusal the CLI has, one row each: the message, the exit
//! code, and everything under `refs/pair/` and `refs/notes/pair` byte-identical before and
//! after. Reviewer failures are not refusals (their attempts are recorded for audit, SPEC
//! §6.3): for those rows the run uses no round and its next step is unchanged.

use crate::common::{TestEnv, fixtures};

fn cmd(script: &str) -> String {
    format!(
        "[\"{}\"]",
        fixtures().join("reviewers").join(script).display()
    )
}

/// A repository with a run: one coder round on a change, not yet reviewed.
fn ready_for_review() -> TestEnv {
    let env = TestEnv::new();
    env.start("bad input");
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "a"]);
    env
}

/// A run whose last review asked for changes (two open findings).
fn changes_requested() -> TestEnv {
    let env = ready_for_review();
    env.pair_json(&["review", "--reviewer-cmd", &cmd("request-changes.sh")]);
    env
}

/// An approved, finished run.
fn finished() -> TestEnv {
    let env = ready_for_review();
    env.pair_json(&["review", "--reviewer-cmd", &cmd("approve.sh")]);
    env.pair_json(&["finish", "--pr", "7"]);
    env
}

struct Row {
    name: &'static str,
    setup: fn() -> TestEnv,
    args: Vec<String>,
    exit: i32,
    needle: &'static str,
}

fn row(
    name: &'static str,
    setup: fn() -> TestEnv,
    args: &[&str],
    exit: i32,
    needle: &'static str,
) -> Row {
    Row {
        name,
        setup,
        args: args.iter().map(|s| (*s).to_owned()).collect(),
        exit,
        needle,
    }
}

fn refs(env: &TestEnv) -> String {
    if !env.repo.join(".git").exists() {
        return String::new();
    }
    env.git(&[
        "for-each-ref",
        "--format=%(refname) %(objectname)",
        "refs/pair",
        "refs/notes/pair",
    ])
}

fn check(r: &Row) {
    let env = (r.setup)();
    let before = refs(&env);
    let args: Vec<&str> = r.args.iter().map(String::as_str).collect();
    let out = env.pair(&args);
    assert_eq!(out.code, r.exit, "{}: exit\n{out}", r.name);
    let lines: Vec<&str> = out.stderr.lines().collect();
    let error = lines
        .iter()
        .position(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("{}: no error line\n{out}", r.name));
    assert!(
        lines[error + 1..].iter().all(|l| l.starts_with("hint: ")),
        "{}: more than one error line\n{out}",
        r.name
    );
    assert!(
        lines[error].contains(r.needle),
        "{}: error line lacks {:?}\n{out}",
        r.name,
        r.needle
    );
    assert_eq!(refs(&env), before, "{}: refs/pair changed", r.name);
}

#[test]
fn every_refusal_is_one_error_line_and_changes_nothing() {
    let run = "20261129-231500-a1b2c3";
    let rows = vec![
        // SPEC §13
        row(
            "malformed run id",
            TestEnv::new,
            &["show", "../../etc/passwd"],
            1,
            "malformed run id",
        ),
        row(
            "unknown run id",
            TestEnv::new,
            &["show", run],
            1,
            "unknown run",
        ),
        row(
            "unknown --run",
            TestEnv::new,
            &["--run", run, "status"],
            1,
            "unknown run",
        ),
        row(
            "not a repository",
            TestEnv::empty,
            &["status"],
            1,
            "not a git repository",
        ),
        row(
            "unborn HEAD",
            || {
                let env = TestEnv::empty();
                env.git(&["init", "-q", "-b", "main"]);
                env
            },
            &["start", "--task", "t"],
            1,
            "HEAD is unborn",
        ),
        row(
            "config value that does not parse",
            || {
                let env = TestEnv::new();
                env.git(&["config", "pair.maxRounds", "zero"]);
                env
            },
            &["start", "--task", "t"],
            1,
            "bad config value",
        ),
        row(
            "budget that does not parse",
            TestEnv::new,
            &["start", "--task", "t", "--budget-usd", "lots"],
            129,
            "invalid value",
        ),
        row(
            "negative budget",
            TestEnv::new,
            &["start", "--task", "t", "--budget-usd", "-1"],
            129,
            "non-negative",
        ),
        row(
            "reviewer command not found",
            ready_for_review,
            &["review", "--reviewer-cmd", "[\"/nonexistent/reviewer\"]"],
            1,
            "no reviewer realization binds",
        ),
        row(
            "reviewer command not JSON",
            ready_for_review,
            &["review", "--reviewer-cmd", "not json"],
            129,
            "reviewer command",
        ),
        // start
        row(
            "dirty work tree",
            || {
                let env = TestEnv::new();
                env.write("stray.txt", "x\n");
                env
            },
            &["start", "--task", "t"],
            1,
            "dirty",
        ),
        row(
            "empty task",
            TestEnv::new,
            &["start", "--task", "  "],
            129,
            "--task must not be empty",
        ),
        row(
            "zero rounds",
            TestEnv::new,
            &["start", "--task", "t", "--max-rounds", "0"],
            129,
            "at least 1",
        ),
        row(
            "unknown reviewer",
            TestEnv::new,
            &["start", "--task", "t", "--reviewer", "bogus"],
            1,
            "unknown reviewer",
        ),
        row(
            "bad base",
            TestEnv::new,
            &["start", "--task", "t", "--base", "nope"],
            1,
            "cannot resolve revision",
        ),
        row(
            "unfinished run on the branch",
            || {
                let env = TestEnv::new();
                env.start("t");
                env
            },
            &["start", "--task", "again"],
            1,
            "already has an unfinished run",
        ),
        row(
            "--run on start",
            TestEnv::new,
            &["--run", run, "start", "--task", "t"],
            129,
            "--run does not apply",
        ),
        // coder-done
        row(
            "no active run",
            TestEnv::new,
            &["coder-done", "--summary", "x"],
            1,
            "no active run",
        ),
        row(
            "empty summary",
            ready_for_review,
            &["coder-done", "--summary", " "],
            129,
            "--summary must not be empty",
        ),
        row(
            "bad session id",
            ready_for_review,
            &["coder-done", "--summary", "x", "--session", "../x"],
            129,
            "not a session id",
        ),
        row(
            "responses file missing",
            changes_requested,
            &[
                "coder-done",
                "--summary",
                "x",
                "--responses",
                "/nonexistent/r.json",
            ],
            1,
            "cannot read --responses file",
        ),
        row(
            "count above the open findings",
            changes_requested,
            &["coder-done", "--summary", "x", "--findings-addressed", "9"],
            1,
            "more than the 2 open finding",
        ),
        row(
            "finished run",
            finished,
            &["--run", run, "coder-done", "--summary", "x"],
            1,
            "unknown run",
        ),
        // review
        row(
            "nothing to review",
            || {
                let env = TestEnv::new();
                env.start("t");
                env
            },
            &["review"],
            1,
            "nothing to review yet",
        ),
        row(
            "already reviewed",
            changes_requested,
            &["review", "--reviewer-cmd", &cmd("approve.sh")],
            1,
            "was already reviewed",
        ),
        row(
            "empty change",
            || {
                let env = TestEnv::new();
                env.start("t");
                env.pair_json(&["coder-done", "--summary", "nothing"]);
                env
            },
            &["review", "--reviewer-cmd", &cmd("approve.sh")],
            1,
            "equals the base",
        ),
        row(
            "zero timeout",
            ready_for_review,
            &["review", "--timeout", "0"],
            129,
            "at least 1 second",
        ),
        row(
            "missing plan file",
            ready_for_review,
            &["review", "--plan", "/nonexistent/plan.md"],
            1,
            "cannot read --plan file",
        ),
        // finish
        row(
            "finish without approval",
            changes_requested,
            &["finish"],
            1,
            "no approving last review",
        ),
        row(
            "second PR",
            finished,
            &["finish", "--pr", "8"],
            1,
            "never gets a second PR",
        ),
        row(
            "force on a finished run",
            finished,
            &["finish", "--force"],
            1,
            "already finished",
        ),
        // show, diff, set
        row(
            "no such round",
            ready_for_review,
            &["show", "--run", run, "--round", "1"],
            1,
            "unknown run",
        ),
        row(
            "set an unknown key",
            ready_for_review,
            &["set", "colour", "blue"],
            129,
            "unknown setting",
        ),
        row(
            "set a bad value",
            ready_for_review,
            &["set", "budget-usd", "-3"],
            129,
            "not a valid budget-usd",
        ),
        row(
            "abandon without a run",
            TestEnv::new,
            &["abandon"],
            1,
            "no active run",
        ),
        // sync
        row(
            "no such remote",
            ready_for_review,
            &["push", "nowhere"],
            1,
            "no such remote",
        ),
        row(
            "remote that looks like an option",
            ready_for_review,
            &["pull", "--", "-x"],
            1,
            "cannot be used as a remote",
        ),
        // checkpoint
        row(
            "checkpoint holding a secret",
            ready_for_review,
            &[
                "checkpoint",
                "create",
                "--next",
                &format!("use Bearer {}", "a".repeat(30)),
            ],
            1,
            "bearer",
        ),
        row(
            "unknown checkpoint",
            ready_for_review,
            &["checkpoint", "verify", "ck-000000000000"],
            1,
            "ck-000000000000",
        ),
        // gate
        row(
            "gate closed",
            ready_for_review,
            &["gate"],
            1,
            "commit refused",
        ),
        // usage
        row(
            "unknown command",
            TestEnv::new,
            &["frobnicate"],
            129,
            "unrecognized subcommand",
        ),
    ];
    for r in &rows {
        check(r);
    }
}

#[test]
fn reviewer_failures_use_no_round_and_store_no_verdict() {
    for (name, script, extra) in [
        ("exits non-zero", "fail.sh", vec![]),
        ("hangs", "hang.sh", vec!["--timeout", "1"]),
    ] {
        let env = ready_for_review();
        let run = env.pair_json(&["status"])["run_id"]
            .as_str()
            .expect("id")
            .to_owned();
        let reviewer = cmd(script);
        let mut args = vec!["review", "--reviewer-cmd", reviewer.as_str()];
        args.extend(extra);
        let out = env.pair(&args);
        assert_eq!(out.code, 1, "{name}\n{out}");
        assert!(
            out.stderr.starts_with("error: no verdict for round 1"),
            "{name}\n{out}"
        );
        let m = env.manifest(&run);
        assert_eq!(m["next_action"], "review", "{name}");
        assert!(
            m["rounds"]
                .as_array()
                .expect("rounds")
                .iter()
                .all(|e| e["verdict"].is_null()),
            "{name}: no verdict recorded"
        );
        env.assert_fsck_clean();
    }
}

#[test]
fn a_corrupted_record_is_one_error_line() {
    let env = TestEnv::new();
    let run = env.start("corrupt");
    // Replace the run's tip with a commit whose start record is not JSON.
    let tree = env.git(&["rev-parse", &format!("refs/pair/runs/{run}^{{tree}}")]);
    let records = env.git(&["ls-tree", "-r", &format!("{}:records", tree.trim())]);
    let name = records
        .split('\t')
        .nth(1)
        .expect("record path")
        .trim()
        .to_owned();
    let garbage = env.git_stdin(&["hash-object", "-w", "--stdin"], "{not json");
    let index = env.home.join("corrupt-index");
    let with_index = |args: &[&str]| {
        let out = env.git_env(args, &[("GIT_INDEX_FILE", index.to_str().expect("utf8"))]);
        assert_eq!(out.code, 0, "{out}");
        out.stdout
    };
    with_index(&["read-tree", tree.trim()]);
    with_index(&[
        "update-index",
        "--cacheinfo",
        &format!("100644,{},records/{name}", garbage.trim()),
    ]);
    let bad_tree = with_index(&["write-tree"]);
    let commit = env.git(&["commit-tree", bad_tree.trim(), "-m", "corrupt"]);
    env.git(&[
        "update-ref",
        &format!("refs/pair/runs/{run}"),
        commit.trim(),
    ]);
    let before = refs(&env);
    let out = env.pair(&["--run", &run, "pr-body"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.starts_with("error: corrupted record"), "{out}");
    assert_eq!(refs(&env), before);
}
