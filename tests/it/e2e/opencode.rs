//! `git pair` with `--reviewer opencode` through the real, pinned OpenCode (`opencode run
//! --format json --agent plan`), given one OpenAI-compatible provider at the loopback server
//! by `OPENCODE_CONFIG_CONTENT` (its models.dev fetch, updates and sharing off).

use super::server::Reply;
use super::{Vendor, assert_never_approves, assert_resumed, two_rounds};

#[test]
fn opencode_reviews_two_rounds_resuming_its_session_then_approves() {
    let Some((e, run, first, second)) = two_rounds(Vendor::OpenCode) else {
        return;
    };
    let calls = e.server.model_calls();
    assert_eq!(calls[0].path, "/v1/chat/completions");
    assert_eq!(calls[0].model(), Some("mock-model"));
    assert_resumed(&e, &run, &first, &second);
}

#[test]
fn opencode_empty_answer_never_approves() {
    assert_never_approves(Vendor::OpenCode, Reply::Empty);
}

#[test]
fn opencode_401_fails_closed() {
    assert_never_approves(Vendor::OpenCode, Reply::Status(401));
}
