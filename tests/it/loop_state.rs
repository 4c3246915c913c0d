//! `coder-done`, `status`, `handoff`, `list`, `show`: the first half of the loop as stored
//! state, and the run-id rows of SPEC §13.

use crate::common::{TestEnv, assert_one_error_line, record_path};

#[test]
fn coder_done_records_a_round_and_moves_next_action_to_review() {
    let env = TestEnv::new();
    let run_id = env.start("t");
    assert_eq!(env.pair_json(&["status"])["next_action"], "code");
    let v = env.pair_json(&["coder-done", "--summary", "Added the retry loop"]);
    assert_eq!(v["round"], 1);
    let status = env.pair_json(&["status"]);
    assert_eq!(status["run_id"], run_id.as_str());
    assert_eq!(status["round"], 1);
    assert_eq!(status["max_rounds"], 5);
    assert_eq!(status["last_verdict"], serde_json::Value::Null);
    assert_eq!(status["next_action"], "review");
    // Nothing was measured (no agent session): not $0.00.
    assert_eq!(status["spent_usd"], serde_json::Value::Null);
    assert!(env.pair(&["status"]).stdout.contains("spent: not measured"));
    assert!(!env.pair(&["cost"]).stdout.contains("$-0"));

    let m = env.manifest(&run_id);
    assert_eq!(m["rounds"][0]["n"], 1);
    assert_eq!(m["rounds"][0]["role"], "coder");
    assert_eq!(m["rounds"][0]["tool"], "claude");
    assert_eq!(m["rounds"][0]["verdict"], serde_json::Value::Null);
    assert_eq!(env.records(&run_id).len(), 2);
    let record = env.git(&[
        "show",
        &format!(
            "refs/pair/runs/{run_id}:{}",
            record_path(&env.records(&run_id)[1])
        ),
    ]);
    let record: serde_json::Value = serde_json::from_str(&record).expect("record JSON");
    assert_eq!(record["v"], 1);
    assert_eq!(record["kind"], "coder");
    assert_eq!(record["summary"], "Added the retry loop");
}

#[test]
fn a_second_coder_done_before_review_adds_to_the_same_round_in_order() {
    let env = TestEnv::new();
    let run_id = env.start("t");
    assert_eq!(
        env.pair_json(&["coder-done", "--summary", "first part"])["round"],
        1
    );
    assert_eq!(
        env.pair_json(&["coder-done", "--summary", "second part"])["round"],
        1
    );
    let m = env.manifest(&run_id);
    assert_eq!(m["rounds"].as_array().expect("rounds").len(), 1);
    assert_eq!(m["rounds"][0]["summaries"], 2);
    let handoff = env.read("HANDOFF.md");
    let first = handoff.find("first part").expect("first summary");
    let second = handoff.find("second part").expect("second summary");
    assert!(first < second, "{handoff}");
    assert_eq!(
        handoff.matches("## Round 1 — CODER (claude)").count(),
        2,
        "{handoff}"
    );
}

#[test]
fn the_run_log_reads_like_a_story() {
    let env = TestEnv::new();
    let run_id = env.start("Teach the fetcher to retry");
    env.pair_json(&["coder-done", "--summary", "Retry loop with backoff"]);
    let base = env.git(&["rev-parse", "HEAD"]);
    let log = env.git(&[
        "log",
        "--format=%s",
        &format!("{}..refs/pair/runs/{run_id}", base.trim()),
    ]);
    assert_eq!(
        log,
        "coder 1: Retry loop with backoff\nstart: Teach the fetcher to retry\n"
    );
    let trailers = env.git(&[
        "log",
        "-1",
        "--format=%(trailers:key=Pair-Round,valueonly)",
        &format!("refs/pair/runs/{run_id}"),
    ]);
    assert_eq!(trailers.trim(), "1");
}

