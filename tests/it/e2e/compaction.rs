//! Compaction detection through the real CLIs, with the plugin's SessionStart,
//! UserPromptSubmit and SessionEnd hooks: Claude Code in one `claude -p` session fed user
//! turns as stream-json, two of them `/compact`; Codex in one `codex exec` turn whose reported
//! usage passes `model_auto_compact_token_limit`, so it compacts twice on its own. The model
//! server answers every request (the compaction summaries too).

use super::hooks::plugin_copy;
use super::server::{Reply, Step};
use super::{E2e, Vendor, cli_dir};

/// The compaction records of `run`.
fn compactions(e: &E2e, run: &str) -> usize {
    e.records(run)
        .iter()
        .filter(|name| name.contains("compaction"))
        .count()
}

/// Asserts SessionEnd removed every session's state.
fn assert_no_session_state(e: &E2e) {
    let sessions = e.env.repo.join(".git/pair/sessions");
    let left: Vec<_> = std::fs::read_dir(&sessions)
        .map(|d| d.flatten().map(|x| x.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn claude_compactions_start_the_next_turn_with_the_health_check() {
    let Some(cli) = cli_dir() else { return };
    let e = E2e::new(
        Vendor::Claude,
        Vec::new(),
        Some(Reply::Text("Summary: we counted.".to_owned()).into()),
    )
    .expect("the CLIs are installed");
    let (out, v) = e.pair_json(&["start", "--task", "count", "--reviewer", "builtin"]);
    assert_eq!(out.code, 0, "{out}");
    let run = v["run_id"].as_str().expect("run id").to_owned();
    // The standing authorization: two compactions make the task handoff-ready.
    e.env.git(&["config", "pair.handoffAuthorized", "true"]);
    let plugin = plugin_copy(&e.env.home).display().to_string();
    let turn = |text: &str| {
        format!(
            "{}\n",
            serde_json::json!({"type": "user", "message": {"role": "user", "content": text}})
        )
    };
    let input: String = ["one", "two", "/compact", "three", "/compact", "four"]
        .iter()
        .map(|t| turn(t))
        .collect();
    let out = e.run_cli(
        &cli.join("claude"),
        &[
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--plugin-dir",
            &plugin,
        ],
        &input,
    );
    assert_eq!(out.code, 0, "{out}");
    let texts = e.call_texts();
    // The hook's text follows the user's in the request.
    let before = texts.first().expect("a model call");
    assert!(!before.contains("CONTEXT HANDOFF HEALTH CHECK"), "{before}");
    let after_first = texts
        .iter()
        .find(|t| t.contains("observed in this session: 1."))
        .unwrap_or_else(|| panic!("no health check after the first compaction: {texts:#?}"));
    assert!(after_first.contains("\nthree\n"), "{after_first}");
    assert!(
        after_first.contains("SessionStart hook additional context: CONTEXT HANDOFF HEALTH CHECK"),
        "{after_first}"
    );
    assert!(
        after_first
            .contains("UserPromptSubmit hook additional context: CONTEXT HANDOFF HEALTH CHECK"),
        "{after_first}"
    );
    assert!(
        after_first.contains("observed in this session: 1.")
            && after_first.contains("Assessment: continue"),
        "{after_first}"
    );
    let after_second = texts.last().expect("a model call");
    assert!(after_second.contains("\nfour\n"), "{after_second}");
    assert!(
        after_second.contains("observed in this session: 2.")
            && after_second.contains("Assessment: handoff-ready")
            && after_second.contains(&format!("recorded on git pair run {run}")),
        "{after_second}"
    );
    // The user turn repeats the reminder; it never counted a third time.
    assert!(!after_second.contains("session: 3."), "{after_second}");
    assert_eq!(compactions(&e, &run), 2, "{:?}", e.records(&run));
    assert_no_session_state(&e);
}

#[test]
fn codex_auto_compactions_start_the_next_request_with_the_health_check() {
    let Some(cli) = cli_dir() else { return };
    // Every answer reports 200,000 input tokens: over the limit of 5,000, so Codex compacts
    // before each next request (the summary requests are answered by the fallback).
    let shell = || Step::from(Reply::Shell("true".to_owned())).usage(200_000, 100);
    let e = E2e::new(
        Vendor::Codex,
        vec![shell(), shell(), shell()],
        Some(Step::from(Reply::Text("Summary: counted.".to_owned())).usage(200_000, 100)),
    )
    .expect("the CLIs are installed");
    let (out, v) = e.pair_json(&["start", "--task", "count", "--reviewer", "builtin"]);
    assert_eq!(out.code, 0, "{out}");
    let run = v["run_id"].as_str().expect("run id").to_owned();
    e.env.git(&["config", "pair.handoffAuthorized", "true"]);
    let plugin = plugin_copy(&e.env.home).display().to_string();
    let codex = cli.join("codex");
    for args in [
        vec!["plugin", "marketplace", "add", plugin.as_str()],
        vec!["plugin", "add", "git-pair@git-pair"],
    ] {
        let out = e.run_cli(&codex, &args, "");
        assert_eq!(out.code, 0, "codex {args:?}:\n{out}");
    }
    // A model Codex offers its shell tool to; no retries.
    e.codex_config_with_model(0, 0, 300_000, Some("gpt-5.2"));
    let config = e.env.home.join(".codex/config.toml");
    let text = std::fs::read_to_string(&config).expect("config.toml");
    let text = format!(
        "model_auto_compact_token_limit = 5000\nmodel_context_window = 300000\n{text}\n[marketplaces.git-pair]\nsource_type = \"local\"\nsource = \"{plugin}\"\n\n[plugins.\"git-pair@git-pair\"]\nenabled = true\n"
    );
    std::fs::write(&config, text).expect("config.toml");
    let out = e.run_cli(
        &codex,
        &[
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-hook-trust",
            "--sandbox",
            "danger-full-access",
            "-",
        ],
        "count",
    );
    assert_eq!(out.code, 0, "{out}");
    let texts = e.call_texts();
    assert!(
        !texts[0].contains("CONTEXT HANDOFF HEALTH CHECK"),
        "{}",
        texts[0]
    );
    assert!(
        texts.iter().any(|t| t.contains(
            "CONTEXT HANDOFF HEALTH CHECK\nContext compactions observed in this session: 1."
        )),
        "{texts:#?}"
    );
    let last = texts.last().expect("a model call");
    assert!(
        last.contains("observed in this session: 2.")
            && last.contains("Assessment: handoff-ready")
            && last.contains(&format!("recorded on git pair run {run}")),
        "{last}"
    );
    assert_eq!(compactions(&e, &run), 2, "{:?}", e.records(&run));
    assert_no_session_state(&e);
}
