//! The `acp` reviewer against a fake ACP agent (`fixtures/reviewers/acp-agent.py`): git pair
//! speaks the protocol over the agent's stdin/stdout, reads the streamed answer through the
//! same parser as every reviewer, answers file reads from the reviewed snapshot alone,
//! rejects permissions, and cancels a turn that runs out of time.

use crate::common::{Output, TestEnv, fixtures};

/// A run reviewed by the fake agent doing `seq` (one step per agent process); the state file
/// whose `.log` holds what the agent received.
fn acp_env(seq: &str, extra: &str) -> (TestEnv, String, std::path::PathBuf) {
    let env = TestEnv::new();
    let state = env.home.join("acp-state");
    let agent = fixtures().join("reviewers/acp-agent.py");
    env.git(&[
        "config",
        "pair.acpCommand",
        &format!(
            "{} --state={} --seq={seq}{extra}",
            agent.display(),
            state.display()
        ),
    ]);
    let (out, run) = start(&env);
    assert_eq!(out.code, 0, "{out}");
    env.write("a.txt", "helo\n");
    env.pair_json(&["coder-done", "--summary", "greeting"]);
    (env, run, state)
}

fn start(env: &TestEnv) -> (Output, String) {
    let out = env.pair(&["start", "--task", "greet", "--reviewer", "acp", "--json"]);
    let run = out.json()["run_id"].as_str().unwrap_or_default().to_owned();
    (out, run)
}

/// What the agent logged, one JSON object a line.
fn log(state: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(state.with_extension("log")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a log line is JSON"))
        .collect()
}

fn received<'a>(log: &'a [serde_json::Value], method: &str) -> Vec<&'a serde_json::Value> {
    log.iter()
        .filter(|e| e["event"] == "received" && e["method"] == method)
        .collect()
}

fn review(env: &TestEnv, extra: &[&str]) -> (Output, serde_json::Value) {
    let mut args = vec!["review", "--json"];
    args.extend_from_slice(extra);
    let out = env.pair(&args);
    let v = out.json();
    (out, v)
}