#[test]
fn handoff_prints_what_handoff_md_holds() {
    let env = TestEnv::new();
    let run_id = env.start("Add retries");
    env.pair_json(&["coder-done", "--summary", "Did it\nin two lines"]);
    let out = env.pair(&["handoff"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.stdout, env.read("HANDOFF.md"));
    assert!(out.stdout.starts_with(&format!("# Pair-Loop Handoff — {run_id}\nTask: Add retries · Branch: main · Coder: claude · Reviewer: codex\n\n## Round 1 — CODER (claude) · 2026-11-29 23:15 UTC\nDid it\nin two lines\n")), "{out}");
    // A deleted view comes back from the stored records, and the render cache is not needed.
    std::fs::remove_file(env.repo.join("HANDOFF.md")).expect("rm");
    std::fs::remove_dir_all(env.repo.join(".git/pair/cache")).expect("rm cache");
    let again = env.pair(&["handoff"]);
    assert_eq!(again.stdout, out.stdout);
    assert_eq!(env.read("HANDOFF.md"), out.stdout);
    let v = env.pair_json(&["handoff"]);
    assert_eq!(v["text"], out.stdout.as_str());
}

#[test]
fn a_stale_render_cache_is_extended_not_trusted_blindly() {
    let env = TestEnv::new();
    env.start("t");
    env.pair_json(&["coder-done", "--summary", "one"]);
    let cache_dir = env.repo.join(".git/pair/cache/handoff");
    let cached: Vec<_> = std::fs::read_dir(&cache_dir).expect("cache").collect();
    assert_eq!(cached.len(), 2, "the transcript and its tip");
    // Remove the view and the cache between two writes: the next render is complete.
    std::fs::remove_dir_all(&cache_dir).expect("rm");
    env.pair_json(&["coder-done", "--summary", "two"]);
    let handoff = env.read("HANDOFF.md");
    assert!(
        handoff.contains("one") && handoff.contains("two"),
        "{handoff}"
    );
}

#[test]
fn malformed_and_unknown_run_ids_are_one_error_line_and_change_nothing() {
    let env = TestEnv::new();
    env.start("t");
    let before = env.pair_refs();
    for (args, needle) in [
        (
            vec!["--run", "../../etc/passwd", "coder-done", "--summary", "x"],
            "malformed run id",
        ),
        (
            vec!["--run", "20261129-231500-zzzzzz", "status"],
            "malformed run id",
        ),
        (
            vec![
                "--run",
                "20261129-231500-abcdef",
                "coder-done",
                "--summary",
                "x",
            ],
            "unknown run",
        ),
        (vec!["show", "refs/heads/main"], "malformed run id"),
        (vec!["show", "20261129-231500-abcdef"], "unknown run"),
    ] {
        let out = env.pair(&args);
        assert_one_error_line(&out, 1, needle);
    }
    assert_eq!(env.pair_refs(), before);
}

#[test]
fn commands_without_an_active_run_say_how_to_start_one() {
    let env = TestEnv::new();
    let out = env.pair(&["status"]);
    assert_one_error_line(&out, 1, "no active run");
    assert!(out.stderr.contains("git pair start"), "{out}");
    let out = env.pair(&["coder-done", "--summary", "x"]);
    assert_one_error_line(&out, 1, "no active run");
}

#[test]
fn the_default_run_is_the_newest_unfinished_one_on_this_branch() {
    let env = TestEnv::new();
    let on_main = env.start("main work");
    env.git(&["checkout", "-q", "-b", "feature"]);
    let on_feature = env.start("feature work");
    assert_eq!(env.pair_json(&["status"])["run_id"], on_feature.as_str());
    env.git(&["checkout", "-q", "main"]);
    assert_eq!(env.pair_json(&["status"])["run_id"], on_main.as_str());
    assert_eq!(
        env.pair_json(&["--run", &on_feature, "status"])["run_id"],
        on_feature.as_str()
    );
}

#[test]
fn bad_coder_done_input_is_refused_before_anything_is_stored() {
    let env = TestEnv::new();
    env.start("t");
    let before = env.pair_refs();
    let out = env.pair(&["coder-done", "--summary", "x", "--session", "a/b"]);
    assert_eq!(out.code, 129, "{out}");
    env.write_outside("responses.json", "{not json");
    let responses = env.home.join("responses.json");
    let out = env.pair(&[
        "coder-done",
        "--summary",
        "x",
        "--responses",
        responses.to_str().expect("utf8"),
    ]);
    assert_one_error_line(&out, 1, "--responses");
    let out = env.pair(&["coder-done", "--summary", ""]);
    assert_eq!(out.code, 129, "{out}");
    assert_eq!(env.pair_refs(), before);
}

#[test]
fn responses_are_stored_and_shown() {
    let env = TestEnv::new();
    let run_id = env.start("t");
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "first"]);
    let reviewer = format!(
        "[\"{}\"]",
        crate::common::fixtures()
            .join("reviewers/request-changes.sh")
            .display()
    );
    env.pair_json(&["review", "--reviewer-cmd", &reviewer]);
    env.write_outside(
        "responses.json",
        r#"[{"finding": 1, "status": "addressed"}, {"finding": 2, "status": "deferred", "reason": "out of scope"}]"#,
    );
    let responses = env.home.join("responses.json");
    env.pair_json(&[
        "coder-done",
        "--summary",
        "x",
        "--findings-addressed",
        "1",
        "--responses",
        responses.to_str().expect("utf8"),
    ]);
    let handoff = env.read("HANDOFF.md");
    assert!(
        handoff.contains("- finding 2: deferred — out of scope"),
        "{handoff}"
    );
    let shown = env.pair_json(&["show", &run_id, "--round", "2"]);
    assert_eq!(
        shown["records"][0]["responses"][1]["reason"],
        "out of scope"
    );
    assert_eq!(env.manifest(&run_id)["rounds"][2]["findings_addressed"], 1);
}

