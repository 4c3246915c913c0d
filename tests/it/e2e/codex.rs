//! `git pair` with `--reviewer codex` through the real, pinned `codex exec`.

use std::time::{Duration, Instant};

use serde_json::json;

use super::server::{Reply, Step};
use super::{E2e, Output, Vendor, cli_dir};

const FINDING: &str = "the greeting misses its name";

fn changes() -> Step {
    Reply::Json(json!({"verdict": "CHANGES_REQUESTED", "findings": [
        {"category": "bug", "severity": "high", "location": "greet.txt:1", "text": FINDING}]}))
    .into()
}

fn approve() -> Step {
    Reply::Json(json!({"verdict": "APPROVED", "findings": []})).into()
}

fn round_one(script: Vec<Step>, fallback: Option<Step>) -> Option<(E2e, String)> {
    let e = E2e::new(Vendor::Codex, script, fallback)?;
    let run = e.start();
    e.code("greet.txt", "hello\n", "add a greeting");
    Some((e, run))
}

#[test]
fn codex_reviews_two_rounds_resuming_its_thread_then_approves() {
    let Some((e, run)) = round_one(vec![changes(), approve()], None) else {
        return;
    };
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v:#}");
    assert_eq!(v["findings"][0]["text"], FINDING, "{v:#}");
    assert_eq!(v["next_action"], "code", "{v:#}");
    let first = E2e::session_of(&v);

    // What codex exec sent: the Responses API, streaming, with git pair's output schema.
    let calls = e.server.model_calls();
    assert_eq!(calls.len(), 1, "one model turn for one answer");
    assert_eq!(calls[0].path, "/v1/responses");
    assert_eq!(calls[0].body["stream"], true);
    assert_eq!(
        calls[0].body["text"]["format"]["type"], "json_schema",
        "--output-schema reached the request: {:#}",
        calls[0].body["text"]
    );
    assert_eq!(calls[0].header("authorization"), Some("Bearer test"));
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
        "round 2 resumed round 1's thread"
    );
    let texts = e.call_texts();
    assert_eq!(texts.len(), 2, "one model turn per round");
    assert!(
        texts[1].contains(&format!("git-pair: {run}/1/"))
            && texts[1].contains(&format!("git-pair: {run}/2/")),
        "the resumed turn resends round 1's prompt:\n{}",
        texts[1]
    );

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
fn codex_falls_back_to_a_fresh_thread_when_its_rollout_is_gone() {
    let Some((e, run)) = round_one(vec![changes(), approve()], None) else {
        return;
    };
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    let first = E2e::session_of(&v);
    let rollouts = E2e::files_named(&e.env.home.join(".codex/sessions"), &first);
    assert_eq!(rollouts.len(), 1, "codex wrote one rollout for the thread");
    std::fs::remove_file(&rollouts[0]).expect("remove the rollout");

    e.code("greet.txt", "hello, name\n", "name the greeting");
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    assert_ne!(E2e::session_of(&v), first, "a fresh thread");
    let texts = e.call_texts();
    assert_eq!(texts.len(), 2, "the failed resume never reached the model");
    assert!(
        !texts[1].contains(&format!("git-pair: {run}/1/"))
            && texts[1].contains(&format!("git-pair: {run}/2/")),
        "a fresh thread starts without round 1's turn:\n{}",
        texts[1]
    );
}

#[test]
fn codex_text_answer_is_read_too() {
    let text =
        format!("1. [bug] [severity: high] greet.txt:1 — {FINDING}\nVERDICT: CHANGES_REQUESTED");
    let Some((e, _run)) = round_one(vec![Reply::Text(text).into()], None) else {
        return;
    };
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v:#}");
    assert_eq!(v["findings"][0]["location"], "greet.txt:1", "{v:#}");
}

/// A review against a server that fails every model call with `reply`, Codex's own retries
/// off; returns the env, the report and the wall time.
fn failing(reply: Reply, extra: &[&str]) -> Option<(E2e, Output, serde_json::Value, Duration)> {
    let (e, _run) = round_one(Vec::new(), Some(reply.into()))?;
    e.codex_config(0, 0, 300_000);
    let began = Instant::now();
    let (out, v) = e.review(extra);
    Some((e, out, v, began.elapsed()))
}

#[test]
fn codex_401_fails_closed() {
    let Some((e, out, v, _)) = failing(Reply::Status(401), &[]) else {
        return;
    };
    e.assert_fail_closed(&out, &v);
}

