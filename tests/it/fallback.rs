//! Cross-vendor fallback (SPEC §6.1): when the configured reviewer's CLI is missing, the
//! installed realizations are tried in the documented order (the realization's own
//! `fallback` list, then the surfaces document's `fallback_order`), or in `pair.fallbackOrder`
//! (`git pair set fallback-order`) when set. Fake CLIs on `PATH` (`fixtures/reviewers/
//! bin-agents`: the pinned CLIs' real `--help`, a canned answer) stand in for the vendors.

use std::path::{Path, PathBuf};

use crate::common::{Output, TestEnv, run, system_bin};

fn agents_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/reviewers/bin-agents")
}

/// A directory holding only the fake CLIs named (each a script that runs the fixture).
fn only(names: &[&str]) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("tempdir");
    for name in names {
        let path = dir.path().join(name);
        let script = format!(
            "#!/bin/sh\nexec '{}' \"$@\"\n",
            agents_dir().join(name).display()
        );
        std::fs::write(&path, script).expect("write a fake CLI");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("make it executable");
    }
    dir
}

/// `git pair args` with `bin` first on `PATH` (no codex, no claude anywhere on it).
fn pair_with(env: &TestEnv, bin: &Path, args: &[&str]) -> Output {
    let mut cmd = env.pair_cmd(args);
    cmd.env(
        "PATH",
        format!("{}:{}", bin.display(), system_bin().display()),
    );
    run(cmd)
}

/// The configured reviewer's probe report from `git pair probe --json`.
fn probed(env: &TestEnv, bin: &Path) -> serde_json::Value {
    let out = pair_with(env, bin, &["probe", "--json"]);
    out.json()["reviewers"][0].clone()
}

fn names(report: &serde_json::Value) -> Vec<String> {
    report["probed"]
        .as_array()
        .expect("probed")
        .iter()
        .map(|c| c["name"].as_str().expect("name").to_owned())
        .collect()
}

#[test]
fn a_missing_codex_falls_back_in_the_documented_order() {
    let env = TestEnv::new();
    let bin = only(&["qwen", "opencode", "copilot", "gemini"]);
    let report = probed(&env, bin.path());
    assert_eq!(report["configured"], "codex", "{report:#}");
    assert_eq!(report["winner"], "gemini", "{report:#}");
    assert_eq!(report["fallback_used"], true, "{report:#}");
    assert_eq!(names(&report), ["codex", "claude", "gemini"], "{report:#}");

    // Without gemini, the next in the order: copilot, then opencode, then qwen.
    let bin = only(&["qwen", "opencode"]);
    let report = probed(&env, bin.path());
    assert_eq!(report["winner"], "opencode", "{report:#}");
    assert_eq!(
        names(&report),
        ["codex", "claude", "gemini", "copilot", "opencode"],
        "{report:#}"
    );
}

#[test]
fn pair_fallback_order_replaces_the_documented_order() {
    let env = TestEnv::new();
    let bin = only(&["qwen", "gemini"]);
    env.git(&["config", "pair.fallbackOrder", "qwen, gemini"]);
    let report = probed(&env, bin.path());
    assert_eq!(report["winner"], "qwen", "{report:#}");
    assert_eq!(names(&report), ["codex", "qwen"], "{report:#}");

    // A run's own order (`git pair set`) wins over configuration, and a review uses it.
    env.start("fallback");
    let out = pair_with(&env, bin.path(), &["set", "fallback-order", "gemini"]);
    assert_eq!(out.code, 0, "{out}");
    let report = probed(&env, bin.path());
    assert_eq!(report["winner"], "gemini", "{report:#}");
    env.write("a.txt", "a\n");
    let out = pair_with(
        &env,
        bin.path(),
        &["coder-done", "--summary", "a", "--json"],
    );
    assert_eq!(out.code, 0, "{out}");
    let out = pair_with(&env, bin.path(), &["review", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    assert_eq!(v["fallback_used"], true, "{v:#}");
    assert_eq!(v["outcomes"][0]["reviewer"], "gemini", "{v:#}");
    let status = env.pair_json(&["status"]);
    assert_eq!(status["reviewer_fallback"], true, "{status:#}");
}

#[test]
fn a_fallback_order_naming_no_realization_is_refused() {
    let env = TestEnv::new();
    env.start("fallback");
    let out = env.pair(&["set", "fallback-order", "gemini,nobody"]);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("nobody"), "{out}");
}

#[test]
fn nothing_installed_fails_naming_every_realization_probed() {
    let env = TestEnv::new();
    let bin = only(&[]);
    let out = pair_with(&env, bin.path(), &["probe", "--json"]);
    assert_eq!(out.code, 1, "{out}");
    let report = out.json()["reviewers"][0].clone();
    assert!(report["winner"].is_null(), "{report:#}");
    assert_eq!(
        names(&report),
        ["codex", "claude", "gemini", "copilot", "opencode", "qwen"],
        "{report:#}"
    );
}

#[test]
fn each_new_realization_binds_itself_from_its_pinned_help() {
    let env = TestEnv::new();
    let bin = only(&["gemini", "qwen", "opencode", "copilot"]);
    let out = pair_with(&env, bin.path(), &["probe", "--json"]);
    let v = out.json();
    for name in ["gemini", "qwen", "opencode", "copilot"] {
        let r = v["realizations"]
            .as_array()
            .expect("realizations")
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {v:#}"));
        assert_eq!(r["binds"], true, "{name}: {r:#}");
    }
}
