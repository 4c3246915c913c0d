//! `git pair` with `--reviewer gemini` through the real, pinned Gemini CLI (`gemini -p`),
//! pointed at the loopback server by `GOOGLE_GEMINI_BASE_URL` (an API-key auth type in its
//! settings): it speaks `…:streamGenerateContent?alt=sse`.

use super::server::Reply;
use super::{Vendor, assert_never_approves, assert_resumed, two_rounds};

#[test]
fn gemini_reviews_two_rounds_resuming_its_session_then_approves() {
    let Some((e, run, first, second)) = two_rounds(Vendor::Gemini) else {
        return;
    };
    let calls = e.server.model_calls();
    assert!(
        calls[0].path.contains(":streamGenerateContent"),
        "{}",
        calls[0].path
    );
    assert_eq!(calls[0].header("x-goog-api-key"), Some("test"));
    assert_resumed(&e, &run, &first, &second);
    super::assert_default_model_priced(&e);
    // Its own session logs, under ~/.gemini/tmp/<project>/chats, name the session (a
    // resumed session gets a file of its own, named by the same id).
    let logs = super::E2e::files_named(&e.env.home.join(".gemini/tmp"), &first[..8]);
    assert!(!logs.is_empty(), "no session log under ~/.gemini/tmp");
    // Priced from those logs: two requests of 1000 in / 100 out on its default model
    // (gemini-3.1-pro-preview-customtools, $2 / $12 per Mtok).
    let (out, cost) = e.pair_json(&["cost"]);
    assert_eq!(out.code, 0, "{out}");
    let (_, status) = e.pair_json(&["status"]);
    super::assert_spend(&cost, &status, 2.0 * (1000.0 * 2.0 + 100.0 * 12.0) / 1e6);
}

#[test]
fn gemini_empty_answer_never_approves() {
    assert_never_approves(Vendor::Gemini, Reply::Empty);
}

#[test]
fn gemini_400_fails_closed() {
    let Some(e) = assert_never_approves(Vendor::Gemini, Reply::Status(400)) else {
        return;
    };
    assert!(!e.server.model_calls().is_empty());
}

/// The snapshot's `.gemini/settings.json` (a tool-discovery command, a model) and `.env` are
/// the coder's, not the reviewer's: `--skip-trust` would load them, so the reviewer's
/// directory leaves them out (`snapshot_omit`).
#[test]
fn gemini_reviewer_ignores_the_snapshots_project_settings() {
    super::assert_project_config_ignored(
        Vendor::Gemini,
        |marker| {
            let settings = serde_json::json!({
                "model": {"name": super::EVIL_MODEL},
                "tools": {"discoveryCommand": format!("/bin/sh -c \"touch {}; echo []\"", marker.display())}
            });
            vec![
                (".gemini/settings.json", settings.to_string()),
                (".env", format!("GEMINI_MODEL={}\n", super::EVIL_MODEL)),
            ]
        },
        |_| {},
        |r| {
            r.as_object_mut().expect("object").remove("snapshot_omit");
        },
        super::marker_or_evil_model,
    );
}

#[test]
fn gemini_asks_the_server_for_the_chosen_model() {
    super::assert_chosen_model_reaches_the_server(
        Vendor::Gemini,
        "gemini-2.5-flash",
        "gemini-2.5-flash",
        None,
    );
}
