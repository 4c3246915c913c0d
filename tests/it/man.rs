//! The manual and shell completions: `install-man` writes pages that `git help pair`,
//! `git pair --help` and `man git-pair` really show (read back with the real man and git), and
//! `completions` prints scripts the shells accept.

use std::path::Path;
use std::process::Command;

use crate::common::{self, TestEnv};

fn has(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn install_man_writes_a_page_for_git_pair_and_for_each_command() {
    let env = TestEnv::new();
    let dir = env.home.join("man");
    let out = env.pair(&[
        "install-man",
        "--dir",
        dir.to_str().expect("utf-8"),
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["beside_binary"], false, "{v}");
    assert!(out.stderr.is_empty(), "{out}");
    let pages: Vec<&str> = v["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    for page in [
        "git-pair.1",
        "git-pair-start.1",
        "git-pair-review.1",
        "git-pair-finish.1",
    ] {
        assert!(pages.contains(&page), "{page} in {pages:?}");
        let text = std::fs::read_to_string(dir.join("man1").join(page)).expect("page written");
        assert!(
            text.starts_with(".ie") || text.contains(".TH"),
            "{page} is roff: {text:.200}"
        );
    }
    assert!(
        !pages.iter().any(|p| p.contains("-hook.")),
        "the hidden hook command has no page"
    );
    let review = std::fs::read_to_string(dir.join("man1/git-pair-review.1")).expect("review page");
    assert!(review.contains("timeout"), "the options are in the page");
    // Not beside the binary: the human view says how man will find it.
    let human = env.pair(&["install-man", "--dir", dir.to_str().expect("utf-8")]);
    assert!(human.stdout.contains("MANPATH"), "{human}");

    if !has("man") {
        eprintln!("man is not installed: the page's lookup is not checked here");
        return;
    }
    let found = Command::new("man")
        .args(["-w", "git-pair-review"])
        .env("MANPATH", &dir)
        .output()
        .expect("man -w");
    assert_eq!(
        String::from_utf8_lossy(&found.stdout).trim(),
        dir.join("man1/git-pair-review.1").display().to_string()
    );
}

/// `<prefix>/bin/git-pair`, a link to (or copy of) the built binary.
fn installed_at(prefix: &Path) -> std::path::PathBuf {
    let bin = prefix.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let exe = bin.join("git-pair");
    if std::fs::hard_link(common::bin(), &exe).is_err() {
        std::fs::copy(common::bin(), &exe).expect("copy git-pair");
    }
    exe
}

#[test]
fn git_help_pair_shows_the_installed_page_with_no_manpath() {
    if !has("man") {
        eprintln!("man is not installed: skipped");
        return;
    }
    let env = TestEnv::new();
    let prefix = env.home.join("prefix");
    let exe = installed_at(&prefix);
    let path = format!(
        "{}:{}",
        prefix.join("bin").display(),
        common::system_bin().display()
    );
    let out = Command::new(&exe)
        .args(["install-man", "--json"])
        .env("PATH", &path)
        .env("HOME", &env.home)
        .output()
        .expect("install-man");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["beside_binary"], true, "{v}");
    assert!(prefix.join("share/man/man1/git-pair.1").is_file());
    for args in [&["help", "pair"][..], &["pair", "--help"][..]] {
        let shown = Command::new("git")
            .args(args)
            .current_dir(&env.repo)
            .env("PATH", &path)
            .env("HOME", &env.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("MANPATH")
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .output()
            .expect("git help");
        let text = String::from_utf8_lossy(&shown.stdout);
        assert!(
            shown.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&shown.stderr)
        );
        assert!(
            text.contains("git-pair") && text.contains("coder-done"),
            "git {args:?}:\n{text}"
        );
    }
}

#[test]
fn completions_are_scripts_the_shells_accept() {
    let env = TestEnv::new();
    let out = env.pair(&["completions", "bash"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stdout.contains("coder-done") && out.stdout.contains("git-pair"),
        "{out}"
    );
    let script = env.home.join("git-pair.bash");
    std::fs::write(&script, &out.stdout).expect("write");
    let checked = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .expect("bash -n");
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    let zsh = env.pair(&["completions", "zsh"]);
    assert!(zsh.stdout.starts_with("#compdef git-pair"), "{zsh}");
    let wrong = env.pair(&["completions", "tcsh"]);
    assert_eq!(wrong.code, 129, "{wrong}");
    assert!(
        wrong.stderr.contains("invalid value 'tcsh'")
            && wrong.stderr.contains("[possible values: bash,"),
        "the usage error names the shells: {wrong}"
    );
    let missing = env.pair(&["completions", "--json"]);
    assert_eq!(missing.code, 129, "{missing}");
    assert!(
        missing.json()["error"]
            .as_str()
            .is_some_and(|e| e.ends_with("provided: <SHELL>")),
        "{missing}"
    );
}
