//! Commit gating and the agent Stop hook (SPEC §9): `hooks install|uninstall`, `hook <name>`,
//! `gate` and `skill install`, driven through real `git commit`, `git commit --amend` and
//! `git rebase` in temporary repositories, with state read back by real git.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{Output, TestEnv, assert_one_error_line, fixtures, pair_bin, run, system_bin};

fn cmd(script: &str) -> String {
    format!(
        "[\"{}\"]",
        fixtures().join("reviewers").join(script).display()
    )
}

fn reviewed(env: &TestEnv, script: &str) {
    let out = env.pair(&["review", "--reviewer-cmd", &cmd(script)]);
    assert_eq!(out.code, 0, "{out}");
}

/// A run whose one coder round (`src/lib.rs`) the reviewer approved; returns its id.
fn approved_run(env: &TestEnv) -> String {
    let run_id = env.start("Teach the fetcher to retry");
    env.write("src/lib.rs", "pub fn fetch() -> u8 { 1 }\n");
    env.pair_json(&["coder-done", "--summary", "retry"]);
    reviewed(env, "approve.sh");
    run_id
}

/// `PATH` with the binary under test reachable as `git-pair`, as the shims need it.
fn path_with_pair() -> String {
    format!(
        "{}:{}:{}",
        pair_bin().display(),
        fixtures().join("reviewers").display(),
        system_bin().display()
    )
}

/// Real git in the repository, with `git-pair` on `PATH` (hooks run it).
fn git_hooked(env: &TestEnv, args: &[&str]) -> Output {
    git_hooked_env(env, args, &[])
}

fn git_hooked_env(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("git");
    cmd.args(args).current_dir(&env.repo).stdin(Stdio::null());
    env.configure(&mut cmd);
    cmd.env("PATH", path_with_pair());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    run(cmd)
}

fn install(env: &TestEnv, gate: bool) -> Value {
    let mut args = vec!["hooks", "install"];
    if gate {
        args.push("--gate");
    }
    env.pair_json(&args)
}

/// Every file of a directory (recursively): relative path → (mode, bytes).
fn files(dir: &Path) -> BTreeMap<PathBuf, (u32, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).expect("meta");
            if meta.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                let rel = path.strip_prefix(dir).expect("under dir").to_path_buf();
                out.insert(rel, (meta.permissions().mode(), bytes));
            }
        }
    }
    out
}

fn write_hook(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write hook");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn note(env: &TestEnv, rev: &str) -> String {
    env.git(&["notes", "--ref=pair", "show", rev])
}

fn tree(env: &TestEnv, rev: &str) -> String {
    env.git(&["rev-parse", &format!("{rev}^{{tree}}")])
        .trim()
        .to_owned()
}

// ---------------------------------------------------------------------------------------
// hooks install / uninstall

