//! `start`: the clean-tree precondition, what a run looks like in git, and bad input (SPEC §13).

use crate::common::{TestEnv, assert_one_error_line};

#[test]
fn start_creates_a_run_ref_and_touches_nothing_of_the_user() {
    let env = TestEnv::new();
    let head_before = env.git(&["rev-parse", "HEAD"]);
    let index_before = std::fs::read(env.repo.join(".git/index")).expect("index");
    let v = env.pair_json(&[
        "start",
        "--task",
        "Add retries to the fetcher",
        "--max-rounds",
        "3",
    ]);
    let run_id = v["run_id"].as_str().expect("run_id");
    assert_eq!(v["ref"], format!("refs/pair/runs/{run_id}"));
    assert_eq!(v["max_rounds"], 3);
    assert_eq!(v["coder"], "claude");
    assert_eq!(v["reviewer"], "codex");
    assert_eq!(v["base"], head_before.trim());
    assert_eq!(
        v["handoff_path"],
        env.repo.join("HANDOFF.md").display().to_string()
    );

    // The state is in git: one record and the manifest, the base reachable as the parent.
    let records = env.records(run_id);
    assert_eq!(records.len(), 1);
    assert!(records[0].starts_with("000001-start-"), "{records:?}");
    let m = env.manifest(run_id);
    assert_eq!(m["v"], 1);
    assert_eq!(m["run_id"], run_id);
    assert_eq!(m["task"], "Add retries to the fetcher");
    assert_eq!(m["branch"], "main");
    assert_eq!(m["base"], head_before.trim());
    assert_eq!(m["next_action"], "code");
    assert_eq!(m["rounds"], serde_json::json!([]));
    // The run's chain holds no project commit (publishing it publishes no history); a local
    // ref keeps the base reachable here.
    let parents = env.git(&[
        "rev-list",
        "--parents",
        "-1",
        &format!("refs/pair/runs/{run_id}"),
    ]);
    assert_eq!(parents.split_whitespace().count(), 1, "{parents}");
    let kept = env.git(&["rev-parse", &format!("refs/pair-local/bases/{run_id}")]);
    assert_eq!(kept, head_before);
    let message = env.git(&[
        "log",
        "-1",
        "--format=%B",
        &format!("refs/pair/runs/{run_id}"),
    ]);
    assert!(
        message.starts_with("start: Add retries to the fetcher\n"),
        "{message}"
    );
    assert!(
        message.contains(&format!("Pair-Run: {run_id}\n")),
        "{message}"
    );
    let trailers = env.git(&[
        "log",
        "-1",
        "--format=%(trailers:key=Pair-Record,valueonly)",
        &format!("refs/pair/runs/{run_id}"),
    ]);
    assert_eq!(trailers.trim(), records[0]);

    // Nothing written to the user's branch, index or tracked files; HANDOFF.md is excluded.
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head_before);
    assert_eq!(
        std::fs::read(env.repo.join(".git/index")).expect("index"),
        index_before
    );
    assert_eq!(
        env.git(&["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
    assert!(
        env.read(".git/info/exclude")
            .lines()
            .any(|l| l == "/HANDOFF.md")
    );
    let handoff = env.read("HANDOFF.md");
    assert_eq!(
        handoff,
        format!(
            "# Pair-Loop Handoff — {run_id}\nTask: Add retries to the fetcher · Branch: main · Coder: claude · Reviewer: codex\n"
        )
    );
    env.assert_fsck_clean();
}

#[test]
fn starting_twice_adds_the_exclude_line_once() {
    let env = TestEnv::new();
    env.start("one");
    env.start("two");
    let exclude = env.read(".git/info/exclude");
    assert_eq!(
        exclude.lines().filter(|l| *l == "/HANDOFF.md").count(),
        1,
        "{exclude}"
    );
}

#[test]
fn dirty_work_trees_refuse_start_naming_the_first_path() {
    type MakeDirty = fn(&TestEnv);
    let cases: [(&str, MakeDirty); 4] = [
        ("README", |env| env.write("README", "changed\n")),
        ("staged.txt", |env| {
            env.write("staged.txt", "new\n");
            env.git(&["add", "staged.txt"]);
        }),
        ("notes/todo.txt", |env| {
            env.write("notes/todo.txt", "untracked\n")
        }),
        ("README", |env| {
            std::fs::remove_file(env.repo.join("README")).expect("rm");
        }),
    ];
    for (path, make_dirty) in cases {
        let env = TestEnv::new();
        make_dirty(&env);
        let before = env.pair_refs();
        let out = env.pair(&["start", "--task", "t"]);
        assert_one_error_line(&out, 1, "dirty");
        assert!(
            out.stderr.lines().next().unwrap_or("").contains(path),
            "{out}"
        );
        assert_eq!(env.pair_refs(), before, "state changed after a refusal");
        assert!(!env.repo.join("HANDOFF.md").exists());
    }
}

#[test]
fn ignored_files_do_not_make_the_tree_dirty() {
    let env = TestEnv::new();
    env.write(".gitignore", "target/\n*.log\n");
    env.git(&["add", ".gitignore"]);
    env.git(&["commit", "-q", "-m", "ignore"]);
    env.write("target/debug/out.bin", "x");
    env.write("build.log", "x");
    env.start("ignored files are fine");
}

#[test]
fn json_refusals_print_one_object_with_an_error_key() {
    let env = TestEnv::new();
    env.write("new.txt", "x");
    let out = env.pair(&["start", "--task", "t", "--json"]);
    assert_eq!(out.code, 1);
    let v = out.json();
    assert!(
        v["error"].as_str().expect("error").contains("dirty"),
        "{out}"
    );
    assert!(out.stderr.starts_with("error: "));
}

#[test]
fn outside_a_repository_is_one_error_line() {
    let env = TestEnv::empty();
    let out = env.pair(&["start", "--task", "t"]);
    assert_one_error_line(&out, 1, "not a git repository");
    let out = env.pair(&["status"]);
    assert_one_error_line(&out, 1, "not a git repository");
}

#[test]
fn an_unborn_head_is_refused() {
    let env = TestEnv::empty();
    env.git(&["init", "-q", "-b", "main"]);
    let out = env.pair(&["start", "--task", "t"]);
    assert_one_error_line(&out, 1, "unborn");
    assert_eq!(env.git(&["for-each-ref", "refs/pair"]), "");
}

#[test]
fn a_detached_head_is_allowed_and_recorded_as_head() {
    let env = TestEnv::new();
    env.git(&["checkout", "-q", "--detach"]);
    let run_id = env.start("detached");
    assert_eq!(env.manifest(&run_id)["branch"], "HEAD");
    let status = env.pair_json(&["status"]);
    assert_eq!(status["run_id"], run_id.as_str());
}

#[test]
fn unparseable_config_values_are_one_error_line_and_store_nothing() {
    for (key, value) in [
        ("pair.maxRounds", "lots"),
        ("pair.budgetUsd", "cheap"),
        ("pair.handoffFile", "perhaps"),
        ("pair.reviewerCommand", "not json"),
    ] {
        let env = TestEnv::new();
        env.git(&["config", key, value]);
        let out = env.pair(&["start", "--task", "t"]);
        assert_one_error_line(&out, 1, key);
        assert!(out.stderr.contains(value), "{out}");
        assert_eq!(env.git(&["for-each-ref", "refs/pair"]), "");
    }
}

#[test]
fn config_sets_defaults_and_flags_override_them() {
    let env = TestEnv::new();
    env.git(&["config", "pair.maxRounds", "7"]);
    env.git(&["config", "pair.reviewer", "claude"]);
    let v = env.pair_json(&["start", "--task", "t"]);
    assert_eq!(v["max_rounds"], 7);
    assert_eq!(v["reviewer"], "claude");
    let v = env.pair_json(&[
        "start",
        "--replace",
        "--task",
        "t",
        "--max-rounds",
        "2",
        "--reviewer",
        "codex",
    ]);
    assert_eq!(v["max_rounds"], 2);
    assert_eq!(v["reviewer"], "codex");
}

#[test]
fn handoff_file_false_writes_no_view() {
    let env = TestEnv::new();
    env.git(&["config", "pair.handoffFile", "false"]);
    let v = env.pair_json(&["start", "--task", "t"]);
    assert!(v["handoff_path"].is_null());
    assert!(!env.repo.join("HANDOFF.md").exists());
}

#[test]
fn handoff_file_follows_git_booleans_written_by_hand() {
    // `git config` cannot write a key without `=`; people editing .git/config can.
    for (line, writes_view) in [
        ("handoffFile =", false),
        ("handoffFile", true),
        ("handoffFile = off", false),
        ("handoffFile = Yes", true),
        ("handoffFile = 0", false),
    ] {
        let env = TestEnv::new();
        let path = env.repo.join(".git/config");
        let config = std::fs::read_to_string(&path).expect("read .git/config");
        std::fs::write(&path, format!("{config}[pair]\n\t{line}\n")).expect("write .git/config");
        let git_reads = env.git(&["config", "--type=bool", "pair.handoffFile"]);
        assert_eq!(
            git_reads.trim() == "true",
            writes_view,
            "{line}: git says {git_reads}"
        );
        let v = env.pair_json(&["start", "--task", "t"]);
        assert_eq!(v["handoff_path"].is_string(), writes_view, "{line}: {v}");
        assert_eq!(env.repo.join("HANDOFF.md").exists(), writes_view, "{line}");
    }
}

#[test]
fn base_can_be_any_commit_and_a_bad_one_is_refused() {
    let env = TestEnv::new();
    let first = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    env.write("b.txt", "b\n");
    env.git(&["add", "b.txt"]);
    env.git(&["commit", "-q", "-m", "second"]);
    let v = env.pair_json(&["start", "--task", "t", "--base", "HEAD~1"]);
    assert_eq!(v["base"], first);
    let before = env.pair_refs();
    let out = env.pair(&["start", "--task", "t", "--base", "no-such-rev"]);
    assert_one_error_line(&out, 1, "no-such-rev");
    assert_eq!(env.pair_refs(), before);
}

#[test]
fn usage_errors_exit_129() {
    let env = TestEnv::new();
    for args in [
        vec!["start"],
        vec!["start", "--task", "t", "--max-rounds", "zero"],
        vec!["start", "--task", "t", "--max-rounds", "0"],
        vec!["start", "--task", "  "],
        vec!["no-such-command"],
    ] {
        let out = env.pair(&args);
        assert_eq!(out.code, 129, "{args:?}:\n{out}");
    }
    assert_eq!(env.git(&["for-each-ref", "refs/pair"]), "");
}

#[test]
fn help_exits_zero_and_teaches_the_loop() {
    let env = TestEnv::new();
    let out = env.pair(&["--help"]);
    assert_eq!(out.code, 0, "{out}");
    for word in ["start", "coder-done", "review", "finish", "next_action"] {
        assert!(out.stdout.contains(word), "--help lacks {word}:\n{out}");
    }
}

/// `git -c pair.*=… pair …` is read like any other configuration (git hands the overrides
/// down in GIT_CONFIG_PARAMETERS), over the repository's own config, as git reads `-c`.
#[test]
fn git_dash_c_settings_are_read_like_any_config() {
    let env = TestEnv::new();
    env.git(&["config", "pair.maxRounds", "7"]);
    let path = format!(
        "{}:{}",
        crate::common::pair_bin().display(),
        crate::common::system_bin().display()
    );
    let git_pair = |args: &[&str]| {
        let mut cmd = std::process::Command::new("git");
        cmd.current_dir(&env.repo);
        env.configure(&mut cmd);
        cmd.env("PATH", &path)
            .args([
                "-c",
                "pair.maxRounds=3",
                "-c",
                "pair.coder=codex-cli",
                "pair",
            ])
            .args(args);
        crate::common::run(cmd)
    };
    let out = git_pair(&["start", "--task", "dash c", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["max_rounds"], 3, "{v}");
    assert_eq!(v["coder"], "codex-cli", "{v}");
    let status = git_pair(&["status", "--json"]).json();
    assert_eq!(status["settings"]["max-rounds"]["from"], "pair.maxRounds");
    // Without -c, the repository's value.
    assert_eq!(
        env.pair_json(&["status"])["settings"]["max-rounds"]["value"],
        7
    );
}

/// A `-c` override gix cannot apply is one error line naming it (not "not a git
/// repository"), and nothing is stored.
#[test]
fn an_unusable_git_dash_c_override_is_one_error_line() {
    let env = TestEnv::new();
    let before = env.pair_refs();
    let out = env.pair_env(
        &["start", "--task", "t"],
        &[("GIT_CONFIG_PARAMETERS", "'bogus'")],
    );
    assert_one_error_line(&out, 1, "GIT_CONFIG_PARAMETERS");
    assert!(out.stderr.contains("bogus"), "{out}");
    assert_eq!(env.pair_refs(), before);
}

#[test]
fn start_warns_when_the_reviewer_program_is_not_installed() {
    let env = TestEnv::new();
    // The hermetic PATH holds no real AI CLI: the default reviewer (codex) is missing.
    let out = env.pair(&["start", "--task", "t"]);
    assert_eq!(out.code, 0, "{out}");
    let stderr = &out.stderr;
    assert!(
        stderr.contains("the reviewer codex runs `codex`, which is not on PATH")
            && stderr.contains("git pair set reviewer"),
        "{stderr}"
    );
    env.pair(&["abandon"]);
    // With the vendor's CLI on PATH, and for the built-in reviewer, nothing to warn about.
    let out = env.pair_with_vendors(&["start", "--task", "t", "--replace"], &[]);
    assert_eq!(out.code, 0, "{out}");
    assert!(!out.stderr.contains("not on PATH"), "{out}");
    let out = env.pair(&["start", "--task", "t", "--replace", "--reviewer", "builtin"]);
    assert!(!out.stderr.contains("not on PATH"), "{out}");
}
