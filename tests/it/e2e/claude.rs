//! `git pair` with `--reviewer claude` through the real, pinned `claude -p`.

use std::time::{Duration, Instant};

use serde_json::json;

use super::server::{Reply, Step};
use super::{E2e, Vendor, cli_dir};

const FINDING: &str = "the greeting misses its name";

fn changes() -> Step {
    Reply::Json(json!({"verdict": "CHANGES_REQUESTED", "findings": [
        {"category": "bug", "severity": "high", "location": "greet.txt:1", "text": FINDING}]}))
    .into()
}

fn approve() -> Step {
    Reply::Json(json!({"verdict": "APPROVED", "findings": []})).into()
}

/// A run with one coder round, reviewed by a server playing `script` then `fallback`.
fn round_one(script: Vec<Step>, fallback: Option<Step>) -> Option<(E2e, String)> {
    let e = E2e::new(Vendor::Claude, script, fallback)?;
    let run = e.start();
    e.code("greet.txt", "hello\n", "add a greeting");
    Some((e, run))
}

#[test]
fn claude_reviews_two_rounds_resuming_its_session_then_approves() {
    let Some((e, run)) = round_one(vec![changes(), approve()], None) else {
        return;
    };
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v:#}");
    assert_eq!(v["findings"][0]["text"], FINDING, "{v:#}");
    assert_eq!(v["findings"][0]["severity"], "high", "{v:#}");
    assert_eq!(v["next_action"], "code", "{v:#}");
    let first = E2e::session_of(&v);

    // What claude -p sent: the packet with its attempt marker, through the StructuredOutput tool.
    let calls = e.server.model_calls();
    assert_eq!(calls.len(), 1, "one model turn for one answer");
    assert!(
        calls[0].path.starts_with("/v1/messages"),
        "{}",
        calls[0].path
    );
    assert!(
        calls[0]
            .tool_names()
            .contains(&"StructuredOutput".to_owned())
    );
    let prompt = calls[0].all_text();
    assert!(prompt.contains(&format!("git-pair: {run}/1/")), "{prompt}");
    assert!(prompt.contains("greet.txt"), "{prompt}");

    e.code("greet.txt", "hello, name\n", "name the greeting");
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    assert_eq!(v["next_action"], "finish", "{v:#}");
    assert_eq!(
        E2e::session_of(&v),
        first,
        "round 2 resumed round 1's session"
    );
    let texts = e.call_texts();
    assert_eq!(texts.len(), 2, "one model turn per round");
    assert!(
        texts[1].contains(FINDING) && texts[1].contains(&format!("git-pair: {run}/1/")),
        "the resumed turn resends round 1's prompt and answer:\n{}",
        texts[1]
    );

    // Stored state, read with real git.
    let records = e.records(&run);
    assert!(
        records.len() >= 4,
        "coder and reviewer records of two rounds: {records:?}"
    );
    let status = e.env.pair_json(&["status"]);
    assert_eq!(status["last_verdict"], "APPROVED", "{status:#}");
    assert_eq!(status["round"], 2, "{status:#}");
    let note = e.commit_finish_and_note();
    assert!(
        note.contains(&run) && note.contains("verdict=APPROVED"),
        "{note}"
    );
}

#[test]
fn claude_falls_back_to_a_fresh_session_when_its_session_is_gone() {
    let Some((e, run)) = round_one(vec![changes(), approve()], None) else {
        return;
    };
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    let first = E2e::session_of(&v);
    let logs = E2e::files_named(&e.env.home.join(".claude/projects"), &first);
    assert!(!logs.is_empty(), "claude wrote its session log");
    for log in logs {
        std::fs::remove_file(log).expect("remove the session log");
    }

    e.code("greet.txt", "hello, name\n", "name the greeting");
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    assert_ne!(E2e::session_of(&v), first, "a fresh session");
    let texts = e.call_texts();
    assert_eq!(texts.len(), 2, "the failed resume never reached the model");
    let round_one_marker = format!("git-pair: {run}/1/");
    assert!(
        !texts[1].contains(&round_one_marker) && texts[1].contains(&format!("git-pair: {run}/2/")),
        "a fresh session starts without round 1's turn:\n{}",
        texts[1]
    );
}