#[test]
fn list_and_show_read_back_runs() {
    let env = TestEnv::new();
    let a = env.start("first task");
    env.git(&["checkout", "-q", "-b", "other"]);
    let b = env.start("second task");
    env.pair_json(&["--run", &a, "coder-done", "--summary", "work"]);
    let list = env.pair_json(&["list"]);
    let runs = list["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    let ids: Vec<_> = runs
        .iter()
        .map(|r| r["run_id"].as_str().expect("id"))
        .collect();
    assert!(ids.contains(&a.as_str()) && ids.contains(&b.as_str()));
    let shown = env.pair_json(&["show", &a]);
    assert_eq!(shown["run_id"], a.as_str());
    assert_eq!(shown["rounds"][0]["role"], "coder");
    let out = env.pair(&["show", &a, "--round", "2"]);
    assert_one_error_line(&out, 1, "no round 2");
    let out = env.pair(&["show", &a, "--round", "1", "--diff"]);
    assert_one_error_line(&out, 1, "no stored diff");

    // A closed run says how it closed.
    env.pair_json(&["abandon"]);
    let human = env.pair(&["list"]);
    let line = human
        .stdout
        .lines()
        .find(|l| l.starts_with(&b))
        .expect("the abandoned run is listed");
    assert!(line.contains("done: abandoned"), "{human}");
}

#[test]
fn a_torn_or_edited_view_is_rendered_again_whole() {
    let env = TestEnv::new();
    env.start("t");
    env.pair_json(&["coder-done", "--summary", "one"]);
    let expected_after_two = |env: &TestEnv| {
        let handoff = env.read("HANDOFF.md");
        assert!(
            handoff.contains("one") && handoff.contains("two"),
            "{handoff}"
        );
        assert!(!handoff.contains("GARBAGE"), "{handoff}");
        assert_eq!(handoff, env.pair(&["handoff"]).stdout);
    };
    // A writer killed mid-append leaves the cache longer than its recorded length.
    let dir = env.repo.join(".git/pair/cache/handoff");
    let text = std::fs::read_dir(&dir)
        .expect("cache")
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "md"))
        .expect("cached text")
        .path();
    let mut cached = std::fs::read_to_string(&text).expect("read");
    cached.push_str("GARBAGE half a section");
    std::fs::write(&text, cached).expect("write");
    // And someone edited the view by hand.
    let mut view = env.read("HANDOFF.md");
    view.push_str("GARBAGE by hand\n");
    env.write("HANDOFF.md", &view);
    env.pair_json(&["coder-done", "--summary", "two"]);
    expected_after_two(&env);
}