#[test]
fn install_twice_changes_nothing_and_uninstall_restores_byte_identical() {
    let env = TestEnv::new();
    let hooks = env.repo.join(".git/hooks");
    write_hook(
        &hooks.join("pre-commit"),
        "#!/bin/sh\necho user pre-commit >> .git/seen\n",
    );
    write_hook(
        &hooks.join("post-commit"),
        "#!/usr/bin/env perl\nprint STDERR \"user post-commit\\n\";\n",
    );
    let config = env.repo.join(".git/config");
    let hooks_before = files(&hooks);
    let config_before = std::fs::read(&config).expect("config");

    let first = install(&env, false);
    assert_eq!(first["hooks_dir"], hooks.display().to_string(), "{first}");
    let outcomes: Vec<&str> = first["hooks"]
        .as_array()
        .expect("hooks")
        .iter()
        .map(|h| h["outcome"].as_str().expect("outcome"))
        .collect();
    assert_eq!(
        outcomes,
        ["chained", "created", "chained", "created"],
        "{first}"
    );
    assert_eq!(first["notes_rewrite_ref"], "set");
    assert_eq!(
        env.git(&["config", "--get-all", "notes.rewriteRef"]),
        "refs/notes/pair\n"
    );
    let hooks_installed = files(&hooks);
    let config_installed = std::fs::read(&config).expect("config");

    let second = install(&env, false);
    assert!(
        second["hooks"]
            .as_array()
            .expect("hooks")
            .iter()
            .all(|h| h["outcome"] == "already-installed"),
        "{second}"
    );
    assert_eq!(second["notes_rewrite_ref"], "already-set");
    assert_eq!(files(&hooks), hooks_installed, "a second install wrote");
    assert_eq!(std::fs::read(&config).expect("config"), config_installed);

    let out = env.pair(&["hooks", "uninstall"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(out.stdout.contains("restored"), "{out}");
    assert!(
        out.stdout
            .contains("notes.rewriteRef: refs/notes/pair removed"),
        "{out}"
    );
    assert_eq!(files(&hooks), hooks_before, "hooks not restored exactly");
    assert_eq!(
        std::fs::read(&config).expect("config"),
        config_before,
        "config not restored byte for byte"
    );
    assert!(!env.repo.join(".git/pair/hooks-state.json").exists());
}

#[test]
fn a_rewrite_ref_the_user_set_is_left_alone_and_another_value_is_kept() {
    let env = TestEnv::new();
    env.git(&["config", "notes.rewriteRef", "refs/notes/pair"]);
    assert_eq!(install(&env, false)["notes_rewrite_ref"], "already-set");
    let v = env.pair_json(&["hooks", "uninstall"]);
    assert_eq!(v["notes_rewrite_ref"], "left-alone");
    assert_eq!(
        env.git(&["config", "--get-all", "notes.rewriteRef"]),
        "refs/notes/pair\n"
    );

    let env = TestEnv::new();
    env.git(&["config", "notes.rewriteRef", "refs/notes/commits"]);
    let config = env.repo.join(".git/config");
    let before = std::fs::read(&config).expect("config");
    assert_eq!(install(&env, false)["notes_rewrite_ref"], "set");
    assert_eq!(
        env.git(&["config", "--get-all", "notes.rewriteRef"]),
        "refs/notes/commits\nrefs/notes/pair\n"
    );
    assert_eq!(
        env.pair_json(&["hooks", "uninstall"])["notes_rewrite_ref"],
        "unset"
    );
    assert_eq!(std::fs::read(&config).expect("config"), before);
}

#[test]
fn husky_style_core_hooks_path_is_where_the_hooks_go() {
    let env = TestEnv::new();
    let script = "#!/usr/bin/env sh\necho husky-ran >> .git/husky.log\n";
    write_hook(&env.repo.join(".husky/pre-commit"), script);
    env.git(&["add", ".husky"]);
    env.git(&["commit", "-q", "-m", "husky"]);
    env.git(&["config", "core.hooksPath", ".husky"]);
    std::fs::create_dir_all(env.repo.join("sub")).expect("sub");

    // From a subdirectory too: a relative core.hooksPath is relative to the work tree root.
    let v = env.pair_json(&["-C", "sub", "hooks", "install"]);
    assert_eq!(
        v["hooks_dir"],
        env.repo.join(".husky").display().to_string()
    );
    assert_eq!(v["hooks"][0]["outcome"], "chained");
    assert_eq!(v["hooks"][0]["how"], "in-place");
    assert!(!env.repo.join(".git/hooks/pre-commit").exists());

    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    let out = git_hooked(&env, &["commit", "-q", "-m", "a"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(env.read(".git/husky.log"), "husky-ran\n");

    let v = env.pair_json(&["hooks", "uninstall"]);
    assert_eq!(v["hooks"][0]["outcome"], "restored", "{v}");
    assert_eq!(env.read(".husky/pre-commit"), script);
    assert_eq!(env.git(&["status", "--porcelain"]), "");
}

#[test]
fn an_existing_hook_that_fails_still_fails_the_commit() {
    let env = TestEnv::new();
    write_hook(
        &env.repo.join(".git/hooks/pre-commit"),
        "#!/bin/sh\necho user hook says no >&2\nexit 1\n",
    );
    install(&env, false);
    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    let out = git_hooked(&env, &["commit", "-q", "-m", "a"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("user hook says no"), "{out}");
    assert_eq!(env.git(&["rev-list", "--count", "HEAD"]).trim(), "1");
}

#[test]
fn without_git_pair_on_path_the_shims_say_how_to_install_and_block_only_when_gating() {
    let env = TestEnv::new();
    install(&env, false);
    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    // env.git_out's PATH has no git-pair.
    let out = env.git_out(&["commit", "-q", "-m", "a"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(out.stderr.contains("git-pair is not on PATH"), "{out}");
    assert!(out.stderr.contains("cargo install"), "{out}");

    install(&env, true);
    env.write("b.txt", "b\n");
    env.git(&["add", "b.txt"]);
    let out = env.git_out(&["commit", "-q", "-m", "b"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("gated on review"), "{out}");
    assert!(out.stderr.contains("--no-verify"), "{out}");
    assert_eq!(env.git(&["rev-list", "--count", "HEAD"]).trim(), "2");
}

// ---------------------------------------------------------------------------------------
// pre-commit: never-commit paths

#[test]
fn pre_commit_refuses_handoff_md_and_never_commit_paths() {
    let env = TestEnv::new();
    install(&env, false);
    env.start("t");
    assert!(env.repo.join("HANDOFF.md").exists());
    env.git(&["add", "-f", "HANDOFF.md"]);
    let refs = env.pair_refs();

    let out = env.pair(&["hook", "pre-commit"]);
    assert_one_error_line(&out, 1, "HANDOFF.md must never be committed");
    assert!(
        out.stderr.contains("git restore --staged -- HANDOFF.md"),
        "{out}"
    );

    let out = git_hooked(&env, &["commit", "-q", "-m", "oops"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stderr.contains("error: commit refused: HANDOFF.md"),
        "{out}"
    );
    assert_eq!(env.pair_refs(), refs, "a refusal changed stored state");

    env.git(&["restore", "--staged", "--", "HANDOFF.md"]);
    env.git(&["config", "--add", "pair.neverCommit", "*.pem"]);
    env.write("keys/server.pem", "-----\n");
    env.git(&["add", "keys/server.pem"]);
    let out = env.pair(&["hook", "pre-commit"]);
    assert_one_error_line(&out, 1, "keys/server.pem must never be committed");
    assert!(out.stderr.contains("pair.neverCommit: *.pem"), "{out}");

    env.git(&["rm", "-q", "--cached", "keys/server.pem"]);
    assert_eq!(env.pair(&["hook", "pre-commit"]).code, 0);

    // A repository that tracks its own HANDOFF.md empties the list (the default included)
    // with an empty value, git's convention for multi-valued keys.
    env.git(&["config", "--unset-all", "pair.neverCommit"]);
    env.git(&["config", "pair.neverCommit", ""]);
    env.git(&["add", "-f", "HANDOFF.md"]);
    assert_eq!(env.pair(&["hook", "pre-commit"]).code, 0);
}

#[test]
fn the_never_commit_check_measures_against_heads_tree_as_head_moves() {
    // pre-commit compares the index with HEAD's tree through a few kept commit → tree pairs
    // (.git/pair/cache/commit-trees): whichever commit HEAD is, the answer is its own tree.
    let env = TestEnv::new();
    install(&env, false);
    env.git(&["config", "--add", "pair.neverCommit", "*.pem"]);
    let first = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    env.write("keys/server.pem", "-----\n");
    env.git(&["add", "keys/server.pem"]);
    let out = env.pair(&["hook", "pre-commit"]);
    assert_one_error_line(&out, 1, "keys/server.pem must never be committed");
    // Committed past the hook: HEAD now holds it, and an unchanged index adds nothing.
    let out = git_hooked(&env, &["commit", "-q", "--no-verify", "-m", "pem"]);
    assert_eq!(out.code, 0, "{out}");
    let second = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let kept = std::fs::read_to_string(env.repo.join(".git/pair/cache/commit-trees"))
        .expect("post-commit kept HEAD's tree");
    let tree = env.git(&["rev-parse", "HEAD^{tree}"]).trim().to_owned();
    assert!(kept.starts_with(&format!("{second} {tree}\n")), "{kept}");
    assert_eq!(env.pair(&["hook", "pre-commit"]).code, 0);
    // Back on the first commit, the same file staged is added again: refused.
    env.git(&["reset", "-q", "--soft", &first]);
    let out = env.pair(&["hook", "pre-commit"]);
    assert_one_error_line(&out, 1, "keys/server.pem must never be committed");
    // Pairs that do not parse are passed over.
    std::fs::write(
        env.repo.join(".git/pair/cache/commit-trees"),
        "garbage\nzz zz\n\u{1b}[31m\n",
    )
    .expect("write");
    let out = env.pair(&["hook", "pre-commit"]);
    assert_one_error_line(&out, 1, "keys/server.pem must never be committed");
    // A file grown huge is read no further than the pairs kept.
    std::fs::write(
        env.repo.join(".git/pair/cache/commit-trees"),
        "x".repeat(4 << 20),
    )
    .expect("write");
    let out = env.pair(&["hook", "pre-commit"]);
    assert_one_error_line(&out, 1, "keys/server.pem must never be committed");
    env.git(&["reset", "-q", "--soft", &second]);
    assert_eq!(env.pair(&["hook", "pre-commit"]).code, 0);
}

// ---------------------------------------------------------------------------------------
// the gate, trailers and notes through real commits

#[test]
fn the_gate_refuses_unreviewed_work_and_lets_the_approved_snapshot_through() {
    let env = TestEnv::new();
    install(&env, true);
    let run_id = env.start("Teach the fetcher to retry");
    env.write("src/lib.rs", "pub fn fetch() -> u8 { 1 }\n");
    env.pair_json(&["coder-done", "--summary", "retry"]);
    env.git(&["add", "-A"]);
    let refs = env.pair_refs();

    let out = git_hooked(&env, &["commit", "-q", "-m", "wip"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains(&run_id), "{out}");
    assert!(out.stderr.contains("no review of it has approved"), "{out}");
    assert!(out.stderr.contains("git pair review"), "{out}");
    assert!(out.stderr.contains("git commit --no-verify"), "{out}");
    assert_eq!(env.pair_refs(), refs);

    reviewed(&env, "approve.sh");
    // Work beyond the approved snapshot is named.
    env.write("src/extra.rs", "// later\n");
    env.git(&["add", "src/extra.rs"]);
    let refs = env.pair_refs();
    let out = git_hooked(&env, &["commit", "-q", "-m", "more"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stderr.contains(&format!(
            "not the snapshot run {run_id} approved in round 1"
        )),
        "{out}"
    );
    assert!(out.stderr.contains("src/extra.rs (added)"), "{out}");
    assert_eq!(env.pair_refs(), refs, "a refusal changed stored state");

    env.git(&["rm", "-q", "--cached", "src/extra.rs"]);
    std::fs::remove_file(env.repo.join("src/extra.rs")).expect("rm");
    let out = git_hooked(&env, &["commit", "-q", "-m", "Teach the fetcher to retry"]);
    assert_eq!(out.code, 0, "{out}");
    let message = env.git(&["log", "-1", "--format=%B"]);
    assert_eq!(
        message,
        format!(
            "Teach the fetcher to retry\n\nPair-Run: {run_id}\nReviewed-by: command:approve.sh (git-pair round 1)\n\n"
        )
    );
    let line = format!(
        "pair-run={run_id} verdict=APPROVED rounds=1 reviewer=command:approve.sh tree={}\n",
        tree(&env, "HEAD")
    );
    assert_eq!(note(&env, "HEAD"), line);

    // Commit, then finish: the finish writes the run's line again; still one line.
    let v = env.pair_json(&["finish"]);
    let head = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    assert_eq!(v["note_commit"], head.as_str());
    assert_eq!(note(&env, "HEAD"), line);

    // --no-verify bypasses deliberately.
    env.write("c.txt", "c\n");
    env.git(&["add", "c.txt"]);
    let out = git_hooked(&env, &["commit", "-q", "--no-verify", "-m", "c"]);
    assert_eq!(out.code, 0, "{out}");
}

#[test]
fn finish_then_commit_ends_with_the_same_one_line_and_trailers() {
    let env = TestEnv::new();
    install(&env, true);
    let run_id = approved_run(&env);
    let v = env.pair_json(&["finish"]);
    assert_eq!(v["note_commit"], Value::Null);
    env.git(&["add", "-A"]);
    let out = git_hooked(&env, &["commit", "-q", "-m", "Retry"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(env.git(&["log", "-1", "--format=%B"]).contains(&format!(
        "Pair-Run: {run_id}\nReviewed-by: command:approve.sh (git-pair round 1)"
    )),);
    let line = format!(
        "pair-run={run_id} verdict=APPROVED rounds=1 reviewer=command:approve.sh tree={}\n",
        tree(&env, "HEAD")
    );
    assert_eq!(note(&env, "HEAD"), line);
    env.pair_json(&["finish"]);
    assert_eq!(note(&env, "HEAD"), line);
}

#[test]
fn after_finish_the_gate_still_lets_only_the_approved_tree_commit() {
    let env = TestEnv::new();
    install(&env, true);
    let run_id = approved_run(&env);
    env.pair_json(&["finish"]);
    // "finish, then commit" with an unreviewed edit on top: refused, naming the path.
    env.write("src/extra.rs", "// never reviewed\n");
    env.git(&["add", "-A"]);
    let refs = env.pair_refs();
    let out = git_hooked(&env, &["commit", "-q", "-m", "Retry, and more"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stderr.contains(&format!(
            "not the snapshot run {run_id} approved in round 1"
        )),
        "{out}"
    );
    assert!(out.stderr.contains("src/extra.rs (added)"), "{out}");
    assert!(
        out.stderr
            .contains("commit exactly the tree it approved first"),
        "{out}"
    );
    assert!(out.stderr.contains("git pair start"), "{out}");
    assert_eq!(env.git(&["rev-list", "--count", "HEAD"]).trim(), "1");
    assert_eq!(env.pair_refs(), refs, "a refusal changed stored state");
    let out = env.pair(&["gate", "--json"]);
    assert_one_error_line(&out, 1, "src/extra.rs (added)");
    assert_eq!(out.json()["reason"], "differs");
    assert_eq!(out.json()["finished"], true);
    // The Stop hook after finish (`done`) lets the agent stop, edit or not.
    assert_eq!(decision(&env), None);

    // The approved tree alone commits, with its trailers and its note.
    env.git(&["rm", "-q", "--cached", "src/extra.rs"]);
    let out = git_hooked(&env, &["commit", "-q", "-m", "Retry"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(env.git(&["log", "-1", "--format=%B"]).contains(&format!(
        "Pair-Run: {run_id}\nReviewed-by: command:approve.sh (git-pair round 1)"
    )));
    assert_eq!(
        note(&env, "HEAD"),
        format!(
            "pair-run={run_id} verdict=APPROVED rounds=1 reviewer=command:approve.sh tree={}\n",
            tree(&env, "HEAD")
        )
    );
    // Then the extra edit needs a run of its own.
    env.git(&["add", "src/extra.rs"]);
    let out = git_hooked(&env, &["commit", "-q", "-m", "more"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("src/extra.rs (added)"), "{out}");
    assert!(
        out.stderr.contains("its approved tree is committed"),
        "{out}"
    );
    assert!(out.stderr.contains("git pair start"), "{out}");
    assert_eq!(decision(&env), None);
}

#[test]
fn commit_msg_trusts_pre_commits_pass_only_for_the_very_index_it_passed() {
    let env = TestEnv::new();
    install(&env, true);
    let run_id = approved_run(&env);
    env.git(&["add", "-A"]);
    let passed = env.repo.join(".git/pair/gate-passed");
    let out = env.pair(&["hook", "pre-commit", "--gate"]);
    assert_eq!(out.code, 0, "{out}");
    let noted = std::fs::read_to_string(&passed).expect("pre-commit notes its pass");
    assert!(noted.contains(&format!("run {run_id} ")), "{noted}");
    let message = env.home.join("MSG");

    // The index changed after the pass (and the note is put back as it was): re-checked.
    env.write("src/sneak.rs", "// never reviewed\n");
    env.git(&["add", "src/sneak.rs"]);
    std::fs::write(&passed, &noted).expect("restore the note");
    std::fs::write(&message, "Retry\n").expect("message");
    let path = message.to_str().expect("utf-8");
    let out = env.pair(&["hook", "commit-msg", "--gate", path]);
    assert_one_error_line(&out, 1, "src/sneak.rs (added)");
    assert_eq!(
        std::fs::read_to_string(&message).expect("message"),
        "Retry\n"
    );

    // The same index, right after the pass: trusted, trailers added.
    env.git(&["rm", "-q", "--cached", "src/sneak.rs"]);
    let out = env.pair(&["hook", "pre-commit", "--gate"]);
    assert_eq!(out.code, 0, "{out}");
    let out = env.pair(&["hook", "commit-msg", "--gate", path]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        std::fs::read_to_string(&message)
            .expect("message")
            .contains(&format!("Pair-Run: {run_id}")),
    );
    // A real commit leaves no pass behind once it is made.
    let out = git_hooked(&env, &["commit", "-q", "-m", "Retry"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(!passed.exists(), "the pass outlived its commit");
    env.git(&["reset", "-q", "--soft", "HEAD~1"]);

    // A gate that does not pass removes the note; an index without a checksum gets none.
    env.git(&["add", "src/sneak.rs"]);
    let out = env.pair(&["hook", "pre-commit", "--gate"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(!passed.exists(), "a refused index left a pass noted");
    env.git(&["rm", "-q", "--cached", "src/sneak.rs"]);
    env.git(&["config", "index.skipHash", "true"]);
    env.git(&["update-index", "--really-refresh"]);
    env.git(&["read-tree", "HEAD"]);
    env.git(&["add", "-A", "src/lib.rs"]);
    let out = env.pair(&["hook", "pre-commit", "--gate"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        !passed.exists(),
        "a pass noted for an index with no checksum"
    );
}

#[test]
fn a_later_pre_commit_step_that_restages_cannot_sneak_an_unapproved_tree_in() {
    let env = TestEnv::new();
    // A lint-staged-style step of the user's own pre-commit hook: chained after ours, it
    // stages one more file once git pair's check has passed.
    write_hook(
        &env.repo.join(".git/hooks/pre-commit"),
        "#!/bin/sh\nif [ -f .git/sneak ]; then cp .git/sneak src/sneak.rs && git add src/sneak.rs; fi\n",
    );
    install(&env, true);
    let run_id = approved_run(&env);
    env.git(&["add", "-A"]);
    std::fs::write(env.repo.join(".git/sneak"), "// never reviewed\n").expect("sneak");
    let head = env.git(&["rev-parse", "HEAD"]);
    let refs = env.pair_refs();

    let out = git_hooked(&env, &["commit", "-q", "-m", "Retry"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stderr.contains(&format!(
            "not the snapshot run {run_id} approved in round 1"
        )),
        "{out}"
    );
    assert!(out.stderr.contains("src/sneak.rs (added)"), "{out}");
    assert_eq!(
        env.git(&["rev-parse", "HEAD"]),
        head,
        "the re-staged tree was committed"
    );
    assert_eq!(env.pair_refs(), refs, "a refusal changed stored state");

    // The same step staging nothing new lets the approved tree through, trailers and all.
    std::fs::remove_file(env.repo.join(".git/sneak")).expect("rm");
    env.git(&["rm", "-q", "--cached", "src/sneak.rs"]);
    let out = git_hooked(&env, &["commit", "-q", "-m", "Retry"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        env.git(&["log", "-1", "--format=%B"])
            .contains(&format!("Pair-Run: {run_id}\n"))
    );
    assert_eq!(tree(&env, "HEAD"), env.git(&["write-tree"]).trim());
}

#[test]
fn merge_no_ff_is_gated_by_pre_merge_commit_and_cherry_pick_is_left_to_verify() {
    let env = TestEnv::new();
    // Unreviewed work on another branch, made before any run.
    env.git(&["checkout", "-q", "-b", "side"]);
    env.write("side.txt", "never reviewed\n");
    env.git(&["add", "side.txt"]);
    env.git(&["commit", "-q", "-m", "side work"]);
    env.git(&["checkout", "-q", "main"]);
    // A prepare-commit-msg hook of the user's (git pair installs none): it runs after
    // pre-merge-commit, so its mark shows which hook refused.
    write_hook(
        &env.repo.join(".git/hooks/prepare-commit-msg"),
        "#!/bin/sh\ntouch .git/prepare-commit-msg-ran\n",
    );
    let v = install(&env, true);
    let merge_hook = v["hooks"]
        .as_array()
        .expect("hooks")
        .iter()
        .find(|h| h["hook"] == "pre-merge-commit")
        .expect("pre-merge-commit installed")
        .clone();
    assert_eq!(merge_hook["outcome"], "created", "{v}");
    approved_run(&env);
    env.git(&["add", "-A"]);
    let out = git_hooked(&env, &["commit", "-q", "-m", "Retry"]);
    assert_eq!(out.code, 0, "{out}");
    let head = env.git(&["rev-parse", "HEAD"]);
    let _ = std::fs::remove_file(env.repo.join(".git/prepare-commit-msg-ran"));

    let out = git_hooked(&env, &["merge", "--no-ff", "-m", "merge side", "side"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("side.txt (added)"), "{out}");
    assert!(
        !env.repo.join(".git/prepare-commit-msg-ran").exists(),
        "pre-merge-commit did not refuse the merge: {out}"
    );
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
    env.git(&["merge", "--abort"]);

    // cherry-pick runs no hook that can refuse (only prepare-commit-msg and post-commit):
    // the unreviewed commit lands, and only `verify` catches it.
    let out = git_hooked(&env, &["cherry-pick", "side"]);
    assert_eq!(out.code, 0, "{out}");
    let out = env.pair(&["verify", "HEAD~1..HEAD", "--json"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(out.json()["commits"][0]["status"], "unreviewed", "{out}");
}

#[test]
fn a_run_closed_without_approval_keeps_the_gate_closed() {
    let env = TestEnv::new();
    let run_id = env.start("t");
    env.write("src/lib.rs", "one\n");
    env.pair_json(&["abandon"]);
    env.git(&["add", "-A"]);
    let out = env.pair(&["gate", "--json"]);
    assert_one_error_line(
        &out,
        1,
        &format!("run {run_id}, this branch's newest run, is finished without an approval"),
    );
    assert_eq!(out.json()["reason"], "not-approved");
    assert!(out.stderr.contains("git pair start"), "{out}");
    // A new run takes over the gate.
    env.git(&["reset", "-q", "--hard"]);
    env.git(&["clean", "-qfd"]);
    let next = env.start("the next task");
    let out = env.pair(&["gate", "--json"]);
    assert_one_error_line(&out, 1, &next);
}

#[test]
fn amend_and_rebase_keep_the_note() {
    let env = TestEnv::new();
    install(&env, true);
    let run_id = approved_run(&env);
    env.git(&["add", "-A"]);
    let out = git_hooked(&env, &["commit", "-q", "-m", "Retry"]);
    assert_eq!(out.code, 0, "{out}");
    let line = note(&env, "HEAD");
    assert!(line.starts_with(&format!("pair-run={run_id} ")), "{line}");

    let out = git_hooked_env(
        &env,
        &["commit", "-q", "--amend", "-m", "Retry, reworded"],
        &[("GIT_COMMITTER_DATE", "2026-11-30T00:00:00Z")],
    );
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(note(&env, "HEAD"), line, "amend lost or doubled the note");
    let message = env.git(&["log", "-1", "--format=%B"]);
    assert_eq!(message.matches("Pair-Run:").count(), 1, "{message}");

    env.pair_json(&["finish"]);
    env.write("later.txt", "later\n");
    env.git(&["add", "later.txt"]);
    // Unreviewed after finish: the gate refuses it, so it is committed past the gate.
    let out = git_hooked(&env, &["commit", "-q", "--no-verify", "-m", "later"]);
    assert_eq!(out.code, 0, "{out}");
    let approved_before = env.git(&["rev-parse", "HEAD~1"]);
    let out = git_hooked_env(
        &env,
        &["rebase", "-q", "-i", "--force-rebase", "HEAD~2"],
        &[
            ("GIT_SEQUENCE_EDITOR", "true"),
            ("GIT_COMMITTER_DATE", "2026-12-01T00:00:00Z"),
        ],
    );
    assert_eq!(out.code, 0, "{out}");
    let approved_after = env.git(&["rev-parse", "HEAD~1"]);
    assert_ne!(
        approved_before, approved_after,
        "the rebase rewrote nothing"
    );
    assert_eq!(
        note(&env, "HEAD~1"),
        line,
        "rebase lost or doubled the note"
    );
    assert_eq!(
        env.git_out(&["notes", "--ref=pair", "show", "HEAD"]).code,
        1
    );
}

#[test]
fn commit_msg_adds_the_trailers_once_before_comments() {
    let env = TestEnv::new();
    let run_id = approved_run(&env);
    env.git(&["add", "-A"]);
    env.git(&["config", "core.commentChar", ";"]);
    let msg = env.home.join("COMMIT_EDITMSG");
    std::fs::write(&msg, "Retry\n\nBody.\n; Please enter the commit message\n").expect("msg");
    let msg_arg = msg.display().to_string();
    let out = env.pair(&["hook", "commit-msg", &msg_arg]);
    assert_eq!(out.code, 0, "{out}");
    let want = format!(
        "Retry\n\nBody.\n\nPair-Run: {run_id}\nReviewed-by: command:approve.sh (git-pair round 1)\n; Please enter the commit message\n"
    );
    assert_eq!(std::fs::read_to_string(&msg).expect("msg"), want);
    let out = env.pair(&["hook", "commit-msg", &msg_arg, "--json"]);
    assert_eq!(out.json()["trailers"], "already-there", "{out}");
    assert_eq!(std::fs::read_to_string(&msg).expect("msg"), want);

    // Not the approved snapshot: the message is left alone.
    env.write("other.txt", "x\n");
    env.git(&["add", "other.txt"]);
    std::fs::write(&msg, "Other\n").expect("msg");
    assert_eq!(env.pair(&["hook", "commit-msg", &msg_arg]).code, 0);
    assert_eq!(std::fs::read_to_string(&msg).expect("msg"), "Other\n");
}

#[test]
fn post_commit_never_fails_the_commit() {
    let env = TestEnv::new();
    install(&env, false);
    let run_id = env.start("t");
    // A run ref that points at a commit without run state: reading it fails.
    env.git(&["update-ref", &format!("refs/pair/runs/{run_id}"), "HEAD"]);
    let out = env.pair(&["hook", "post-commit"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .starts_with("warning: git pair post-commit hook:"),
        "{out}"
    );
    env.write("a.txt", "a\n");
    env.git(&["add", "a.txt"]);
    let out = git_hooked(&env, &["commit", "-q", "-m", "a"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(out.stderr.contains("warning: git pair"), "{out}");
}

// ---------------------------------------------------------------------------------------
// git pair gate

#[test]
fn gate_exits_0_when_open_and_1_when_closed() {
    let env = TestEnv::new();
    let v = env.pair_json(&["gate"]);
    assert_eq!(v["open"], true);
    assert_eq!(v["reason"], "no-active-run");

    let run_id = env.start("t");
    let out = env.pair(&["gate", "--json"]);
    assert_one_error_line(&out, 1, &run_id);
    assert_eq!(out.json()["open"], false);
    assert_eq!(out.json()["reason"], "not-approved");

    env.write("src/lib.rs", "one\n");
    env.pair_json(&["coder-done", "--summary", "x"]);
    reviewed(&env, "approve.sh");
    // Approved, but not staged: the index still holds the base.
    let out = env.pair(&["gate", "--json"]);
    assert_one_error_line(&out, 1, "src/lib.rs (deleted)");
    let v = out.json();
    assert_eq!(v["reason"], "differs");
    assert_eq!(v["round"], 1);
    assert_eq!(
        v["paths"],
        serde_json::json!([{"path": "src/lib.rs", "change": "deleted"}])
    );
    assert_eq!(v["more"], 0);

    env.git(&["add", "src/lib.rs"]);
    let out = env.pair(&["gate"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stdout
            .starts_with("open: the staged tree is the snapshot run"),
        "{out}"
    );
    let v = env.pair_json(&["gate"]);
    assert_eq!(v["reason"], "approved");
    assert_eq!(v["run_id"], run_id.as_str());

    for i in 0..15 {
        env.write(&format!("many/f{i:02}.txt"), "x\n");
    }
    env.git(&["add", "many"]);
    let out = env.pair(&["gate", "--json"]);
    assert_eq!(out.code, 1, "{out}");
    let v = out.json();
    assert_eq!(v["paths"].as_array().expect("paths").len(), 10);
    assert_eq!(v["more"], 5);
    assert!(out.stderr.contains("and 5 more"), "{out}");
}

// ---------------------------------------------------------------------------------------
// the index against a tree, as git diff-index --cached sees it

#[test]
fn staged_changes_agree_with_git_diff_index() {
    let env = TestEnv::new();
    for (path, text) in [
        ("a/b/c.txt", "c\n"),
        ("a/d.txt", "d\n"),
        ("a-b", "dash\n"),
        ("a0", "zero\n"),
        ("e.sh", "echo e\n"),
        ("q", "file then dir\n"),
        ("x/y/z.txt", "z\n"),
        ("x/y/w.txt", "w\n"),
        ("keep/k.txt", "k\n"),
    ] {
        env.write(path, text);
    }
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "tree"]);
    let base = tree(&env, "HEAD");
    let empty = env
        .git(&["hash-object", "-t", "tree", "/dev/null"])
        .trim()
        .to_owned();

    let check = |label: &str| {
        for against in [base.as_str(), empty.as_str()] {
            let git = env.git(&[
                "diff-index",
                "--cached",
                "--no-renames",
                "--name-status",
                against,
            ]);
            // diff-index lists an intent-to-add path as added; a commit (and write-tree)
            // does not record it, and neither does the comparison.
            let want: Vec<(String, &str)> = git
                .lines()
                .filter(|l| !l.ends_with("\tnever-staged.txt"))
                .map(|l| {
                    let (status, path) = l.split_once('\t').expect("status\tpath");
                    let change = match status {
                        "A" => "added",
                        "D" => "deleted",
                        "M" | "T" => "modified",
                        "U" => "unmerged",
                        other => panic!("unexpected status {other}"),
                    };
                    (path.to_owned(), change)
                })
                .collect();
            let repo = git_pair::store::Repo::open_isolated(&env.repo).expect("open");
            let mut ours: Vec<(String, &str)> = Vec::new();
            git_pair::worktree::staged_changes(
                &repo,
                crate::common::oid(against),
                &mut |path, change| {
                    ours.push((String::from_utf8_lossy(path).into_owned(), change.as_str()))
                },
            )
            .expect("compare");
            assert_eq!(ours, want, "{label}, against {against}");
        }
    };
    check("unchanged");

    env.write("a/b/c.txt", "changed\n");
    std::fs::set_permissions(
        env.repo.join("e.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    env.git(&["rm", "-q", "-r", "x", "q"]);
    env.write("q/r.txt", "now a dir\n");
    env.write("n/m/o.txt", "new\n");
    env.write("a.txt", "sorts between a- and a/\n");
    env.write("ita.txt", "intent\n");
    std::os::unix::fs::symlink("a0", env.repo.join("link")).expect("symlink");
    env.git(&["add", "-A"]);
    env.write("never-staged.txt", "intent only\n");
    env.git(&["add", "-N", "--", "never-staged.txt"]);
    check("changed, cache tree invalidated by git add");
    env.git(&["write-tree"]);
    check("changed, cache tree refreshed by git write-tree");
}

// ---------------------------------------------------------------------------------------
// the agent Stop hook

fn stop_in(env: &TestEnv, dir: &Path, stdin: &str) -> Output {
    let mut cmd = env.pair_cmd(&["hook", "agent-stop"]);
    cmd.current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    Output {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

const STOP: &str = r#"{"session_id":"s","cwd":"/nowhere","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"done"}"#;
const STOP_AGAIN: &str = r#"{"hook_event_name":"Stop","stop_hook_active":true}"#;

/// The decision for `STOP` in the repository: `None` to allow, the reason of a block.
fn decision(env: &TestEnv) -> Option<String> {
    let out = stop_in(env, &env.repo, STOP);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.stderr, "", "{out}");
    if out.stdout.is_empty() {
        return None;
    }
    let v = out.json();
    assert_eq!(v["decision"], "block", "{out}");
    assert_eq!(v.as_object().expect("object").len(), 2, "{out}");
    Some(v["reason"].as_str().expect("reason").to_owned())
}

#[test]
fn the_stop_hook_blocks_only_on_unreviewed_work() {
    let env = TestEnv::new();
    assert_eq!(decision(&env), None, "no run");

    let run_id = env.start("t");
    assert_eq!(decision(&env), None, "code, nothing changed");
    env.write("src/lib.rs", "one\n");
    let reason = decision(&env).expect("code with changes blocks");
    assert!(reason.contains(&run_id), "{reason}");
    assert!(reason.contains("git pair coder-done"), "{reason}");

    env.pair_json(&["coder-done", "--summary", "x"]);
    let reason = decision(&env).expect("review blocks");
    assert!(reason.contains("Run `git pair review`"), "{reason}");
    let out = stop_in(&env, &env.repo, STOP_AGAIN);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "stop_hook_active");

    for bad in ["", "not json", "[1,2]", r#"{"stop_hook_active":"yes"}"#] {
        let out = stop_in(&env, &env.repo, bad);
        assert_eq!(
            (out.code, out.stdout.as_str(), out.stderr.as_str()),
            (0, "", ""),
            "{bad:?}"
        );
    }
    // Outside the repository, the hook follows the cwd the agent sent.
    let from_home = stop_in(
        &env,
        &env.home,
        &STOP.replace("/nowhere", &env.repo.display().to_string()),
    );
    assert!(from_home.stdout.contains("git pair review"), "{from_home}");
    // Not a repository at all: the agent may stop.
    let out = stop_in(&env, &env.home, STOP);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out}");

    reviewed(&env, "request-changes.sh");
    assert_eq!(
        decision(&env),
        None,
        "code after changes requested, nothing changed since"
    );
    env.write("src/lib.rs", "two\n");
    assert!(decision(&env).is_some(), "code, fixed but not recorded");
    env.pair_json(&["coder-done", "--summary", "fixed"]);
    reviewed(&env, "approve.sh");
    assert_eq!(
        decision(&env),
        None,
        "finish, nothing changed since the approval"
    );
    env.write("src/lib.rs", "three\n");
    let reason = decision(&env).expect("finish with later changes blocks");
    assert!(reason.contains("after the approving review"), "{reason}");
    env.write("src/lib.rs", "two\n");
    env.pair_json(&["finish"]);
    env.write("src/lib.rs", "four\n");
    assert_eq!(decision(&env), None, "done");
}

#[test]
fn the_stop_hook_lets_the_agent_stop_when_a_human_decides() {
    // stop:round-cap
    let env = TestEnv::new();
    env.pair_json(&["start", "--task", "t", "--max-rounds", "1"]);
    env.write("a.txt", "1\n");
    env.pair_json(&["coder-done", "--summary", "x"]);
    reviewed(&env, "request-changes.sh");
    assert_eq!(env.pair_json(&["status"])["next_action"], "stop:round-cap");
    env.write("a.txt", "2\n");
    assert_eq!(decision(&env), None, "stop:round-cap");

    // stop:stalled
    let env = TestEnv::new();
    env.start("stall");
    for i in 0..2 {
        env.write("a.txt", &format!("{i}\n"));
        env.pair_json(&["coder-done", "--summary", "x"]);
        reviewed(&env, "request-changes.sh");
    }
    assert_eq!(env.pair_json(&["status"])["next_action"], "stop:stalled");
    env.write("a.txt", "again\n");
    assert_eq!(decision(&env), None, "stop:stalled");

    // stop:budget: the spend of the recorded coder session is over the budget.
    let env = crate::cost::env_with_logs();
    let mut start = env.pair_cmd(&["start", "--task", "t", "--budget-usd", "0.10", "--json"]);
    start.env("GIT_PAIR_NOW", crate::cost::BEFORE_LOGS);
    assert_eq!(run(start).code, 0);
    env.write("a.txt", "a\n");
    env.pair_json(&[
        "coder-done",
        "--summary",
        "x",
        "--session",
        crate::cost::CLAUDE_SESSION,
    ]);
    assert_eq!(env.pair_json(&["status"])["next_action"], "stop:budget");
    assert_eq!(decision(&env), None, "stop:budget");
}

#[test]
fn the_stop_hook_blocks_an_interrupted_review() {
    use git_pair::model::{Body, ReviewDispatch};
    use git_pair::store::{Append, Repo};

    let env = TestEnv::new();
    let run_id = env.start("t");
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "x"]);
    let repo = Repo::open_isolated(&env.repo).expect("open");
    let id = git_pair::model::RunId::parse(&run_id).expect("run id");
    repo.append(&id, |_| {
        Ok(Append::record(
            Body::ReviewDispatch(ReviewDispatch {
                round: 1,
                reviewers: vec!["command".into()],
                snapshot: git_pair::model::TreeId::parse(&tree(&env, "HEAD")).expect("tree id"),
                mode: "code".into(),
                again: false,
                runner: None,
                redacted: Vec::new(),
                over_budget: false,
                parallelism: None,
                carried: Vec::new(),
            }),
            "review 1: dispatched",
        ))
    })
    .expect("append a dispatch that never got its outcome");
    assert_eq!(env.pair_json(&["status"])["next_action"], "resume:review");
    let reason = decision(&env).expect("resume:review blocks");
    assert!(reason.contains("dispatch it again"), "{reason}");
}

// ---------------------------------------------------------------------------------------
// skill install

/// Writes `content` at `name` under the test's home, making its folders.
fn put(env: &TestEnv, name: &str, content: &str) {
    let path = env.home.join(name);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, content).expect("write");
}

#[test]
fn skill_install_leaves_an_agent_with_the_plugin_alone() {
    let env = TestEnv::new();
    // Codex already installed the skill by hand, then the plugin: the copy is listed twice.
    let codex_copy = env.home.join(".agents/skills/pair-loop");
    let out = env.pair(&["skill", "install", "--codex"]);
    assert_eq!(out.code, 0, "{out}");
    put(
        &env,
        ".codex/config.toml",
        "model = \"x\"\n\n[plugins.\"git-pair@git-pair\"]\nenabled = true\n",
    );
    put(
        &env,
        ".claude/plugins/installed_plugins.json",
        r#"{"version":2,"plugins":{"git-pair@git-pair":[{"scope":"user"}]}}"#,
    );
    let out = env.pair(&["skill", "install"]);
    assert_eq!(out.code, 0, "{out}");
    for (agent, seen) in [
        (
            "Claude Code",
            env.home.join(".claude/plugins/installed_plugins.json"),
        ),
        ("Codex", env.home.join(".codex/config.toml")),
    ] {
        assert!(
            out.stdout.contains(&format!(
                "{agent}: the git-pair plugin is installed (named in {})",
                seen.display()
            )),
            "{out}"
        );
    }
    assert!(
        out.stdout.contains(&format!(
            "Codex lists the copy an earlier install left twice: remove it with rm -r '{}'",
            codex_copy.display()
        )),
        "{out}"
    );
    assert!(!env.home.join(".claude/skills").exists(), "no second copy");
    let v = env.pair_json(&["skill", "install", "--claude"]);
    assert_eq!(v["installed"], serde_json::json!([]), "{v}");
    assert_eq!(v["skipped"][0]["agent"], "claude", "{v}");
    // A plugin that is only known, not enabled, in settings.json does not count.
    std::fs::remove_file(env.home.join(".claude/plugins/installed_plugins.json")).expect("rm");
    put(
        &env,
        ".claude/settings.json",
        r#"{"enabledPlugins":{"git-pair@git-pair":false}}"#,
    );
    let v = env.pair_json(&["skill", "install", "--claude"]);
    assert_eq!(v["installed"][0]["agent"], "claude", "{v}");
    // --force installs beside the plugin.
    let v = env.pair_json(&["skill", "install", "--codex", "--force"]);
    assert_eq!(v["installed"][0]["agent"], "codex", "{v}");
}

#[test]
fn skill_install_writes_where_each_agent_reads_and_says_where() {
    let env = TestEnv::new();
    let v = env.pair_json(&["skill", "install", "--project"]);
    let dirs: Vec<&str> = v["installed"]
        .as_array()
        .expect("installed")
        .iter()
        .map(|i| i["dir"].as_str().expect("dir"))
        .collect();
    let claude = env.repo.join(".claude/skills/pair-loop");
    let codex = env.repo.join(".agents/skills/pair-loop");
    assert_eq!(
        dirs,
        [claude.display().to_string(), codex.display().to_string()]
    );
    let skill = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("skills/pair-loop/SKILL.md"),
    )
    .expect("skill");
    assert_eq!(
        std::fs::read_to_string(claude.join("SKILL.md")).expect("claude"),
        skill
    );
    assert_eq!(
        std::fs::read_to_string(codex.join("SKILL.md")).expect("codex"),
        skill
    );
    let out = env.pair(&["skill", "install", "--project"]);
    assert!(out.stdout.contains("up to date"), "{out}");
    // Only the skill's own files land in the work tree; what git pair wrote is recorded
    // inside the git directory.
    assert_eq!(
        env.git(&["status", "--porcelain", "--untracked-files=all"]),
        "?? .agents/skills/pair-loop/SKILL.md\n?? .claude/skills/pair-loop/SKILL.md\n"
    );
    assert!(env.repo.join(".git/pair/skills/codex.json").is_file());

    let out = env.pair(&["skill", "install", "--codex"]);
    assert_eq!(out.code, 0, "{out}");
    let user = env.home.join(".agents/skills/pair-loop");
    assert!(out.stdout.contains(&user.display().to_string()), "{out}");
    assert!(user.join("SKILL.md").exists());
    assert!(!env.home.join(".claude/skills").exists());
    let v = env.pair_json(&["skill", "install", "--claude"]);
    // The hermetic environment sets CLAUDE_CONFIG_DIR=$HOME/.claude.
    assert_eq!(
        v["installed"][0]["dir"],
        env.home
            .join(".claude/skills/pair-loop")
            .display()
            .to_string()
    );
}

#[test]
fn installing_into_a_tracked_hooks_path_says_so_and_how_to_go_on() {
    let env = TestEnv::new();
    env.write(".husky/pre-commit", "#!/bin/sh\nexit 0\n");
    env.git(&["add", ".husky"]);
    env.git(&["commit", "-q", "-m", "husky"]);
    env.git(&["config", "core.hooksPath", ".husky"]);
    let out = env.pair(&["hooks", "install", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["tracked_hooks_dir"], ".husky", "{out}");
    assert!(
        out.stderr.contains("warning: the hooks directory .husky/")
            && out.stderr.contains("git add .husky")
            && out.stderr.contains("git pair hooks uninstall"),
        "{out}"
    );
    // What the warning foretells: the shims are changes in the work tree.
    assert!(!env.git(&["status", "--porcelain"]).is_empty());

    // Hooks under .git say nothing.
    let plain = TestEnv::new();
    let out = plain.pair(&["hooks", "install", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(out.json().get("tracked_hooks_dir").is_none(), "{out}");
    assert!(!out.stderr.contains("warning"), "{out}");
}

#[test]
fn without_the_gate_a_commit_of_other_work_says_verify_will_refuse_it() {
    let env = TestEnv::new();
    install(&env, false);
    let run_id = approved_run(&env);
    env.write("extra.txt", "not reviewed\n");
    env.git(&["add", "-A"]);
    let out = git_hooked(&env, &["commit", "-q", "-m", "More"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stderr.contains(&format!(
            "this commit is not the work run {run_id} approved"
        )) && out.stderr.contains("git pair verify"),
        "{out}"
    );
    assert!(!env.git(&["log", "-1", "--format=%B"]).contains("Pair-Run:"));
    // The approved tree itself commits without the warning, with its note.
    env.git(&["rm", "-q", "extra.txt"]);
    let out = git_hooked(&env, &["commit", "-q", "-m", "Retry"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(!out.stderr.contains("not the work"), "{out}");
    assert!(note(&env, "HEAD").starts_with(&format!("pair-run={run_id} ")));
}
