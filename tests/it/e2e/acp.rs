//! `git pair` with `--reviewer acp` through the real, pinned ACP agent
//! `@zed-industries/claude-agent-acp` (`pair.acpCommand`), which runs Claude Code against the
//! loopback model server: git pair is the ACP client, the agent's streamed message chunks
//! are the answer.

use super::server::{Reply, Step};
use super::{E2e, Vendor, cli_dir};

const FINDING: &str = "the greeting misses its name";

/// The pinned agent, or `None` (after saying why) when it is not installed and not required.
fn agent() -> Option<std::path::PathBuf> {
    let agent = cli_dir()?.join("claude-agent-acp");
    if agent.exists() {
        return Some(agent);
    }
    if std::env::var("PAIR_E2E_REQUIRED").is_ok_and(|v| v == "1") {
        panic!(
            "e2e: {} is missing: run npm ci --prefix tests/e2e",
            agent.display()
        );
    }
    None
}

/// A run reviewed by the ACP agent, with one coder round; the model server plays `script`
/// then `fallback`.
fn acp_run(script: Vec<Step>, fallback: Option<Step>) -> Option<(E2e, String)> {
    let agent = agent()?;
    let mut e = E2e::new(Vendor::Claude, script, fallback)?;
    e.env
        .git(&["config", "pair.acpCommand", &agent.display().to_string()]);
    // The agent is a Claude Code: its endpoint, key and switches are let through by name.
    e.env.git(&[
        "config",
        "pair.reviewerEnv",
        "ANTHROPIC_* CLAUDE_* DISABLE_*",
    ]);
    e.set_env("CLAUDE_CODE_MAX_RETRIES", "0");
    let (out, v) = e.pair_json(&["start", "--task", "add a greeting", "--reviewer", "acp"]);
    assert_eq!(out.code, 0, "start failed:\n{out}");
    let run = v["run_id"].as_str().expect("run_id").to_owned();
    e.code("greet.txt", "hello\n", "add a greeting");
    Some((e, run))
}

fn text(answer: &str) -> Step {
    Reply::Text(answer.to_owned()).into()
}

#[test]
fn acp_agent_requests_changes_then_approves() {
    let changes =
        format!("1. [bug] [severity: high] greet.txt:1 — {FINDING}\nVERDICT: CHANGES_REQUESTED");
    let Some((e, run)) = acp_run(vec![text(&changes), text("VERDICT: APPROVED")], None) else {
        return;
    };
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v:#}");
    assert_eq!(v["findings"][0]["text"], FINDING, "{v:#}");
    assert_eq!(
        v["outcomes"][0]["reviewer"], "acp:claude-agent-acp",
        "{v:#}"
    );
    let first = E2e::session_of(&v);
    let prompt = e.call_texts().join("\n");
    assert!(prompt.contains(&format!("git-pair: {run}/1/")), "{prompt}");
    assert!(prompt.contains("greet.txt"), "{prompt}");

    e.code("greet.txt", "hello, name\n", "name the greeting");
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    assert_eq!(v["next_action"], "finish", "{v:#}");
    // The agent advertises loadSession: round 2 continued round 1's session.
    assert_eq!(E2e::session_of(&v), first, "{v:#}");
    let texts = e.call_texts();
    assert!(
        texts.last().is_some_and(|t| t.contains(FINDING)),
        "the loaded session carries round 1's answer:\n{texts:?}"
    );
    // The agent's usage_update carries its session's cost in USD: the spend is measured.
    let (_, status) = e.pair_json(&["status"]);
    let spent = status["spent_usd"]
        .as_f64()
        .unwrap_or_else(|| panic!("{status:#}"));
    assert!(spent > 0.0, "{status:#}");
    let records = e.records(&run);
    assert!(
        records.iter().any(|r| r.contains("-review-")),
        "{records:?}"
    );
}

#[test]
fn acp_agent_500_fails_closed() {
    let Some((e, _run)) = acp_run(Vec::new(), Some(Reply::Status(500).into())) else {
        return;
    };
    let (out, v) = e.review(&["--timeout", "120"]);
    e.assert_fail_closed(&out, &v);
    let error = v["error"].as_str().unwrap_or_default();
    assert!(error.contains("server error (HTTP 500)"), "{out}");
    assert_eq!(v["outcomes"][0]["outcome"], "died", "{out}");
}