#[test]
fn claude_is_made_to_answer_through_structured_output() {
    let text = Step::from(Reply::Text("VERDICT: APPROVED".to_owned()));
    let Some((e, _run)) = round_one(vec![text, approve()], None) else {
        return;
    };
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    let texts = e.call_texts();
    assert_eq!(texts.len(), 2, "claude's own enforce turn");
    assert!(texts[1].contains("StructuredOutput"), "{}", texts[1]);
}

#[test]
fn claude_structured_output_that_breaks_the_schema_fails_closed() {
    let bad = Reply::Tool("StructuredOutput".to_owned(), json!({"verdict": "LGTM"}));
    let Some((e, _run)) = round_one(Vec::new(), Some(bad.into())) else {
        return;
    };
    let (out, v) = e.review(&[]);
    assert_ne!(v["verdict"], "APPROVED", "{out}");
    if out.code == 0 {
        assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{out}");
        assert_eq!(v["findings"][0]["category"], "process", "{out}");
    } else {
        e.assert_fail_closed(&out, &v);
    }
    assert!(
        e.server.model_calls().len() > 1,
        "claude rejected the tool input and asked again"
    );
}

#[test]
fn claude_retries_a_429_itself_and_the_review_completes() {
    let Some((mut e, _run)) = round_one(vec![Reply::Status(429).into(), changes()], None) else {
        return;
    };
    e.set_env("CLAUDE_CODE_MAX_RETRIES", "1");
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v:#}");
    assert_eq!(
        e.server.model_calls().len(),
        2,
        "one 429, one retry by claude"
    );
}

/// A review against a server that fails every model call with `reply`, claude's own retries
/// off; returns the env, the report and the wall time.
fn failing(
    reply: Reply,
    extra: &[&str],
) -> Option<(E2e, super::Output, serde_json::Value, Duration)> {
    let (mut e, _run) = round_one(Vec::new(), Some(reply.into()))?;
    e.set_env("CLAUDE_CODE_MAX_RETRIES", "0");
    let began = Instant::now();
    let (out, v) = e.review(extra);
    Some((e, out, v, began.elapsed()))
}

#[test]
fn claude_401_fails_closed() {
    let Some((e, out, v, _)) = failing(Reply::Status(401), &[]) else {
        return;
    };
    e.assert_fail_closed(&out, &v);
}

#[test]
fn claude_401_is_an_authentication_failure_asked_once() {
    let Some((e, out, v, _)) = failing(Reply::Status(401), &[]) else {
        return;
    };
    e.assert_fail_closed(&out, &v);
    let message = v["error"].as_str().unwrap_or_default().to_lowercase();
    assert!(message.contains("authentication"), "{out}");
    assert_eq!(
        e.server.model_calls().len(),
        1,
        "no retry after an auth failure:\n{out}"
    );
}

#[test]
fn claude_500_fails_closed() {
    let Some((e, out, v, _)) = failing(Reply::Status(500), &[]) else {
        return;
    };
    e.assert_fail_closed(&out, &v);
}

#[test]
fn claude_500_is_a_server_error_not_retried_after_the_cli_gave_up() {
    let Some((e, out, v, _)) = failing(Reply::Status(500), &[]) else {
        return;
    };
    e.assert_fail_closed(&out, &v);
    let message = v["error"].as_str().unwrap_or_default().to_lowercase();
    assert!(message.contains("server error"), "{out}");
    assert_eq!(
        e.server.model_calls().len(),
        1,
        "claude's chain only:\n{out}"
    );
}

#[test]
fn claude_dropped_stream_fails_closed() {
    let Some((e, out, v, _)) = failing(Reply::Drop, &[]) else {
        return;
    };
    e.assert_fail_closed(&out, &v);
    let calls = e.server.model_calls();
    assert!(
        calls.iter().any(|c| c.body["stream"] != true),
        "claude retried the dropped stream without streaming"
    );
}

#[test]
fn claude_stalled_stream_times_out_fail_closed() {
    let Some((e, out, v, _)) = failing(Reply::Stall, &["--timeout", "4"]) else {
        return;
    };
    e.assert_fail_closed(&out, &v);
    assert_eq!(v["outcome"], "timed-out", "{out}");
}

