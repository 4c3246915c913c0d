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
    // Copilot records no list-priced usage git pair reads: its spend is not measured, never $0.
    let (_, status) = e.pair_json(&["status"]);
    assert!(status["spent_usd"].is_null(), "{status:#}");
}

#[test]
fn copilot_empty_answer_never_approves() {
    assert_never_approves(Vendor::Copilot, Reply::Empty);
}

#[test]
fn copilot_401_fails_closed() {
    assert_never_approves(Vendor::Copilot, Reply::Status(401));
}
