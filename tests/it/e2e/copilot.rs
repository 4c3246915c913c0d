//! `git pair` with `--reviewer copilot` through the real, pinned GitHub Copilot CLI, in its
//! offline BYOK mode (`COPILOT_PROVIDER_BASE_URL` at the loopback server's chat completions,
//! `COPILOT_OFFLINE=true`, `COPILOT_MODEL`): no GitHub sign-in, nothing leaves 127.0.0.1.

use super::server::Reply;
use super::{Vendor, assert_never_approves, assert_resumed, two_rounds};

#[test]
fn copilot_reviews_two_rounds_resuming_its_session_then_approves() {
    let Some((e, run, first, second)) = two_rounds(Vendor::Copilot) else {
        return;
    };
    let calls = e.server.model_calls();
    assert_eq!(calls[0].path, "/v1/chat/completions");
    assert_eq!(calls[0].model(), Some("gpt-5.4"));
    // Only the read-only tools are offered.
    let tools = calls[0].tool_names();
    assert!(
        tools
            .iter()
            .all(|t| ["view", "rg", "glob"].contains(&t.as_str())),
        "{tools:?}"
    );
    assert_resumed(&e, &run, &first, &second);
    // Priced from its own session events (~/.copilot/session-state/<id>/events.jsonl, whose
    // `cost` is 0 for a BYOK provider): two requests of 1000 in / 100 out on gpt-5.4
    // ($2.50 / $15 per Mtok in the shipped table).
    let (out, cost) = e.pair_json(&["cost"]);
    assert_eq!(out.code, 0, "{out}");
    let (_, status) = e.pair_json(&["status"]);
    super::assert_spend(&cost, &status, 2.0 * (1000.0 * 2.5 + 100.0 * 15.0) / 1e6);
}

#[test]
fn copilot_empty_answer_never_approves() {
    assert_never_approves(Vendor::Copilot, Reply::Empty);
}

#[test]
fn copilot_401_fails_closed() {
    assert_never_approves(Vendor::Copilot, Reply::Status(401));
}

/// The snapshot's hooks (`.github/hooks/*.json`, `.github/copilot/settings.json`) are the
/// coder's: Copilot loads a folder's configuration only when it trusts the folder, so the
/// reviewer never passes `--trust-folder`, and runs with `COPILOT_ALLOW_ALL=false`
/// (`env_set`), since its help says `COPILOT_ALLOW_ALL=true` in the user's environment trusts
/// the working directory too. The control trusts the folder: the hook then fires.
#[test]
fn copilot_reviewer_ignores_the_snapshots_hooks_even_with_allow_all() {
    super::assert_project_config_ignored(
        Vendor::Copilot,
        |marker| {
            let hook = serde_json::json!({"type": "command",
                "bash": format!("touch {}", marker.display()), "timeoutSec": 10});
            let hooks = serde_json::json!({"version": 1, "hooks": {
                "sessionStart": [hook.clone()], "userPromptSubmitted": [hook]}});
            let claude_shape = serde_json::json!({"hooks": {"SessionStart": [{"hooks": [
                {"type": "command", "command": format!("touch {}", marker.display())}]}]}});
            vec![
                (".github/hooks/evil.json", hooks.to_string()),
                (".github/hooks/evil2.json", claude_shape.to_string()),
                (".github/copilot/settings.json", hooks.to_string()),
            ]
        },
        |e| e.set_env("COPILOT_ALLOW_ALL", "true"),
        |r| {
            r.as_object_mut().expect("object").remove("env_set");
            for argv in ["/argv", "/resume/argv"] {
                r.pointer_mut(argv)
                    .and_then(serde_json::Value::as_array_mut)
                    .expect("argv")
                    .insert(0, "--trust-folder".into());
            }
        },
        super::marker_or_evil_model,
    );
}

#[test]
fn copilot_asks_the_server_for_the_chosen_model_and_effort() {
    let Some(e) = super::assert_chosen_model_reaches_the_server(
        Vendor::Copilot,
        "gpt-5.2",
        "gpt-5.2",
        Some("high"),
    ) else {
        return;
    };
    let calls = e.server.model_calls();
    assert!(
        calls.iter().any(|c| c.body["reasoning_effort"] == "high"),
        "{:#}",
        calls[0].body
    );
}
