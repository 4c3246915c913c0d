//! Reviewer sessions and panels across interruptions (SPEC §6.1, §6.4): a session id the
//! reviewer's output lacks is found by the attempt marker in the vendor's own session files
//! (and refused when it has the wrong shape or another attempt's marker); a resumed panel
//! does not run the members that already finished; the panel's cap and its binding limit are
//! in `review --json` and the stored dispatch record.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{TestEnv, fixtures, record_path};

const ID: &str = "33333333-4444-4555-8666-777777777777";

fn env_ready_for_review() -> (TestEnv, String) {
    let env = TestEnv::new();
    let run_id = env.start("Teach the fetcher to retry");
    env.write("src/lib.rs", "pub fn fetch() -> u32 {\n    42\n}\n");
    env.pair_json(&["coder-done", "--summary", "Added fetch"]);
    (env, run_id)
}

fn stub(script: &str) -> String {
    format!(
        "[\"{}\"]",
        fixtures().join("reviewers").join(script).display()
    )
}

fn show(env: &TestEnv, run_id: &str, path: &str) -> String {
    env.git(&["show", &format!("refs/pair/runs/{run_id}:{path}")])
}

fn shipped_surfaces() -> Value {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/surfaces.json"),
    )
    .expect("data");
    serde_json::from_str(&text).expect("json")
}

/// `pair.surfaceFile` = the shipped document, edited by `edit`.
fn override_surfaces(env: &TestEnv, edit: impl FnOnce(&mut Value)) {
    let mut surfaces = shipped_surfaces();
    edit(&mut surfaces);
    env.write_outside("surfaces.json", &surfaces.to_string());
    env.git(&[
        "config",
        "pair.surfaceFile",
        env.home.join("surfaces.json").to_str().expect("utf8"),
    ]);
}

/// The `command` realization told, as data, that its reviewer keeps Claude Code session
/// files, and that its session ids are UUIDs (copied from the shipped `claude` entry).
fn command_keeps_claude_sessions(env: &TestEnv) {
    override_surfaces(env, |s| {
        let claude = s["realizations"]["claude"].clone();
        let command = &mut s["realizations"]["command"];
        command["session_files"] = claude["session_files"].clone();
        command["session_id_shape"] = claude["session_id_shape"].clone();
    });
}

/// The one attempt of round 1's latest review, as stored.
fn last_attempt(env: &TestEnv, run_id: &str) -> Value {
    let attempts: Value =
        serde_json::from_str(&show(env, run_id, "reviews/1/attempts.json")).expect("json");
    attempts
        .as_array()
        .and_then(|a| a.last())
        .expect("an attempt")["attempt"]
        .clone()
}

#[test]
fn a_session_id_missing_from_the_output_is_found_by_the_attempt_marker() {
    let (env, run_id) = env_ready_for_review();
    // Without session_files in the data, no session file is looked at.
    let out = env.pair(&[
        "review",
        "--reviewer-cmd",
        &stub("session-file.sh"),
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["outcomes"][0]["session_id"], Value::Null);

    command_keeps_claude_sessions(&env);
    let out = env.pair(&[
        "review",
        "--again",
        "--reviewer-cmd",
        &stub("session-file.sh"),
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["outcomes"][0]["session_id"], ID);
    let attempt = last_attempt(&env, &run_id);
    assert_eq!(attempt["session_id"], ID);
    assert_eq!(attempt["session_id_from"], "session-file");
    // The session is the run's: recorded with the review, so cost counts it.
    assert!(
        show(&env, &run_id, "manifest.json").contains(ID),
        "the manifest registers the reviewer session"
    );
}

#[test]
fn another_attempts_marker_or_a_malformed_id_is_not_taken() {
    let (env, run_id) = env_ready_for_review();
    command_keeps_claude_sessions(&env);
    // A session file holding a different attempt's marker is not this attempt's session.
    let other = format!("<!-- git-pair: {run_id}/1/2 -->");
    let out = env.pair_env(
        &[
            "review",
            "--reviewer-cmd",
            &stub("session-file.sh"),
            "--json",
        ],
        &[("STUB_MARKER", &other)],
    );
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["outcomes"][0]["session_id"], Value::Null);
    assert_eq!(last_attempt(&env, &run_id)["session_id_from"], Value::Null);

    // The right marker in a file whose name is no UUID: refused, and said so.
    std::fs::remove_dir_all(env.home.join(".claude")).expect("rm");
    let out = env.pair_env(
        &[
            "review",
            "--again",
            "--reviewer-cmd",
            &stub("session-file.sh"),
            "--json",
        ],
        &[("STUB_SESSION_ID", "-rf_not-a-uuid")],
    );
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["outcomes"][0]["session_id"], Value::Null);
    let attempt = last_attempt(&env, &run_id);
    assert_eq!(attempt["session_id"], Value::Null);
    assert!(
        attempt["session_id_refused"]
            .as_str()
            .expect("a reason")
            .contains("does not fit"),
        "{attempt}"
    );
    assert!(!show(&env, &run_id, "manifest.json").contains("not-a-uuid"));
}