#[test]
fn codex_401_is_an_authentication_failure_asked_once() {
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
fn codex_500_fails_closed() {
    let Some((e, out, v, _)) = failing(Reply::Status(500), &[]) else {
        return;
    };
    e.assert_fail_closed(&out, &v);
}

#[test]
fn codex_500_is_a_server_error_not_retried_after_the_cli_gave_up() {
    let Some((e, out, v, _)) = failing(Reply::Status(500), &[]) else {
        return;
    };
    e.assert_fail_closed(&out, &v);
    let message = v["error"].as_str().unwrap_or_default().to_lowercase();
    assert!(message.contains("server error"), "{out}");
    assert_eq!(
        e.server.model_calls().len(),
        1,
        "codex's chain only:\n{out}"
    );
}

#[test]
fn codex_dropped_stream_fails_closed() {
    let Some((e, out, v, _)) = failing(Reply::Drop, &[]) else {
        return;
    };
    e.assert_fail_closed(&out, &v);
}

#[test]
fn codex_stalled_stream_times_out_fail_closed() {
    let Some((e, out, v, _)) = failing(Reply::Stall, &["--timeout", "4"]) else {
        return;
    };
    e.assert_fail_closed(&out, &v);
    assert_eq!(v["outcome"], "timed-out", "{out}");
}

#[test]
fn codex_stalled_stream_is_bounded_by_the_whole_review_timeout() {
    let Some((e, out, v, took)) = failing(Reply::Stall, &["--timeout", "4"]) else {
        return;
    };
    e.assert_fail_closed(&out, &v);
    assert!(
        took < Duration::from_secs(7),
        "--timeout bounds every attempt together: {took:?}"
    );
    let message = v["error"].as_str().unwrap_or_default().to_lowercase();
    assert!(message.contains("timed out"), "{out}");
}

#[test]
fn codex_warning_items_never_replace_the_timeout_message() {
    let Some((e, _run)) = round_one(Vec::new(), Some(Reply::Stall.into())) else {
        return;
    };
    // A model Codex has no metadata for: it emits the "Model metadata … not found" warning.
    e.codex_config_with_model(0, 0, 300_000, Some("gpt-5-codex"));
    let (out, v) = e.review(&["--timeout", "4"]);
    e.assert_fail_closed(&out, &v);
    let message = v["error"].as_str().unwrap_or_default();
    assert!(message.to_lowercase().contains("timed out"), "{out}");
    // The warning may follow as detail, never before or instead of what happened.
    let timed_out = message.find("timed out").expect("said above");
    assert!(
        message
            .find("Model metadata")
            .is_none_or(|at| at > timed_out && message[..at].contains("the CLI also warned")),
        "a vendor warning stands in for git pair's message:\n{out}"
    );
}

#[test]
fn codex_empty_answer_fails_closed() {
    let Some((e, out, v, _)) = failing(Reply::Empty, &[]) else {
        return;
    };
    assert_ne!(v["verdict"], "APPROVED", "{out}");
    if out.code == 0 {
        assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{out}");
        assert_eq!(v["findings"][0]["category"], "process", "{out}");
    } else {
        e.assert_fail_closed(&out, &v);
    }
}

#[test]
fn codex_empty_answer_is_asked_again_and_the_second_answer_counts() {
    let Some((e, _run)) = round_one(vec![Reply::Empty.into(), approve()], None) else {
        return;
    };
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    assert_eq!(e.server.model_calls().len(), 2, "one more invocation");
}

#[test]
fn codex_json_finding_without_severity_or_location_and_an_extra_key_is_kept() {
    // The second finding has neither `severity` nor `location` (both optional in SPEC) and a
    // key of its own: it is kept as it is, not re-asked. (A CHANGES_REQUESTED whose findings
    // ALL lack a severity is format drift and is asked again: issue 21's rule.)
    let answer = Reply::Json(json!({"verdict": "CHANGES_REQUESTED", "findings": [
        {"category": "bug", "severity": "high", "location": "greet.txt:1", "text": FINDING},
        {"category": "style", "text": "name the greeting", "confidence": "high"}]}));
    let Some((e, _run)) = round_one(vec![answer.into()], None) else {
        return;
    };
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v:#}");
    assert_eq!(v["findings"][1]["text"], "name the greeting", "kept: {v:#}");
    assert_eq!(v["findings"][1]["location"], "", "{v:#}");
    assert!(v["findings"][1]["severity"].is_null(), "{v:#}");
    assert_eq!(
        e.server.model_calls().len(),
        1,
        "accepted as it is, not re-asked"
    );
}

fn spend_with(model: Option<&str>) -> Option<(E2e, serde_json::Value, serde_json::Value)> {
    let (e, _run) = round_one(vec![changes().usage(1000, 100)], None)?;
    if let Some(model) = model {
        e.codex_config_with_model(4, 4, 300_000, Some(model));
    }
    let (out, _) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    let (out, cost) = e.pair_json(&["cost"]);
    assert_eq!(out.code, 0, "{out}");
    let (_, status) = e.pair_json(&["status"]);
    Some((e, cost, status))
}

/// gpt-5.2 at $1.75 / $14 per Mtok in / out for 1000 in, 100 out.
const GPT_5_2_SPEND: f64 = 1000.0 * 1.75 / 1e6 + 100.0 * 14.0 / 1e6;

#[test]
fn codex_review_cost_comes_from_its_real_rollout() {
    let Some((_e, cost, status)) = spend_with(Some("gpt-5.2")) else {
        return;
    };
    super::assert_spend(&cost, &status, GPT_5_2_SPEND);
}

#[test]
fn codex_default_model_is_priced() {
    let Some((e, _run)) = round_one(vec![changes()], None) else {
        return;
    };
    let (out, _) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    super::assert_default_model_priced(&e);
}

#[test]
fn codex_runs_the_shell_command_a_function_call_asks_for() {
    let Some(cli) = cli_dir() else {
        return;
    };
    let e = E2e::new(
        Vendor::Codex,
        vec![
            Reply::Shell("echo ran > marker.txt".to_owned()).into(),
            Reply::Text("Done.".to_owned()).into(),
        ],
        None,
    )
    .expect("cli present");
    // A model Codex offers its shell tool to (its default model gets no tools offline).
    e.codex_config_with_model(4, 4, 300_000, Some("gpt-5.2"));
    let out = e.run_cli(
        &cli.join("codex"),
        &[
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--sandbox",
            "workspace-write",
            "-",
        ],
        "make the marker",
    );
    assert_eq!(out.code, 0, "{out}");
    let calls = e.server.model_calls();
    assert!(
        calls[0].tool_names().contains(&"exec_command".to_owned()),
        "{:?}",
        calls[0].tool_names()
    );
    assert_eq!(e.env.read("marker.txt"), "ran\n", "{out}");
    assert_eq!(calls.len(), 2, "the tool output went back to the model");
}

#[test]
fn codex_reviewer_starts_none_of_the_users_mcp_servers() {
    let Some((e, _run)) = round_one(vec![changes()], None) else {
        return;
    };
    let markers = [
        e.env.home.join("mcp-one-ran"),
        e.env.home.join("mcp-two-ran"),
    ];
    let config = e.env.home.join(".codex/config.toml");
    let mut text = std::fs::read_to_string(&config).expect("config.toml");
    text.push_str(&format!(
        "\n[mcp_servers.one]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"touch {}\"]\n\n[mcp_servers.\"two-b\"]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"touch {}\"]\n\n[mcp_servers.\"two-b\".env]\nX = \"1\"\n",
        markers[0].display(),
        markers[1].display()
    ));
    std::fs::write(&config, text).expect("config.toml");
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v:#}");
    for marker in &markers {
        assert!(
            !marker.exists(),
            "the user's MCP server {} started inside the reviewer",
            marker.display()
        );
    }
}

#[test]
fn codex_asks_the_server_for_the_chosen_model_and_effort() {
    let Some((e, _)) = round_one(vec![approve()], None) else {
        return;
    };
    e.env.git(&["config", "pair.reviewerEffort", "high"]);
    let (out, v) = e.review(&["--model", "gpt-5.2"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(
        (v["model"].as_str(), v["effort"].as_str()),
        (Some("gpt-5.2"), Some("high"))
    );
    let calls = e.server.model_calls();
    assert_eq!(calls[0].model(), Some("gpt-5.2"), "{:#}", calls[0].body);
    assert_eq!(
        calls[0].body["reasoning"]["effort"], "high",
        "model_reasoning_effort reached the request: {:#}",
        calls[0].body["reasoning"]
    );
}