#[test]
fn claude_stalled_stream_is_bounded_by_the_whole_review_timeout() {
    // A timeout per attempt would take two attempts, 16 s and more; the whole review's bound
    // is 8 s plus the 3 s kill grace, with room for a loaded machine.
    let Some((e, out, v, took)) = failing(Reply::Stall, &["--timeout", "8"]) else {
        return;
    };
    e.assert_fail_closed(&out, &v);
    assert!(
        took < Duration::from_secs(13),
        "--timeout bounds every attempt together: {took:?}"
    );
    let message = v["error"].as_str().unwrap_or_default().to_lowercase();
    assert!(message.contains("timed out"), "{out}");
}

#[test]
fn claude_empty_answer_fails_closed() {
    let Some((e, out, v, _)) = failing(Reply::Empty, &[]) else {
        return;
    };
    assert_ne!(v["verdict"], "APPROVED", "{out}");
    if out.code == 0 {
        // Read as no verdict: recorded CHANGES_REQUESTED with a [process] finding.
        assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{out}");
        assert_eq!(v["findings"][0]["category"], "process", "{out}");
    } else {
        e.assert_fail_closed(&out, &v);
    }
}

/// Spend after one real review whose answer reports `model` and 1000 in / 100 out tokens.
fn spend_with(model: Option<&str>) -> Option<(E2e, serde_json::Value, serde_json::Value)> {
    let mut step = changes().usage(1000, 100);
    if let Some(model) = model {
        step = step.model(model);
    }
    let (e, _run) = round_one(vec![step], None)?;
    let (out, _) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    let (out, cost) = e.pair_json(&["cost"]);
    assert_eq!(out.code, 0, "{out}");
    let (_, status) = e.pair_json(&["status"]);
    Some((e, cost, status))
}

/// $5 / $25 per Mtok in / out (Opus 4.5 and later) for 1000 in, 100 out.
const OPUS_SPEND: f64 = 1000.0 * 5.0 / 1e6 + 100.0 * 25.0 / 1e6;

#[test]
fn claude_review_cost_comes_from_its_real_session_log() {
    let Some((_e, cost, status)) = spend_with(Some("claude-opus-4-7")) else {
        return;
    };
    super::assert_spend(&cost, &status, OPUS_SPEND);
}

#[test]
fn claude_review_cost_with_the_cli_default_model_is_priced() {
    let Some((_e, cost, status)) = spend_with(None) else {
        return;
    };
    super::assert_spend(&cost, &status, OPUS_SPEND);
}

#[test]
fn claude_reviewer_on_a_model_we_do_not_price_counts_the_clis_own_cost() {
    // The price table has no `claude-unreleased-9`, but `claude -p` reports what it charged
    // (`total_cost_usd`): the reviewer session is recorded at that figure, never at $0.
    let Some((_e, cost, status)) = spend_with(Some("claude-unreleased-9")) else {
        return;
    };
    let text = format!("{cost}");
    assert!(!text.contains("-0.0"), "{cost:#}");
    let spent = status["spent_usd"].as_f64().expect("a figure");
    assert!(spent > 0.0, "{status:#}");
    assert_eq!(
        cost["runs"][0]["spent_usd"].as_f64(),
        Some(spent),
        "{cost:#}"
    );
}

#[test]
fn claude_default_model_is_priced() {
    let Some((e, _run)) = round_one(vec![changes()], None) else {
        return;
    };
    let (out, _) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    super::assert_default_model_priced(&e);
}

#[test]
fn claude_runs_the_shell_command_a_tool_call_asks_for() {
    let Some(cli) = cli_dir() else {
        return;
    };
    let e = E2e::new(
        Vendor::Claude,
        vec![
            Reply::Shell("echo ran > marker.txt".to_owned()).into(),
            Reply::Text("Done.".to_owned()).into(),
        ],
        None,
    )
    .expect("cli present");
    let out = e.run_cli(
        &cli.join("claude"),
        &["-p", "--output-format", "json", "--allowedTools", "Bash"],
        "make the marker",
    );
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(e.env.read("marker.txt"), "ran\n", "{out}");
    let texts = e.call_texts();
    assert_eq!(texts.len(), 2, "the tool result went back to the model");
    assert!(texts[0].contains("make the marker"));
    let calls = e.server.model_calls();
    assert!(calls[0].tool_names().contains(&"Bash".to_owned()));
}

