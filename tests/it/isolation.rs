//! The reviewer apart from the user's own setup, and probed once per binary (SPEC §6.1): the
//! fake vendor CLIs record the argv `git pair review` gives them (the isolation flags the data
//! names, each proven by the probe) and count their `--help` runs (a second review of an
//! unchanged binary does not probe; a touched binary is probed again).

use std::path::{Path, PathBuf};

use crate::common::{TestEnv, fake_vendor_bin, fixtures, system_bin};

fn env_ready_for_review(reviewer: &str) -> (TestEnv, String) {
    let env = TestEnv::new();
    env.git(&["config", "pair.reviewer", reviewer]);
    let run_id = env.start("Teach the fetcher to retry");
    env.write("src/lib.rs", "pub fn fetch() -> u32 {\n    42\n}\n");
    env.pair_json(&["coder-done", "--summary", "Added fetch"]);
    (env, run_id)
}

fn argv_of(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .expect("argv recorded")
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_claude_reviewer_runs_without_the_users_plugins_hooks_and_mcp_servers() {
    let (env, _) = env_ready_for_review("claude");
    let argv_file = env.home.join("argv.txt");
    let argv = argv_file.to_str().expect("utf8");
    let out = env.pair_with_vendors(
        &["review", "--json"],
        &[("FAKE_REVIEW", "changes"), ("FAKE_ARGV_FILE", argv)],
    );
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["outcomes"][0]["reviewer"], "claude", "{out}");
    let first = argv_of(&argv_file);
    for flag in ["--safe-mode", "--strict-mcp-config"] {
        assert!(first.iter().any(|a| a == flag), "{flag}: {first:?}");
    }
    let at = first
        .iter()
        .position(|a| a == "--settings")
        .expect("--settings");
    let settings: serde_json::Value = serde_json::from_str(&first[at + 1]).expect("json");
    assert_eq!(settings["disableAllHooks"], true, "{first:?}");
    // Settings come from the user's own files only: the snapshot's `.claude/` is the
    // coder's work, never the reviewer's configuration.
    let sources = first
        .iter()
        .position(|a| a == "--setting-sources")
        .expect("--setting-sources");
    assert_eq!(first[sources + 1], "user", "{first:?}");
    // The resumed session of the next round is isolated the same way.
    env.pair_json(&["coder-done", "--summary", "fixed"]);
    let out = env.pair_with_vendors(&["review", "--json"], &[("FAKE_ARGV_FILE", argv)]);
    assert_eq!(out.code, 0, "{out}");
    let second = argv_of(&argv_file);
    assert!(second.iter().any(|a| a == "--resume"), "{second:?}");
    for flag in [
        "--safe-mode",
        "--strict-mcp-config",
        "--settings",
        "--setting-sources",
    ] {
        assert!(second.iter().any(|a| a == flag), "{flag}: {second:?}");
    }
}

#[test]
fn the_codex_reviewer_runs_with_hooks_and_plugins_disabled() {
    let (env, _) = env_ready_for_review("codex");
    let argv_file = env.home.join("argv.txt");
    let argv = argv_file.to_str().expect("utf8");
    let out = env.pair_with_vendors(
        &["review", "--json"],
        &[("FAKE_REVIEW", "changes"), ("FAKE_ARGV_FILE", argv)],
    );
    assert_eq!(out.code, 0, "{out}");
    let first = argv_of(&argv_file);
    let at = first.iter().position(|a| a == "--disable").expect("flag");
    assert_eq!(
        first[at..at + 4],
        ["--disable", "hooks", "--disable", "plugins"]
    );
    env.pair_json(&["coder-done", "--summary", "fixed"]);
    let out = env.pair_with_vendors(&["review", "--json"], &[("FAKE_ARGV_FILE", argv)]);
    assert_eq!(out.code, 0, "{out}");
    let second = argv_of(&argv_file);
    assert!(second.iter().any(|a| a == "resume"), "{second:?}");
    // The session id is still the one resumed (the isolation flags take their values).
    assert!(
        second
            .iter()
            .any(|a| a == "0199f0aa-1111-7222-8333-444455556666"),
        "{second:?}"
    );
    assert!(second.iter().any(|a| a == "--disable"), "{second:?}");
}

/// A private copy of the fake vendor `name` first on PATH, so the test may touch it.
fn own_vendor(env: &TestEnv, name: &str) -> (PathBuf, String) {
    let dir = env.home.join("vendor-bin");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let copy = dir.join(name);
    std::fs::copy(fake_vendor_bin().join(name), &copy).expect("copy");
    let path = format!(
        "{}:{}:{}",
        dir.display(),
        fixtures().join("reviewers").display(),
        system_bin().display()
    );
    (copy, path)
}

fn help_runs(file: &Path) -> usize {
    std::fs::read_to_string(file).map_or(0, |t| t.lines().count())
}

#[test]
fn a_second_review_does_not_probe_an_unchanged_binary_and_a_touched_one_is_probed_again() {
    let (env, _) = env_ready_for_review("codex");
    let (codex, path) = own_vendor(&env, "codex");
    let count = env.home.join("help-count");
    let vars = |count: &Path| {
        vec![
            ("PATH".to_owned(), path.clone()),
            ("FAKE_REVIEW".to_owned(), "changes".to_owned()),
            (
                "FAKE_HELP_COUNT_FILE".to_owned(),
                count.display().to_string(),
            ),
        ]
    };
    let review = |count: &Path| {
        let vars = vars(count);
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let out = env.pair_env(&["review", "--json"], &vars);
        assert_eq!(out.code, 0, "{out}");
        assert_eq!(out.json()["outcomes"][0]["reviewer"], "codex", "{out}");
    };
    review(&count);
    assert_eq!(help_runs(&count), 1, "the first review probes");
    let cache = env.repo.join(".git/pair/probe-cache.json");
    assert!(cache.is_file(), "the probe is remembered under the git dir");
    env.pair_json(&["coder-done", "--summary", "more"]);
    review(&count);
    assert_eq!(
        help_runs(&count),
        1,
        "an unchanged binary is not probed again"
    );
    // Touched (a newer modification time): probed again, then remembered again.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(10);
    std::fs::File::options()
        .write(true)
        .open(&codex)
        .expect("open")
        .set_modified(later)
        .expect("touch");
    env.pair_json(&["coder-done", "--summary", "again"]);
    review(&count);
    assert_eq!(help_runs(&count), 2, "a touched binary is probed again");
    env.pair_json(&["coder-done", "--summary", "once more"]);
    review(&count);
    assert_eq!(help_runs(&count), 2);
    // `git pair probe` is the doctor view: it probes afresh, each binary once.
    let out = env.pair_env(
        &["probe", "--json"],
        &[
            ("PATH", path.as_str()),
            ("FAKE_HELP_COUNT_FILE", count.to_str().expect("utf8")),
        ],
    );
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(help_runs(&count), 3, "{out}");
}
