//! `git pair probe` against the real `--help` of every pinned CLI: each realization binds,
//! proven by the substrings its data names.

use super::cli_dir_with;
use crate::common::{TestEnv, pair_bin, system_bin};

#[test]
fn probe_binds_every_pinned_cli_from_its_real_help() {
    let names = ["claude", "codex", "gemini", "qwen", "opencode", "copilot"];
    let Some(cli) = cli_dir_with(&names) else {
        return;
    };
    let env = TestEnv::new();
    let path = format!(
        "{}:{}:{}",
        cli.display(),
        pair_bin().display(),
        system_bin().display()
    );
    let mut cmd = env.pair_cmd(&["probe", "--json"]);
    cmd.env("PATH", path);
    let out = crate::common::run(cmd);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    for name in names {
        let r = v["realizations"]
            .as_array()
            .expect("realizations")
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing: {v:#}"));
        assert_eq!(r["binds"], true, "{name}: {r:#}");
    }
}