#[test]
fn claude_reviewer_runs_without_the_users_hooks() {
    let Some((e, _run)) = round_one(vec![changes()], None) else {
        return;
    };
    let marker = e.env.home.join("user-stop-hook-fired");
    let settings = json!({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": format!("touch {}", marker.display())}]}]}});
    std::fs::write(
        e.env.home.join(".claude/settings.json"),
        settings.to_string(),
    )
    .expect("settings.json");
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v:#}");
    assert!(
        !marker.exists(),
        "the user's Stop hook fired inside the reviewer"
    );
}

#[test]
fn claude_reviewer_session_is_never_taken_for_the_coders() {
    let Some(mut e) = E2e::new(Vendor::Claude, vec![changes()], None) else {
        return;
    };
    // The real clock: the session logs claude writes carry real times.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    e.set_env("GIT_PAIR_NOW", &(now - 60).to_string());
    e.start();
    e.code("greet.txt", "hello\n", "add a greeting");
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    let reviewer = E2e::session_of(&v);
    e.code("greet.txt", "hello, name\n", "name the greeting");
    let (out, cost) = e.pair_json(&["cost"]);
    assert_eq!(out.code, 0, "{out}");
    let sessions = cost["runs"][0]["sessions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        sessions
            .iter()
            .all(|s| s["role"] != "coder" || s["session_id"] != reviewer.as_str()),
        "coder-done without --session recorded the reviewer's session as the coder's: {cost:#}"
    );
}

/// The text of every tool result claude sent back to the model, in order.
fn tool_results(e: &E2e) -> Vec<String> {
    let mut out = Vec::new();
    for call in e.server.model_calls() {
        for message in call.body["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    out.push(block["content"].to_string());
                }
            }
        }
    }
    out
}

