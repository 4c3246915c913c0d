//! The plugin's Stop hook fired by the real CLIs: the repository installed as a plugin (Claude
//! Code `--plugin-dir`; Codex `plugin marketplace add` + `plugin add`, hooks trusted), a coder
//! turn that leaves unrecorded work, the hook's block reaching the model, and the model's
//! shell tool call running the `git pair coder-done` the reason names.

use std::path::{Path, PathBuf};

use super::server::{Reply, Step};
use super::{E2e, Output, Vendor, cli_dir};

/// The plugin's own files (manifests, marketplaces, hooks, skill) copied to a fresh
/// directory: installing the checkout itself would copy `target/` along.
pub(super) fn plugin_copy(into: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = into.join("plugin");
    for part in [
        ".claude-plugin",
        ".codex-plugin",
        ".agents",
        "hooks",
        "skills",
    ] {
        copy_tree(&root.join(part), &dir.join(part));
    }
    for file in ["README.md", "Cargo.toml"] {
        std::fs::copy(root.join(file), dir.join(file)).expect("copy a plugin file");
    }
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read plugin dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The coder's turn: write a file, try to stop, be blocked, record the round, stop.
fn coder_turn() -> Vec<Step> {
    vec![
        Reply::Shell("printf 'hello\\n' > greet.txt".to_owned()).into(),
        Reply::Text("Done.".to_owned()).into(),
        Reply::Shell("git pair coder-done --summary 'add a greeting'".to_owned()).into(),
        Reply::Text("Recorded.".to_owned()).into(),
    ]
}

/// Starts a run (reviewed by the built-in reviewer; no review runs here).
fn started(vendor: Vendor) -> Option<(E2e, PathBuf, String)> {
    let cli = cli_dir()?;
    let e = E2e::new(
        vendor,
        coder_turn(),
        Some(Reply::Text("Stopping.".to_owned()).into()),
    )?;
    let (out, v) = e.pair_json(&["start", "--task", "add a greeting", "--reviewer", "builtin"]);
    assert_eq!(out.code, 0, "{out}");
    let run = v["run_id"].as_str().expect("run id").to_owned();
    Some((e, cli, run))
}

fn run_claude(e: &E2e, cli: &Path) -> Output {
    let plugin = plugin_copy(&e.env.home);
    e.run_cli(
        &cli.join("claude"),
        &[
            "-p",
            "--output-format",
            "json",
            "--allowedTools",
            "Bash",
            "--plugin-dir",
            &plugin.display().to_string(),
        ],
        "add a greeting file",
    )
}

/// What the model was sent after the blocked stop (the third model turn).
fn after_block(e: &E2e) -> String {
    let texts = e.call_texts();
    assert!(
        texts.len() >= 3,
        "the hook blocked the stop: {} turns",
        texts.len()
    );
    texts[2].clone()
}

#[test]
fn claude_stop_hook_blocks_and_the_agent_records_its_round() {
    let Some((e, cli, run)) = started(Vendor::Claude) else {
        return;
    };
    let out = run_claude(&e, &cli);
    assert_eq!(out.code, 0, "{out}");
    let fed = after_block(&e);
    assert!(fed.contains("Stop hook feedback"), "{fed}");
    assert!(fed.contains(&format!("git pair run {run}")) && fed.contains("git pair coder-done"));
    assert_eq!(
        e.server.model_calls().len(),
        4,
        "one block per turn, then the stop"
    );
    let (_, status) = e.pair_json(&["status"]);
    assert_eq!(
        status["next_action"], "review",
        "the round was recorded: {status:#}"
    );
    assert_eq!(status["round"], 1, "{status:#}");
}

#[test]
fn claude_stop_hook_reason_names_no_angle_placeholder() {
    let Some((e, cli, _run)) = started(Vendor::Claude) else {
        return;
    };
    let out = run_claude(&e, &cli);
    assert_eq!(out.code, 0, "{out}");
    let fed = after_block(&e);
    let reason = fed.split("Stop hook feedback").nth(1).unwrap_or_default();
    assert!(
        !reason.contains('<') && !reason.contains("&lt;"),
        "{reason}"
    );
}

/// Installs the plugin into the test's Codex home and runs one `codex exec` turn.
fn run_codex(e: &E2e, cli: &Path, sandbox: &str) -> Output {
    let plugin = plugin_copy(&e.env.home);
    let codex = cli.join("codex");
    let plugin_arg = plugin.display().to_string();
    for args in [
        vec!["plugin", "marketplace", "add", plugin_arg.as_str()],
        vec!["plugin", "add", "git-pair@git-pair"],
    ] {
        let out = e.run_cli(&codex, &args, "");
        assert_eq!(out.code, 0, "codex {args:?}:\n{out}");
    }
    // A model Codex offers its shell tool to (its default model gets none offline).
    e.codex_config_with_model(4, 4, 300_000, Some("gpt-5.2"));
    let config = e.env.home.join(".codex/config.toml");
    let mut text = std::fs::read_to_string(&config).expect("config.toml");
    text.push_str(&format!(
        "\n[marketplaces.git-pair]\nsource_type = \"local\"\nsource = \"{plugin_arg}\"\n\n[plugins.\"git-pair@git-pair\"]\nenabled = true\n"
    ));
    std::fs::write(&config, text).expect("config.toml");
    e.run_cli(
        &codex,
        &[
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-hook-trust",
            "--sandbox",
            sandbox,
            "-",
        ],
        "add a greeting file",
    )
}

#[test]
fn codex_trusted_stop_hook_blocks_and_the_agent_records_its_round() {
    let Some((e, cli, run)) = started(Vendor::Codex) else {
        return;
    };
    let out = run_codex(&e, &cli, "danger-full-access");
    assert_eq!(out.code, 0, "{out}");
    let fed = after_block(&e);
    assert!(
        fed.contains("<hook_prompt"),
        "Codex wraps the reason: {fed}"
    );
    assert!(fed.contains(&format!("git pair run {run}")) && fed.contains("git pair coder-done"));
    let (_, status) = e.pair_json(&["status"]);
    assert_eq!(
        status["next_action"], "review",
        "the round was recorded: {status:#}"
    );
    assert_eq!(status["round"], 1, "{status:#}");
}

#[test]
fn codex_workspace_write_sandbox_says_what_to_set_for_git_pair() {
    let Some((e, cli, _run)) = started(Vendor::Codex) else {
        return;
    };
    let out = run_codex(&e, &cli, "workspace-write");
    assert_eq!(out.code, 0, "{out}");
    // The coder-done output the model got back (the fourth turn carries it).
    let texts = e.call_texts();
    let back = texts.get(3).cloned().unwrap_or_default();
    let back = back
        .split_once("Read-only file system")
        .map(|(_, after)| after)
        .unwrap_or_default();
    assert!(
        back.contains("[sandbox_workspace_write]")
            && back.contains("writable_roots")
            && back.contains("git pair coder-done"),
        "git pair says which Codex sandbox setting to change, and the command again:\n{back}"
    );
    let (_, status) = e.pair_json(&["status"]);
    assert_ne!(
        status["next_action"], "review",
        "nothing recorded: {status:#}"
    );
}
