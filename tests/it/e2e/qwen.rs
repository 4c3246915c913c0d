//! `git pair` with `--reviewer qwen` through the real, pinned Qwen Code (`qwen`, headless,
//! stream-json), pointed at the loopback server's chat completions by `OPENAI_BASE_URL` (the
//! `openai` auth type in its settings). Its `--json-schema` offers a `structured_output`
//! tool, which the server calls.

use super::server::Reply;
use super::{Vendor, assert_never_approves, assert_resumed, two_rounds};

#[test]
fn qwen_reviews_two_rounds_resuming_its_session_then_approves() {
    let Some((e, run, first, second)) = two_rounds(Vendor::Qwen) else {
        return;
    };
    let calls = e.server.model_calls();
    assert_eq!(calls[0].path, "/v1/chat/completions");
    assert_eq!(calls[0].header("authorization"), Some("Bearer test"));
    assert!(
        calls[0]
            .tool_names()
            .contains(&"structured_output".to_owned()),
        "--json-schema reached the request: {:?}",
        calls[0].tool_names()
    );
    assert_resumed(&e, &run, &first, &second);
    super::assert_default_model_priced(&e);
    // Priced from its own session log: two requests of 1000 in / 100 out on its default
    // model (qwen3.7-max at $1.714 / $5.142 per Mtok).
    let (out, cost) = e.pair_json(&["cost"]);
    assert_eq!(out.code, 0, "{out}");
    let (_, status) = e.pair_json(&["status"]);
    super::assert_spend(&cost, &status, 2.0 * (1000.0 * 1.714 + 100.0 * 5.142) / 1e6);
}

#[test]
fn qwen_empty_answer_never_approves() {
    assert_never_approves(Vendor::Qwen, Reply::Empty);
}

#[test]
fn qwen_401_fails_closed() {
    assert_never_approves(Vendor::Qwen, Reply::Status(401));
}