#[test]
fn claude_reviewer_cannot_read_ignored_files_and_still_resumes_its_session() {
    const SECRET: &str = "e2e-ignored-secret-4711";
    let Some(e) = E2e::new(Vendor::Claude, Vec::new(), None) else {
        return;
    };
    let run = e.start();
    e.env.write(".gitignore", ".env\n");
    e.env.write(".env", &format!("TOKEN={SECRET}\n"));
    e.code("greet.txt", "hello\n", "add a greeting");
    let env_file = e.env.repo.join(".env");
    let read_env = || -> Step {
        Reply::Tool(
            "Read".to_owned(),
            json!({"file_path": env_file.display().to_string()}),
        )
        .into()
    };
    let glob = || -> Step { Reply::Tool("Glob".to_owned(), json!({"pattern": "**/*"})).into() };
    e.server
        .push_script(vec![read_env(), glob(), changes(), read_env(), approve()]);

    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v:#}");
    let first = E2e::session_of(&v);
    let results = tool_results(&e);
    assert!(results.len() >= 2, "claude ran both tools: {results:?}");
    assert!(
        results.iter().all(|r| !r.contains(SECRET)),
        "the reviewer read the ignored .env: {results:?}"
    );
    let listing = results.last().cloned().unwrap_or_default();
    assert!(
        listing.contains("greet.txt") && !listing.contains(".env"),
        "the reviewer's directory holds the reviewed snapshot only: {listing}"
    );

    e.code("greet.txt", "hello, name\n", "name the greeting");
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    assert_eq!(
        E2e::session_of(&v),
        first,
        "round 2 resumed round 1's session"
    );
    let texts = e.call_texts();
    assert!(
        texts
            .last()
            .is_some_and(|t| t.contains(FINDING) && t.contains(&format!("git-pair: {run}/1/"))),
        "the resumed turn resends round 1's prompt and answer"
    );
    assert!(
        tool_results(&e).iter().all(|r| !r.contains(SECRET)),
        "the resumed reviewer read the ignored .env"
    );
    // ~/.cache/git-pair/reviewers/<repo>/<run>: no run's directory is left.
    let repos = e.env.home.join(".cache/git-pair/reviewers");
    let left: Vec<_> = std::fs::read_dir(&repos)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|repo| {
            std::fs::read_dir(repo.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|run| run.path())
        .collect();
    assert!(
        left.is_empty(),
        "the reviewer's directory is removed after the round: {left:?}"
    );
}

/// The snapshot is the coder's work: a `.claude/settings.json` in it (allow every read,
/// bypass permissions) must not widen what the reviewer may read outside its directory.
#[test]
fn claude_reviewer_ignores_project_settings_from_the_snapshot() {
    const SECRET: &str = "e2e-outside-secret-0815";
    let Some(e) = E2e::new(Vendor::Claude, Vec::new(), None) else {
        return;
    };
    e.start();
    let outside = e.env.home.join("credentials.txt");
    std::fs::write(&outside, format!("KEY={SECRET}\n")).expect("write the outside file");
    e.env.write(
        ".claude/settings.json",
        r#"{"permissions":{"allow":["Read(//**)","Read(/**)","Read(~/**)"],"defaultMode":"bypassPermissions"}}"#,
    );
    e.code(
        "greet.txt",
        "hello\n",
        "add a greeting and project settings",
    );
    e.server.push_script(vec![
        Reply::Tool(
            "Read".to_owned(),
            json!({"file_path": outside.display().to_string()}),
        )
        .into(),
        changes(),
    ]);
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v:#}");
    let results = tool_results(&e);
    assert!(!results.is_empty(), "claude ran the tool");
    assert!(
        results.iter().all(|r| !r.contains(SECRET)),
        "the snapshot's project settings let the reviewer read outside: {results:?}"
    );

    // The same rules from the user's own settings do grant the read: the rules are good,
    // only where they came from kept them out.
    std::fs::create_dir_all(e.env.home.join(".claude")).expect("user settings dir");
    std::fs::write(
        e.env.home.join(".claude/settings.json"),
        r#"{"permissions":{"allow":["Read(//**)","Read(~/**)"]}}"#,
    )
    .expect("user settings");
    e.code("greet.txt", "hello, name\n", "name the greeting");
    e.server.push_script(vec![
        Reply::Tool(
            "Read".to_owned(),
            json!({"file_path": outside.display().to_string()}),
        )
        .into(),
        approve(),
    ]);
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    assert!(
        tool_results(&e).iter().any(|r| r.contains(SECRET)),
        "the user's own allow rule grants the read (the control case)"
    );
}

#[test]
fn claude_own_retries_show_as_progress_on_a_terminal() {
    let script = vec![
        Reply::Status(429).into(),
        Reply::Status(500).into(),
        changes(),
    ];
    let Some((mut e, _run)) = round_one(script, None) else {
        return;
    };
    e.set_env("CLAUDE_CODE_MAX_RETRIES", "2");
    let Some(out) = e.pair_on_terminal(&["review"]) else {
        eprintln!("e2e: no util-linux script for a terminal; skipped");
        return;
    };
    assert_eq!(out.code, 0, "{out}");
    let shown = format!("{}{}", out.stdout, out.stderr);
    for line in [
        "claude: retrying (1 of 2) after rate_limit (HTTP 429)",
        "claude: retrying (2 of 2) after server_error (HTTP 500)",
    ] {
        assert!(shown.contains(line), "{line:?} not shown:\n{shown}");
    }
    assert!(
        shown.contains(FINDING),
        "the answer is read from the result: {shown}"
    );
    assert_eq!(e.server.model_calls().len(), 3, "claude's own chain only");
}

#[test]
fn claude_asks_the_server_for_the_chosen_model() {
    let Some((e, _)) = round_one(vec![approve()], None) else {
        return;
    };
    let (out, v) = e.review(&["--model", "claude-sonnet-4-5", "--effort", "high"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["model"], "claude-sonnet-4-5", "{v:#}");
    let calls = e.server.model_calls();
    assert!(
        calls.iter().any(|c| c.model() == Some("claude-sonnet-4-5")),
        "{:#?}",
        calls.iter().map(|c| c.model()).collect::<Vec<_>>()
    );
}
