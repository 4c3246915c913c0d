//! The repository root as a Claude Code and Codex plugin: the manifests parse, agree with
//! Cargo.toml and with each other, point at files that exist, register the Stop hook, and pass
//! `claude plugin validate` (run only when the `claude` CLI is on PATH; skipped, saying so,
//! otherwise).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const NAME: &str = "git-pair";
const STOP_COMMAND: &str = "git pair hook agent-stop";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn manifest(rel: &str) -> Value {
    let path = root().join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel} is not JSON: {e}"))
}

/// A `./`-relative manifest path, resolved under the root (never outside it).
fn resolve(rel: &str, field: &str, value: &Value) -> PathBuf {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("{rel}: {field} must be a string path"));
    let inner = text
        .strip_prefix("./")
        .unwrap_or_else(|| panic!("{rel}: {field} must start with ./, got {text}"));
    assert!(
        !inner.split('/').any(|c| c == ".."),
        "{rel}: {field} leaves the root"
    );
    root().join(inner)
}

#[test]
fn every_manifest_names_the_plugin_and_agrees_with_cargo_toml() {
    let version = env!("CARGO_PKG_VERSION");
    let license = env!("CARGO_PKG_LICENSE");
    for rel in [".claude-plugin/plugin.json", ".codex-plugin/plugin.json"] {
        let m = manifest(rel);
        assert_eq!(m["name"], NAME, "{rel}");
        assert_eq!(m["version"], version, "{rel}");
        assert_eq!(m["license"], license, "{rel}");
        assert!(
            m["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{rel}"
        );
        assert!(
            m["author"]["name"].as_str().is_some_and(|a| !a.is_empty()),
            "{rel}"
        );
    }
    let claude_market = manifest(".claude-plugin/marketplace.json");
    let codex_market = manifest(".agents/plugins/marketplace.json");
    for (rel, market) in [
        (".claude-plugin/marketplace.json", &claude_market),
        (".agents/plugins/marketplace.json", &codex_market),
    ] {
        assert_eq!(market["name"], NAME, "{rel}");
        let plugins = market["plugins"].as_array().expect("plugins array");
        assert_eq!(plugins.len(), 1, "{rel}");
        assert_eq!(plugins[0]["name"], NAME, "{rel}");
        if let Some(v) = plugins[0].get("version") {
            assert_eq!(v, version, "{rel}");
        }
    }
    assert!(claude_market["owner"]["name"].is_string());
    assert!(codex_market["interface"]["displayName"].is_string());
}

#[test]
fn marketplaces_point_at_the_root_plugin() {
    let claude = manifest(".claude-plugin/marketplace.json");
    let source = resolve(
        "claude marketplace",
        "source",
        &claude["plugins"][0]["source"],
    );
    assert!(source.join(".claude-plugin/plugin.json").is_file());

    let codex = manifest(".agents/plugins/marketplace.json");
    let entry = &codex["plugins"][0];
    assert_eq!(entry["source"]["source"], "local");
    let path = resolve("codex marketplace", "source.path", &entry["source"]["path"]);
    assert!(path.join(".codex-plugin/plugin.json").is_file());
    assert_eq!(entry["policy"]["installation"], "AVAILABLE");
    assert_eq!(entry["policy"]["authentication"], "ON_INSTALL");
    assert!(entry["category"].is_string());
}

#[test]
fn the_skill_and_the_hooks_are_where_the_manifests_say() {
    // Codex replaces its default locations with the manifest's paths: name both.
    let codex = manifest(".codex-plugin/plugin.json");
    let skills = resolve(".codex-plugin/plugin.json", "skills", &codex["skills"]);
    assert!(skills.join("pair-loop/SKILL.md").is_file());
    let hooks = resolve(".codex-plugin/plugin.json", "hooks", &codex["hooks"]);
    assert_eq!(hooks, root().join("hooks/hooks.json"));
    let interface = &codex["interface"];
    for key in [
        "displayName",
        "shortDescription",
        "developerName",
        "category",
    ] {
        assert!(interface[key].is_string(), "interface.{key}");
    }
    assert!(interface["capabilities"].is_array());

    // Claude Code loads skills/ and hooks/hooks.json by convention; naming hooks/hooks.json
    // again in the manifest makes the installed plugin fail to load ("Duplicate hooks file
    // detected"), though `claude plugin validate` accepts it.
    let claude = manifest(".claude-plugin/plugin.json");
    for key in ["hooks", "skills"] {
        assert!(
            claude.get(key).is_none(),
            ".claude-plugin/plugin.json must not declare {key}: Claude Code loads the standard location itself"
        );
    }
    assert!(root().join("skills/pair-loop/SKILL.md").is_file());
    assert!(root().join("hooks/hooks.json").is_file());
}

#[test]
fn hooks_json_registers_the_stop_and_lifecycle_hooks() {
    let hooks = manifest("hooks/hooks.json");
    let events = hooks["hooks"].as_object().expect("hooks object");
    assert_eq!(
        events.keys().collect::<Vec<_>>(),
        ["Stop", "SessionStart", "UserPromptSubmit", "SessionEnd"]
    );
    let groups = events["Stop"].as_array().expect("Stop groups");
    assert_eq!(groups.len(), 1);
    assert!(groups[0].get("matcher").is_none(), "Stop takes no matcher");
    let handlers = groups[0]["hooks"].as_array().expect("handlers");
    assert_eq!(handlers.len(), 1);
    assert_eq!(handlers[0]["type"], "command");
    assert_eq!(handlers[0]["command"], STOP_COMMAND);
    assert_eq!(handlers[0]["timeout"], 30);
    // Each lifecycle event runs its `git pair hook` command; SessionStart on a compaction and
    // on the fresh starts that reset the count.
    let command_of = |event: &str, matcher: Option<&str>| {
        let groups = events[event].as_array().expect("groups");
        let group = groups
            .iter()
            .find(|g| g.get("matcher").and_then(|m| m.as_str()) == matcher)
            .unwrap_or_else(|| panic!("{event} {matcher:?} in {groups:?}"));
        let handlers = group["hooks"].as_array().expect("handlers");
        assert_eq!(handlers.len(), 1);
        assert_eq!(handlers[0]["type"], "command");
        handlers[0]["command"].as_str().expect("command").to_owned()
    };
    assert_eq!(
        command_of("SessionStart", Some("compact")),
        "git pair hook session-start"
    );
    assert_eq!(
        command_of("SessionStart", Some("startup|resume|clear")),
        "git pair hook session-start"
    );
    assert_eq!(
        command_of("UserPromptSubmit", None),
        "git pair hook user-prompt"
    );
    assert_eq!(command_of("SessionEnd", None), "git pair hook session-end");
}

#[test]
fn the_skill_front_matter_names_it() {
    let text = std::fs::read_to_string(root().join("skills/pair-loop/SKILL.md")).expect("SKILL.md");
    let front = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .map(|(front, _)| front)
        .expect("front matter");
    assert!(front.lines().any(|l| l == "name: pair-loop"), "{front}");
    assert!(
        front.lines().any(|l| l
            .strip_prefix("description: ")
            .is_some_and(|d| !d.is_empty())),
        "{front}"
    );
}

fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// `claude plugin validate [--strict] <target>` with a scratch HOME and config dir, so the
/// user's own Claude Code settings neither change nor matter.
fn claude_validate(claude: &Path, target: &Path, strict: bool) -> (bool, String) {
    let scratch = tempfile::tempdir().expect("scratch home");
    let mut cmd = Command::new(claude);
    cmd.args(["plugin", "validate"]);
    if strict {
        cmd.arg("--strict");
    }
    let out = cmd
        .arg(target)
        .env("HOME", scratch.path())
        .env("CLAUDE_CONFIG_DIR", scratch.path().join(".claude"))
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .output()
        .expect("run claude");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
#[ignore = "needs the claude CLI on PATH (npm install -g @anthropic-ai/claude-code), then: cargo test --test it -- --ignored claude_plugin_validate"]
fn claude_plugin_validate_passes_strict() {
    let claude = on_path("claude")
        .expect("the claude CLI is on PATH (npm install -g @anthropic-ai/claude-code)");
    // The root validates as the marketplace; the plugin manifest validates with hooks.json.
    for target in [root(), root().join(".claude-plugin/plugin.json")] {
        for strict in [false, true] {
            let (ok, output) = claude_validate(&claude, &target, strict);
            eprintln!(
                "claude plugin validate{} {}:\n{output}",
                if strict { " --strict" } else { "" },
                target.display()
            );
            assert!(
                ok,
                "claude plugin validate failed on {}:\n{output}",
                target.display()
            );
            assert!(output.contains("Validation passed"), "{output}");
        }
    }
}
