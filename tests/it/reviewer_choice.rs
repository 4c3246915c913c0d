//! The reviewer's model and reasoning effort (`pair.reviewerModel`, `pair.reviewerEffort`,
//! `review --model`, `--effort`): passed through the argument groups each realization
//! declares (the fake vendor CLIs record their argv), recorded on the review and shown in
//! `show`, the PR body and `review --json`; refused by name by a realization without them,
//! and refused for a value that could be read as an option. Plus a plan reviewed with no run.

use std::path::Path;

use crate::common::{TestEnv, assert_one_error_line, fixtures, system_bin};

fn ready(reviewer: &str) -> (TestEnv, String) {
    let env = TestEnv::new();
    env.git(&["config", "pair.reviewer", reviewer]);
    let run_id = env.start("Teach the fetcher to retry");
    env.write("src/lib.rs", "pub fn fetch() -> u32 {\n    42\n}\n");
    env.pair_json(&["coder-done", "--summary", "Added fetch"]);
    (env, run_id)
}

fn argv_of(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .expect("argv recorded")
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn codex_gets_the_configured_model_and_effort_and_the_review_records_them() {
    let (env, run_id) = ready("codex");
    env.git(&["config", "pair.reviewerModel", "gpt-5.2"]);
    env.git(&["config", "pair.reviewerEffort", "high"]);
    let argv_file = env.home.join("argv.txt");
    let argv = argv_file.to_str().expect("utf8");
    let out = env.pair_with_vendors(&["review", "--json"], &[("FAKE_ARGV_FILE", argv)]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(
        (v["model"].as_str(), v["effort"].as_str()),
        (Some("gpt-5.2"), Some("high"))
    );
    let args = argv_of(&argv_file);
    assert!(args.windows(2).any(|w| w == ["-m", "gpt-5.2"]), "{args:?}");
    assert!(
        args.windows(2)
            .any(|w| w == ["-c", "model_reasoning_effort=high"]),
        "{args:?}"
    );
    assert_eq!(args.last().map(String::as_str), Some("-"), "{args:?}");
    // Recorded on the review record (read with real git), shown in show and the PR body.
    let review = env
        .records(&run_id)
        .into_iter()
        .find(|r| r.contains("-review-") && !r.contains("dispatch"))
        .expect("a review record");
    let text = env.git(&[
        "cat-file",
        "-p",
        &format!(
            "refs/pair/runs/{run_id}:{}",
            crate::common::record_path(&review)
        ),
    ]);
    assert!(text.contains("\"model\":\"gpt-5.2\""), "{text}");
    assert!(text.contains("\"effort\":\"high\""), "{text}");
    let show = env.pair(&["show", &run_id]);
    assert!(
        show.stdout
            .contains("Reviewer model: gpt-5.2 · effort: high"),
        "{show}"
    );
    let body = env.pair(&["pr-body"]);
    assert!(
        body.stdout
            .contains("**Reviewer choice:** model `gpt-5.2`, effort `high` (round 1)"),
        "{body}"
    );
}

#[test]
fn the_flags_override_configuration_and_claude_takes_model_and_effort() {
    let (env, _) = ready("claude");
    env.git(&["config", "pair.reviewerModel", "opus"]);
    let argv_file = env.home.join("argv.txt");
    let argv = argv_file.to_str().expect("utf8");
    let out = env.pair_with_vendors(
        &["review", "--json", "--model", "sonnet", "--effort", "max"],
        &[("FAKE_ARGV_FILE", argv)],
    );
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["model"], "sonnet");
    let args = argv_of(&argv_file);
    assert!(
        args.windows(2).any(|w| w == ["--model", "sonnet"]),
        "{args:?}"
    );
    assert!(
        args.windows(2).any(|w| w == ["--effort", "max"]),
        "{args:?}"
    );
    assert!(!args.iter().any(|a| a == "opus"), "{args:?}");
}

#[test]
fn a_realization_without_the_flag_refuses_the_setting_by_name() {
    // The built-in reviewer declares no model arguments.
    let (env, _) = ready("builtin");
    env.git(&["config", "pair.reviewerModel", "gpt-5.2"]);
    let before = env.pair_refs();
    let out = env.pair(&["review"]);
    assert_one_error_line(&out, 1, "reviewer `builtin` takes no model");
    assert_eq!(env.pair_refs(), before, "nothing recorded");
    // A codex whose help shows no --model: its probe does not prove the flag.
    let (env, _) = ready("codex");
    let path = format!(
        "{}:{}",
        fixtures().join("reviewers/bin-old-codex").display(),
        system_bin().display()
    );
    let out = env.pair_env(&["review", "--model", "gpt-5.2"], &[("PATH", &path)]);
    assert_one_error_line(&out, 1, "reviewer `codex` takes no model here");
    // Codex takes no `max` effort: the shape its realization declares says so.
    let out = env.pair_with_vendors(&["review", "--effort", "max"], &[]);
    assert_one_error_line(&out, 1, "effort \"max\" is not one reviewer `codex` takes");
}

#[test]
fn a_value_that_could_be_an_option_is_refused_everywhere() {
    let (env, _) = ready("codex");
    let before = env.pair_refs();
    for hostile in ["-c", "--output-last-message=/etc/passwd", "a b", "$(id)"] {
        let out = env.pair_with_vendors(&["review", &format!("--model={hostile}")], &[]);
        assert_one_error_line(&out, 129, "--model");
        let out = env.pair(&["set", "reviewer-model", hostile]);
        assert_ne!(out.code, 0, "{out}");
    }
    env.git(&["config", "pair.reviewerEffort", "--high"]);
    let out = env.pair_with_vendors(&["review"], &[]);
    assert_one_error_line(
        &out,
        1,
        "bad config value '--high' for 'pair.reviewerEffort'",
    );
    assert_eq!(env.pair_refs(), before, "nothing recorded");
}

fn changes() -> String {
    serde_json::to_string(&[fixtures()
        .join("reviewers/request-changes.sh")
        .display()
        .to_string()])
    .expect("json")
}

#[test]
fn a_plan_is_reviewed_outside_a_repository_and_stored_nowhere() {
    let env = TestEnv::empty();
    env.write_outside("plan.md", "1. Add a retry loop to fetch.\n2. Test it.\n");
    let plan = env.home.join("plan.md");
    let out = env.pair(&[
        "review",
        "--plan",
        plan.to_str().expect("utf8"),
        "--reviewer-cmd",
        &changes(),
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["stored"], false);
    assert_eq!(v["mode"], "plan");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED");
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(2), "{v:#}");
    assert!(!env.repo.join(".git").exists(), "no repository was made");
    let human = env.pair(&[
        "review",
        "--plan",
        plan.to_str().expect("utf8"),
        "--reviewer-cmd",
        &changes(),
    ]);
    assert!(human.stdout.contains("Plan review"), "{human}");
    assert!(human.stdout.contains("not stored"), "{human}");
}

#[test]
fn a_plan_is_reviewed_in_a_repository_with_no_run_and_stores_nothing() {
    let env = TestEnv::new();
    env.write_outside("plan.md", "Rewrite the parser.\n");
    let plan = env.home.join("plan.md");
    let v = env.pair_json(&[
        "review",
        "--plan",
        plan.to_str().expect("utf8"),
        "--reviewer-cmd",
        &changes(),
    ]);
    assert_eq!(v["stored"], false);
    assert_eq!(env.pair_refs(), "", "no run was created");
    // With a run, the plan review goes into it as before.
    let run_id = env.start("parser");
    env.pair_json(&["coder-done", "--summary", "the plan"]);
    let v = env.pair_json(&[
        "review",
        "--plan",
        plan.to_str().expect("utf8"),
        "--reviewer-cmd",
        &changes(),
    ]);
    assert!(v.get("stored").is_none(), "{v:#}");
    assert_eq!(v["run_id"], run_id.as_str());
}