#[test]
fn a_resumed_panel_does_not_run_the_member_that_finished() {
    let (env, run_id) = env_ready_for_review();
    env.git(&["config", "pair.reviewers", "command,command"]);
    env.git(&["config", "pair.reviewerCommand", &stub("sequence.sh")]);
    env.git(&["config", "pair.maxParallel", "1"]);
    let count = env.home.join("calls");
    let pid_file = env.home.join("stub.pid");
    let vars = [
        ("STUB_COUNT", count.to_str().expect("utf8")),
        ("STUB_SEQ", "approve,hang,approve"),
        ("STUB_PID_FILE", pid_file.to_str().expect("utf8")),
    ];
    let mut review = env.pair_cmd(&["review"]);
    review.stdout(Stdio::null()).stderr(Stdio::null());
    for (k, v) in vars {
        review.env(k, v);
    }
    let mut child = review.spawn().expect("spawn");
    // The second member hangs: by then the first one's part is stored.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pid_file.exists() {
        assert!(
            Instant::now() < deadline,
            "the second reviewer never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL the review");
    child.wait().expect("reap");
    assert_eq!(env.pair_json(&["status"])["next_action"], "resume:review");
    let members = env
        .records(&run_id)
        .into_iter()
        .filter(|r| r.contains("-review-member-"))
        .count();
    assert_eq!(members, 1, "the finished member's part is stored");

    // The resumed review kills the hung stub it left, and runs only the unfinished member.
    let out = env.pair_env(&["review", "--json"], &vars);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["verdict"], "APPROVED");
    assert_eq!(v["outcomes"][0]["outcome"], "completed");
    assert_eq!(v["outcomes"][1]["outcome"], "completed");
    assert_eq!(
        std::fs::read_to_string(&count).expect("count").trim(),
        "3",
        "the finished member was not invoked again"
    );
    let markers = std::fs::read_to_string(format!("{}.markers", count.display())).expect("log");
    let markers: Vec<&str> = markers.lines().collect();
    // Each call has its own marker: slot 0 then slot 1 of dispatch 1, then slot 1 of the
    // re-dispatch (two reviewers × three attempt numbers each came before it).
    assert_eq!(
        markers,
        [
            format!("<!-- git-pair: {run_id}/1/1 -->"),
            format!("<!-- git-pair: {run_id}/1/4 -->"),
            format!("<!-- git-pair: {run_id}/1/10 -->"),
        ]
    );
    // The round's record carries both members; the re-dispatch says which one was kept.
    let records = env.records(&run_id);
    let redispatch = records
        .iter()
        .rfind(|r| r.contains("-review-dispatch-"))
        .expect("re-dispatch");
    let redispatch: Value =
        serde_json::from_str(&show(&env, &run_id, &record_path(redispatch))).expect("json");
    assert_eq!(
        redispatch["reviewers"],
        serde_json::json!(["command", "command"])
    );
    assert_eq!(redispatch["carried"], serde_json::json!(["command"]));
    let attempts: Value =
        serde_json::from_str(&show(&env, &run_id, "reviews/1/attempts.json")).expect("json");
    assert_eq!(attempts.as_array().expect("array").len(), 2);
}

#[test]
fn the_panel_cap_and_its_binding_limit_are_reported_and_recorded() {
    let (env, run_id) = env_ready_for_review();
    env.git(&["config", "pair.reviewers", "builtin,builtin"]);
    let dispatch_of_last_review = |env: &TestEnv| -> Value {
        let records = env.records(&run_id);
        let name = records
            .iter()
            .rfind(|r| r.contains("-review-dispatch-"))
            .expect("dispatch");
        serde_json::from_str(&show(env, &run_id, &record_path(name))).expect("json")
    };
    let cases: &[(Option<&str>, Option<usize>, usize, &str)] = &[
        (None, None, 2, "reviewers"),
        (Some("1"), None, 1, "maxParallel"),
        (Some("8"), Some(1), 1, "builtin ceiling"),
    ];
    for (i, (max_parallel, ceiling, limit, bound_by)) in cases.iter().enumerate() {
        if let Some(n) = max_parallel {
            env.git(&["config", "pair.maxParallel", n]);
        }
        if let Some(c) = ceiling {
            override_surfaces(&env, |s| {
                s["realizations"]["builtin"]["max_concurrency"] = (*c).into();
            });
        }
        let mut args = vec!["review", "--json"];
        if i > 0 {
            args.push("--again");
        }
        let out = env.pair(&args);
        assert_eq!(out.code, 0, "{out}");
        let want = serde_json::json!({"limit": limit, "bound_by": bound_by});
        assert_eq!(out.json()["parallelism"], want, "case {i}");
        assert_eq!(
            dispatch_of_last_review(&env)["parallelism"],
            want,
            "case {i}"
        );
    }
}