#[test]
fn an_acp_agent_requests_changes_then_approves() {
    let (env, run, state) = acp_env("cr,approve", "");
    let (out, v) = review(&env, &[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{out}");
    assert_eq!(v["findings"][0]["location"], "a.txt:1", "{out}");
    assert_eq!(v["outcomes"][0]["reviewer"], "acp:acp-agent.py", "{out}");
    assert_eq!(v["outcomes"][0]["session_id"], "fake-session-1", "{out}");

    let log = log(&state);
    let init = received(&log, "initialize");
    assert_eq!(init.len(), 1);
    let params = &init[0]["params"];
    assert_eq!(params["protocolVersion"], 1);
    assert_eq!(params["clientCapabilities"]["fs"]["readTextFile"], true);
    assert_eq!(params["clientCapabilities"]["fs"]["writeTextFile"], false);
    assert_eq!(params["clientCapabilities"]["terminal"], false);
    let new = received(&log, "session/new");
    assert_eq!(new[0]["params"]["mcpServers"], serde_json::json!([]));
    // The agent works in the reviewed snapshot, never the live work tree.
    let cwd = new[0]["params"]["cwd"].as_str().expect("cwd");
    assert!(
        !cwd.starts_with(env.repo.to_str().expect("utf-8")) || cwd.contains("/.git/pair/"),
        "{cwd}"
    );
    let prompt = received(&log, "session/prompt");
    let text = prompt[0]["params"]["prompt"][0]["text"]
        .as_str()
        .expect("text");
    assert!(
        text.contains("<!-- git-pair: "),
        "the packet carries its marker"
    );
    assert!(text.contains("+helo"), "the packet carries the diff");

    env.write("a.txt", "hello\n");
    env.pair_json(&["coder-done", "--summary", "fixed the greeting"]);
    let (out, v) = review(&env, &[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "APPROVED", "{out}");
    // The fake agent does not advertise loadSession: round 2 is a new session.
    assert!(received(&self::log(&state), "session/load").is_empty());
    assert_eq!(v["outcomes"][0]["session_id"], "fake-session-2", "{out}");

    // Stored with the run, read back with real git: both reviews, the agent's own cost.
    let records = env.records(&run);
    assert!(
        records.iter().filter(|r| r.contains("-review-")).count() >= 2,
        "{records:?}"
    );
    let status = env.pair_json(&["status"]);
    assert_eq!(status["last_verdict"], "APPROVED", "{status:#}");
    let spent = status["spent_usd"]
        .as_f64()
        .unwrap_or_else(|| panic!("{status:#}"));
    assert!(
        (spent - 0.025).abs() < 1e-9,
        "two sessions at $0.0125: {status:#}"
    );
}

#[test]
fn a_loaded_session_replays_history_that_is_never_the_answer() {
    let (env, _run, state) = acp_env("cr,garbage", " --load");
    let (out, v) = review(&env, &[]);
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{out}");
    env.write("a.txt", "hello\n");
    env.pair_json(&["coder-done", "--summary", "fixed"]);
    let (out, v) = review(&env, &[]);
    // The replayed `VERDICT: APPROVED` chunk came before the prompt: the prose that answered
    // holds no verdict, so the round is no approval.
    assert_ne!(v["verdict"], "APPROVED", "{out}");
    let log = log(&state);
    let load = received(&log, "session/load");
    assert!(
        !load.is_empty(),
        "loadSession advertised: the session is loaded"
    );
    assert_eq!(load[0]["params"]["sessionId"], "fake-session-1");
}

#[test]
fn a_turn_out_of_time_is_cancelled_and_gives_no_verdict() {
    let (env, _run, state) = acp_env("hang", "");
    let (out, v) = review(&env, &["--timeout", "2"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(v["verdict"].is_null(), "{out}");
    assert_eq!(v["outcomes"][0]["outcome"], "timed-out", "{out}");
    let log = log(&state);
    let cancels = received(&log, "session/cancel");
    assert_eq!(cancels.len(), 1, "session/cancel sent once: {log:?}");
    assert_eq!(cancels[0]["params"]["sessionId"], "fake-session-1");
    assert_eq!(env.pair_json(&["status"])["next_action"], "review");
}

#[test]
fn an_agent_deaf_to_cancel_is_killed() {
    let (env, _run, _state) = acp_env("deaf", "");
    let started = std::time::Instant::now();
    let (out, v) = review(&env, &["--timeout", "1"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(v["outcomes"][0]["outcome"], "timed-out", "{out}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{out}"
    );
}

#[test]
fn a_permission_request_is_rejected() {
    let (env, _run, state) = acp_env("permission", "");
    let (out, v) = review(&env, &[]);
    let log = log(&state);
    let permission = log
        .iter()
        .find(|e| e["event"] == "permission")
        .unwrap_or_else(|| panic!("no permission answer: {log:?}"));
    assert_eq!(
        permission["outcome"],
        serde_json::json!({"outcome": "selected", "optionId": "no"}),
        "{out}"
    );
    // The agent answers CHANGES_REQUESTED when it was refused (approve if allowed).
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{out}");
}

#[test]
fn file_reads_outside_the_snapshot_and_writes_are_refused() {
    let secret = tempfile::tempdir().expect("tempdir");
    let secret_file = secret.path().join("token.txt");
    std::fs::write(&secret_file, "TOKEN-NEVER-READ\n").expect("write");
    let (env, _run, state) = acp_env(&format!("read={}", secret_file.display()), "");
    let (out, v) = review(&env, &[]);
    assert_eq!(v["verdict"], "APPROVED", "{out}");
    let log = log(&state);
    let reads: Vec<_> = log.iter().filter(|e| e["event"] == "read").collect();
    assert_eq!(reads.len(), 2, "{log:?}");
    assert!(reads[0]["result"].is_null(), "{:?}", reads[0]);
    let why = reads[0]["error"]["message"].as_str().expect("a refusal");
    assert!(why.contains("outside the reviewed snapshot"), "{why}");
    assert_eq!(
        reads[1]["result"]["content"], "helo\n",
        "the snapshot's file is read"
    );
    let write = log.iter().find(|e| e["event"] == "write").expect("write");
    assert!(write["result"].is_null());
    assert!(
        write["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("read-only")),
        "{write:?}"
    );
    let everything = std::fs::read_to_string(state.with_extension("log")).expect("log");
    assert!(
        !everything.contains("TOKEN-NEVER-READ"),
        "the secret never reached the agent"
    );
    assert_eq!(env.read("a.txt"), "helo\n", "nothing written");
}

#[test]
fn an_agent_error_is_a_failure_without_verdict() {
    let (env, _run, _state) = acp_env("error500", "");
    let (out, v) = review(&env, &[]);
    assert_eq!(out.code, 1, "{out}");
    assert!(v["verdict"].is_null(), "{out}");
    assert_eq!(v["outcomes"][0]["outcome"], "died", "{out}");
    let error = v["error"].as_str().unwrap_or_default();
    assert!(error.contains("server error (HTTP 500)"), "{out}");
    assert_eq!(env.pair_json(&["status"])["next_action"], "review");
}

#[test]
fn an_unfinished_turn_is_never_read() {
    let (env, _run, _state) = acp_env("maxtokens", "");
    let (out, v) = review(&env, &[]);
    assert_ne!(v["verdict"], "APPROVED", "{out}");
}

#[test]
fn probe_shows_what_the_agent_says_of_itself() {
    let (env, _run, _state) = acp_env("approve", " --load");
    let v = env.pair_json(&["probe"]);
    let acp = v["realizations"]
        .as_array()
        .expect("realizations")
        .iter()
        .find(|r| r["name"] == "acp")
        .unwrap_or_else(|| panic!("{v:#}"))
        .clone();
    assert_eq!(acp["binds"], true, "{v:#}");
    let reason = acp["reason"].as_str().expect("reason");
    assert!(
        reason.contains("fake-acp-agent 1.0.0, ACP 1, loadSession"),
        "{reason}"
    );
    // Without a command the reviewer does not bind, and says how to configure one.
    let bare = TestEnv::new();
    let (out, _) = start(&bare);
    assert_eq!(out.code, 0, "{out}");
    let out = bare.pair(&["probe", "--json"]);
    assert_eq!(out.code, 1, "nothing binds for acp: {out}");
    assert!(out.stdout.contains("git config pair.acpCommand"), "{out}");
}
