//! Checkpoints (SPEC §10): create (identity, snapshot, assessment, language), the deferred
//! states, the secret refusal that stores nothing, verify (regressions, checks that run only
//! when confirmed), restore on another machine, archive, compactions, and status.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::common::{TestEnv, assert_one_error_line, record_path};

/// A token the shipped scanner reports as `bearer` (mixed case and digits, so not a
/// placeholder; `Bearer ` and 30 `a`s is one, on purpose).
const TOKEN: &str = "kT9xQ2mZ7vR4pL8wN3yH6jB1cF5dG0sA";

fn create(env: &TestEnv, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["checkpoint", "create"];
    all.extend_from_slice(args);
    env.pair_json(&all)
}

fn id_of(v: &serde_json::Value) -> String {
    v["id"].as_str().expect("id").to_owned()
}

/// The stored checkpoint record (as JSON) of checkpoint `id`, read with real git.
fn stored_record(env: &TestEnv, run_id: &str, kind: &str) -> Vec<serde_json::Value> {
    env.records(run_id)
        .iter()
        .filter(|name| name.contains(&format!("-{kind}-")))
        .map(|name| {
            let text = env.git(&[
                "show",
                &format!("refs/pair/runs/{run_id}:{}", record_path(name)),
            ]);
            serde_json::from_str(&text).expect("record JSON")
        })
        .collect()
}

fn head(env: &TestEnv) -> String {
    env.git(&["rev-parse", "HEAD"]).trim().to_owned()
}

/// `git add -A && git write-tree` on a scratch index: the snapshot git itself would take.
fn git_snapshot(env: &TestEnv) -> String {
    crate::common::git_worktree_tree(&env.repo)
}

fn status_checkpoint(env: &TestEnv) -> serde_json::Value {
    env.pair_json(&["status"])["checkpoint"].clone()
}

#[test]
fn create_records_identity_snapshot_check_and_assessment() {
    let env = TestEnv::new();
    let run_id = env.start("checkpoint task");
    env.write("README", "hello\nchanged\n");
    env.write("src/new.rs", "fn main() {}\n");
    let expected_snapshot = git_snapshot(&env);
    let v = create(
        &env,
        &[
            "--goal",
            "ship the parser",
            "--next",
            "add the error cases",
            "--criterion",
            "all tests pass",
            "--criterion",
            "no new warnings",
            "--verified",
            "happy path tested",
            "--unverified",
            "windows line endings",
            "--check",
            "echo checked; echo warn >&2; exit 0",
            "--context-used",
            "86000",
            "--context-limit",
            "100000",
            "--authorized",
        ],
    );
    let id = id_of(&v);
    assert!(id.starts_with("ck-") && id.len() == 15, "{v}");
    assert_eq!(v["assessment"], "handoff-ready", "{v}");
    assert_eq!(v["status"], expected_snapshot.as_str());
    let records = stored_record(&env, &run_id, "checkpoint");
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(
        v["bytes"],
        serde_json::json!(
            env.git(&[
                "cat-file",
                "-s",
                &format!(
                    "refs/pair/runs/{run_id}:{}",
                    record_path(
                        env.records(&run_id)
                            .iter()
                            .find(|n| n.contains("-checkpoint-"))
                            .expect("record")
                    )
                )
            ])
            .trim()
            .parse::<u64>()
            .expect("size")
        )
    );
    assert_eq!(r["v"], 1);
    assert_eq!(r["checkpoint"], id.as_str());
    assert_eq!(
        r["repo"]["path"],
        env.repo.display().to_string().as_str(),
        "{r}"
    );
    assert_eq!(r["repo"]["head"], head(&env).as_str());
    assert_eq!(r["repo"]["branch"], "main");
    assert_eq!(r["repo"]["status"], expected_snapshot.as_str());
    assert!(!r["repo"]["host"].as_str().expect("host").is_empty());
    assert_eq!(r["check"]["exit_code"], 0);
    assert_eq!(r["check"]["end"], "exited");
    assert_eq!(r["check"]["output_tail"], "checked\nwarn");
    assert_eq!(r["goal"], "ship the parser");
    assert_eq!(r["next"], "add the error cases");
    assert_eq!(r["criteria"][1], "no new warnings");
    assert_eq!(r["verified"][0], "happy path tested");
    assert_eq!(r["unverified"][0], "windows line endings");
    assert_eq!(
        r["context"],
        serde_json::json!({"used": 86000, "limit": 100000})
    );
    assert_eq!(r["authorized"], true);
    // The snapshot travels with the run as a subtree, like a reviewed one.
    let stored = env.git(&[
        "rev-parse",
        &format!("refs/pair/runs/{run_id}:checkpoints/{id}/snapshot"),
    ]);
    assert_eq!(stored.trim(), expected_snapshot);
    assert_eq!(
        status_checkpoint(&env),
        serde_json::json!({"id": id, "assessment": "handoff-ready", "state": "UNVERIFIED", "handed_over": null})
    );
    // Nothing of the user's changed: the work is still uncommitted.
    assert_eq!(env.read("README"), "hello\nchanged\n");
    assert!(env.git(&["status", "--porcelain"]).contains(" M README"));
    env.assert_fsck_clean();
}

#[test]
fn pressure_makes_a_handoff_ready_only_when_authorized() {
    let env = TestEnv::new();
    env.start("t");
    let assess = |args: &[&str]| -> String {
        let mut all = vec!["--next", "go on"];
        all.extend_from_slice(args);
        create(&env, &all)["assessment"]
            .as_str()
            .expect("assessment")
            .to_owned()
    };
    let ctx = ["--context-used", "86000", "--context-limit", "100000"];
    assert_eq!(
        assess(&[&ctx[..], &["--authorized"]].concat()),
        "handoff-ready"
    );
    assert_eq!(assess(&ctx), "continue", "not authorized");
    assert_eq!(
        assess(&[
            "--context-used",
            "50000",
            "--context-limit",
            "100000",
            "--authorized"
        ]),
        "continue"
    );
    env.git(&["config", "pair.handoffThreshold", "0.5"]);
    assert_eq!(
        assess(&[
            "--context-used",
            "50000",
            "--context-limit",
            "100000",
            "--authorized"
        ]),
        "handoff-ready"
    );
    // One without the other is a usage error.
    let out = env.pair(&["checkpoint", "create", "--next", "x", "--context-used", "5"]);
    assert_eq!(out.code, 129, "{out}");
}

#[test]
fn the_reply_language_is_kept_verbatim_and_locale_and_time_zone_are_unspecified() {
    let env = TestEnv::new();
    let run_id = env.start("t");
    let language = "繁體中文（台灣）";
    let id = id_of(&create(
        &env,
        &["--next", "繼續寫測試", "--language", language],
    ));
    let r = &stored_record(&env, &run_id, "checkpoint")[0];
    assert_eq!(r["language"], language);
    assert_eq!(r["locale"], "unspecified");
    assert_eq!(r["time_zone"], "unspecified");
    let prompt = env.pair(&["checkpoint", "show", &id, "--prompt"]);
    assert_eq!(prompt.code, 0, "{prompt}");
    assert!(
        prompt
            .stdout
            .contains("Reply language: 繁體中文（台灣） (as recorded, verbatim). Locale: unspecified. Time zone: unspecified."),
        "{prompt}"
    );
    for step in [
        format!("git pair checkpoint restore {id}"),
        format!("git pair checkpoint verify {id}"),
        format!("git pair checkpoint archive {id}"),
        "Continue with the next action: 繼續寫測試".to_owned(),
    ] {
        assert!(prompt.stdout.contains(&step), "{step}:\n{prompt}");
    }
    // Given explicitly, they are recorded as given; never inferred from the language.
    create(
        &env,
        &[
            "--next",
            "x",
            "--language",
            language,
            "--locale",
            "zh-TW",
            "--time-zone",
            "Asia/Taipei",
        ],
    );
    let r = &stored_record(&env, &run_id, "checkpoint")[1];
    assert_eq!(
        (r["locale"].as_str(), r["time_zone"].as_str()),
        (Some("zh-TW"), Some("Asia/Taipei"))
    );
    let shown = env.pair_json(&["checkpoint", "show", &id]);
    assert_eq!(shown["packet"]["language"], language);
    assert_eq!(shown["state"], "UNVERIFIED");
}

/// Puts the repository in the middle of `what` (real git, except the lock).
fn in_the_middle_of(env: &TestEnv, what: &str) {
    let conflict = |env: &TestEnv| {
        env.git(&["checkout", "-q", "-b", "other"]);
        env.write("README", "other\n");
        env.git(&["commit", "-qam", "other"]);
        env.git(&["checkout", "-q", "main"]);
        env.write("README", "mine\n");
        env.git(&["commit", "-qam", "mine"]);
    };
    match what {
        "merge" => {
            conflict(env);
            assert_ne!(env.git_out(&["merge", "-q", "other"]).code, 0);
        }
        "rebase" => {
            conflict(env);
            assert_ne!(env.git_out(&["rebase", "-q", "other"]).code, 0);
        }
        "rebase --apply" => {
            conflict(env);
            assert_ne!(env.git_out(&["rebase", "--apply", "-q", "other"]).code, 0);
        }
        "cherry-pick" => {
            conflict(env);
            assert_ne!(env.git_out(&["cherry-pick", "other"]).code, 0);
        }
        "revert" => {
            env.write("README", "two\n");
            env.git(&["commit", "-qam", "two"]);
            env.write("README", "three\n");
            env.git(&["commit", "-qam", "three"]);
            assert_ne!(env.git_out(&["revert", "--no-edit", "HEAD~1"]).code, 0);
        }
        "bisect" => {
            env.git(&["bisect", "start"]);
        }
        "index.lock" => {
            std::fs::write(env.repo.join(".git/index.lock"), "").expect("lock");
        }
        other => panic!("unknown state {other}"),
    }
}

#[test]
fn every_in_progress_state_defers_the_handoff_storing_and_running_nothing() {
    for (what, reason) in [
        ("merge", "a merge is in progress (MERGE_HEAD)"),
        (
            "rebase",
            "a rebase (or git am) is in progress (rebase-merge)",
        ),
        (
            "rebase --apply",
            "a rebase (or git am) is in progress (rebase-apply)",
        ),
        (
            "cherry-pick",
            "a cherry-pick is in progress (CHERRY_PICK_HEAD)",
        ),
        ("revert", "a revert is in progress (REVERT_HEAD)"),
        ("bisect", "a bisect is in progress (BISECT_LOG)"),
        (
            "index.lock",
            "the index is locked by another git process (index.lock)",
        ),
    ] {
        let env = TestEnv::new();
        env.start("t");
        in_the_middle_of(&env, what);
        let before = env.pair_refs();
        let marker = env.home.join("check-ran");
        let check = format!("touch '{}'", marker.display());
        let out = env.pair(&[
            "checkpoint",
            "create",
            "--next",
            "x",
            "--authorized",
            "--check",
            &check,
            "--json",
        ]);
        assert_one_error_line(&out, 1, reason);
        assert!(out.stderr.contains("nothing was stored"), "{what}: {out}");
        assert!(out.stderr.contains("hint: "), "{what}: {out}");
        let v = out.json();
        assert_eq!(v["assessment"], "handoff-deferred", "{what}: {v}");
        assert_eq!(v["id"], serde_json::Value::Null);
        assert_eq!(v["reasons"][0], reason);
        assert_eq!(env.pair_refs(), before, "{what}: nothing stored");
        assert!(!marker.exists(), "{what}: the check must not run");
    }
}

#[test]
fn a_secret_anywhere_in_the_packet_is_refused_naming_its_kind_and_nothing_is_stored() {
    let env = TestEnv::new();
    env.start("t");
    let bearer = format!("Bearer {TOKEN}");
    // Flags, a file to write first, and what the error names.
    type Case<'a> = (Vec<String>, Option<(&'a str, String)>, &'a str);
    let cases: Vec<Case> = vec![
        (
            vec!["--next".into(), format!("call it with {bearer}")],
            None,
            "bearer in --next:1",
        ),
        // SPEC §14: `Bearer ` and 20 or more token characters is a secret, whatever they are.
        (
            vec!["--next".into(), format!("use Bearer {}", "a".repeat(30))],
            None,
            "bearer in --next:1",
        ),
        (
            vec![
                "--next".into(),
                "x".into(),
                "--verified".into(),
                "ok".into(),
                "--verified".into(),
                format!("curl -H 'Authorization: {bearer}'"),
            ],
            None,
            "bearer in --verified 2:1",
        ),
        (
            vec!["--next".into(), "x".into()],
            Some(("config/local.env", format!("A=1\nAUTH={bearer}\n"))),
            "bearer in config/local.env:2",
        ),
        (
            vec!["--next".into(), "x".into()],
            Some(("README", format!("hello\n{bearer}\n"))),
            "bearer in README:2",
        ),
        (
            vec![
                "--next".into(),
                "x".into(),
                "--check".into(),
                format!("echo 'debug {bearer}'"),
            ],
            None,
            "bearer in --check:1",
        ),
    ];
    for (args, file, needle) in cases {
        if let Some((path, content)) = &file {
            env.write(path, content);
        }
        let before = env.pair_refs();
        let mut all = vec!["checkpoint", "create", "--json"];
        all.extend(args.iter().map(String::as_str));
        let out = env.pair(&all);
        assert_one_error_line(&out, 1, needle);
        assert!(out.stderr.contains("nothing was stored"), "{out}");
        assert!(
            !out.stdout.contains(TOKEN) && !out.stderr.contains(TOKEN),
            "{out}"
        );
        let v = out.json();
        assert_eq!(v["kinds"][0], "bearer", "{v}");
        assert_eq!(env.pair_refs(), before, "{needle}: refs/pair unchanged");
        // The work tree back as it was for the next case.
        env.git(&["checkout", "-q", "--", "."]);
        env.git(&["clean", "-qfd"]);
    }
    // A check whose output holds a secret: it ran, but nothing is stored.
    let before = env.pair_refs();
    let out = env.pair(&[
        "checkpoint",
        "create",
        "--next",
        "x",
        "--check",
        &format!("printf 'Bear%s %s\\n' er {TOKEN}"),
    ]);
    assert_one_error_line(&out, 1, "bearer in check output:1");
    assert_eq!(env.pair_refs(), before);
    assert!(
        !env.repo.join(".git/pair/checkpoints").exists(),
        "no receipt either"
    );
    // Look-alikes pass: a placeholder is not a secret.
    create(&env, &["--next", "use Authorization: Bearer <token>"]);
}

#[test]
fn packets_are_bounded_and_need_a_next_action() {
    let env = TestEnv::new();
    env.start("t");
    let before = env.pair_refs();
    let out = env.pair(&["checkpoint", "create", "--next", "  "]);
    assert_one_error_line(&out, 129, "--next must not be empty");
    let many: Vec<String> = (0..65)
        .flat_map(|i| ["--criterion".to_owned(), format!("c{i}")])
        .collect();
    let mut args = vec!["checkpoint", "create", "--next", "x"];
    args.extend(many.iter().map(String::as_str));
    assert_one_error_line(
        &env.pair(&args),
        1,
        "too many --criterion values: 65 (at most 64)",
    );
    let big = "x".repeat(65 * 1024);
    let out = env.pair(&["checkpoint", "create", "--next", "x", "--unverified", &big]);
    assert_one_error_line(&out, 1, "at most 65536 (64 KiB)");
    let out = env.pair(&[
        "checkpoint",
        "create",
        "--next",
        "x",
        "--context-used",
        "9",
        "--context-limit",
        "0",
    ]);
    assert_one_error_line(&out, 129, "--context-limit must be a positive");
    assert_eq!(env.pair_refs(), before);
    let out = env.pair(&["checkpoint", "show", "ck-../../etc"]);
    assert_one_error_line(&out, 1, "is not a checkpoint id");
    let out = env.pair(&["checkpoint", "verify", "ck-000000000000"]);
    assert_one_error_line(&out, 1, "no checkpoint ck-000000000000");
}

#[test]
fn a_head_moved_after_the_checkpoint_is_a_regression_naming_both_commits() {
    let env = TestEnv::new();
    env.start("t");
    let id = id_of(&create(&env, &["--next", "x"]));
    let old = head(&env);
    env.write("later.txt", "later\n");
    env.git(&["add", "later.txt"]);
    env.git(&["commit", "-qm", "later"]);
    let new = head(&env);
    let out = env.pair(&["checkpoint", "verify", &id]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stdout.starts_with("HANDOFF REGRESSION\n"), "{out}");
    assert!(
        out.stdout
            .contains(&format!("head: expected {old}, found {new}\n")),
        "{out}"
    );
    assert!(out.stdout.contains("status: expected "), "{out}");
    assert!(!out.stdout.contains("path:"), "{out}");
    assert!(out.stderr.starts_with("error: handoff regression"), "{out}");
    let v = env.pair(&["checkpoint", "verify", &id, "--json"]).json();
    assert_eq!(v["result"], "HANDOFF REGRESSION");
    assert_eq!(
        v["mismatches"][0],
        serde_json::json!({"field": "head", "expected": old, "found": new})
    );
    assert_eq!(status_checkpoint(&env)["state"], "HANDOFF_REGRESSION");
}

#[test]
fn a_failing_check_is_a_regression() {
    let env = TestEnv::new();
    env.start("t");
    let flag = env.home.join("broken");
    let check = format!("test ! -e '{}'", flag.display());
    let id = id_of(&create(&env, &["--next", "x", "--check", &check]));
    assert_eq!(
        env.pair_json(&["checkpoint", "verify", &id])["result"],
        "HANDOFF VERIFIED"
    );
    std::fs::write(&flag, "").expect("flag");
    let out = env.pair(&["checkpoint", "verify", &id]);
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stdout
            .contains("check: expected exit 0, found exit 1\n"),
        "{out}"
    );
    let run_id = env.pair_json(&["status"])["run_id"]
        .as_str()
        .expect("run")
        .to_owned();
    let verifications = stored_record(&env, &run_id, "checkpoint-verified");
    assert_eq!(verifications.len(), 2, "both verifications are recorded");
    assert_eq!(verifications[1]["result"], "HANDOFF REGRESSION");
    assert_eq!(verifications[1]["check"], "exit 1");
}

#[test]
fn archive_refuses_until_verified_then_confirms_and_is_idempotent() {
    let env = TestEnv::new();
    env.start("t");
    env.write("wip.txt", "work in progress\n");
    let id = id_of(&create(&env, &["--next", "x"]));
    let before = env.pair_refs();
    let out = env.pair(&["checkpoint", "archive", &id, "--json"]);
    assert_one_error_line(&out, 1, "cannot be archived yet (UNVERIFIED)");
    assert!(out.stderr.contains("a passing verification"), "{out}");
    let v = out.json();
    assert_eq!(v["state"], "UNVERIFIED");
    assert!(
        v["missing"][0]
            .as_str()
            .expect("missing")
            .contains("verify")
    );
    assert_eq!(env.pair_refs(), before);

    assert_eq!(
        env.pair_json(&["checkpoint", "verify", &id])["result"],
        "HANDOFF VERIFIED"
    );
    assert_eq!(
        status_checkpoint(&env)["state"],
        "HANDOFF_VERIFIED_WITH_SOURCE_STILL_ACTIVE"
    );
    let v = env.pair_json(&["checkpoint", "archive", &id, "--authorize-archive"]);
    assert_eq!(v["state"], "SOURCE_ARCHIVED_CONFIRMED");
    assert_eq!(v["already"], false);
    let archived = env.pair_refs();
    let again = env.pair(&["checkpoint", "archive", &id]);
    assert_eq!(again.code, 0, "{again}");
    assert!(
        again.stdout.starts_with("SOURCE_ARCHIVED_CONFIRMED\n"),
        "{again}"
    );
    assert_eq!(env.pair_refs(), archived, "a repeat records nothing");
    assert_eq!(
        status_checkpoint(&env)["state"],
        "SOURCE_ARCHIVED_CONFIRMED"
    );
    // Archived is a state, not a deletion: the packet and its snapshot are still there.
    let shown = env.pair_json(&["checkpoint", "show", &id]);
    assert_eq!(shown["state"], "SOURCE_ARCHIVED_CONFIRMED");
    assert_eq!(shown["packet"]["next"], "x");
}

#[test]
fn archive_in_a_source_that_changed_after_verification_is_refused_as_still_active() {
    let env = TestEnv::new();
    env.start("t");
    let id = id_of(&create(&env, &["--next", "x"]));
    env.pair_json(&["checkpoint", "verify", &id]);
    env.write("more.txt", "work went on here\n");
    let before = env.pair_refs();
    let out = env.pair(&[
        "checkpoint",
        "archive",
        &id,
        "--json",
        "--authorize-archive",
    ]);
    assert_one_error_line(&out, 1, "HANDOFF_VERIFIED_WITH_SOURCE_STILL_ACTIVE");
    assert_eq!(
        out.json()["state"],
        "HANDOFF_VERIFIED_WITH_SOURCE_STILL_ACTIVE"
    );
    assert_eq!(out.json()["changes"][0]["field"], "status");
    assert_eq!(env.pair_refs(), before);
}

#[test]
fn compactions_are_counted_without_content_and_two_make_an_authorized_task_ready() {
    let env = TestEnv::new();
    let run_id = env.start("t");
    let out = env.pair(&["checkpoint", "compaction"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stdout
            .starts_with("CONTEXT HANDOFF HEALTH CHECK\ncompactions observed: 1"),
        "{out}"
    );
    let v = env.pair_json(&["checkpoint", "compaction", "--authorized"]);
    assert_eq!(
        (v["count"].as_u64(), v["assessment"].as_str()),
        (Some(2), Some("handoff-ready"))
    );
    let unauthorized = env.pair_json(&["checkpoint", "compaction"]);
    assert_eq!(unauthorized["assessment"], "continue");
    // A compaction record holds nothing but that it happened.
    for record in stored_record(&env, &run_id, "compaction") {
        let keys: Vec<&str> = record
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["v", "id", "seq", "at", "kind"], "{record}");
    }
    assert_eq!(env.pair_json(&["status"])["compactions"], 3);
    // A checkpoint made now is ready on the compactions alone.
    let v = create(&env, &["--next", "x", "--authorized"]);
    assert_eq!(v["assessment"], "handoff-ready", "{v}");
    assert!(
        v["reasons"]
            .to_string()
            .contains("3 context compactions observed"),
        "{v}"
    );
}

/// A bare remote and two clones of it.
struct Machines {
    _root: tempfile::TempDir,
    a: TestEnv,
    b: TestEnv,
}

fn two_machines() -> Machines {
    let root = tempfile::tempdir().expect("temp dir");
    let seed = TestEnv::new();
    seed.write("gone.txt", "deleted on A\n");
    seed.write("run.sh", "echo run\n");
    seed.git(&["add", "."]);
    seed.git(&["commit", "-qm", "seed"]);
    let remote = root.path().join("remote.git");
    let remote_path = remote.to_str().expect("utf-8");
    seed.git(&["clone", "-q", "--bare", ".", remote_path]);
    let clone = || {
        let env = TestEnv::empty();
        env.git(&["clone", "-q", remote_path, "."]);
        env
    };
    Machines {
        _root: root,
        a: clone(),
        b: clone(),
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .expect("stat")
        .permissions()
        .mode()
}

#[test]
fn a_checkpoint_travels_to_another_machine_restores_and_verifies() {
    let Machines { _root, a, b } = two_machines();
    // A works on a feature branch the remote has, and leaves uncommitted work of every kind.
    a.git(&["checkout", "-q", "-b", "feature"]);
    a.write("feature.txt", "committed on feature\n");
    a.git(&["add", "feature.txt"]);
    a.git(&["commit", "-qm", "feature"]);
    a.git(&["push", "-q", "origin", "feature"]);
    let run_id = a.start("cross-machine task");
    a.write("README", "hello\nedited on A\n");
    std::fs::remove_file(a.repo.join("gone.txt")).expect("delete");
    std::fs::set_permissions(
        a.repo.join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    a.write("notes/new.txt", "untracked on A\n");
    a.write("tool.sh", "#!/bin/sh\n");
    std::fs::set_permissions(
        a.repo.join("tool.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    std::os::unix::fs::symlink("README", a.repo.join("link")).expect("symlink");
    let check = "test -x tool.sh && test -L link";
    let created = create(&a, &["--next", "finish the feature", "--check", check]);
    let id = id_of(&created);
    let status_a = a.git(&["status", "--porcelain"]);
    a.pair_json(&["push"]);

    // B has never seen the run; it pulls, fetches the branch (a run carries no project
    // history: its base travels with the branch only), restores on its clean work tree,
    // verifies.
    b.pair_json(&["pull"]);
    b.git(&["fetch", "-q", "origin"]);
    assert_eq!(b.git(&["branch", "--show-current"]).trim(), "main");
    let restored = b.pair_json(&["checkpoint", "restore", &id]);
    assert_eq!(restored["checkout"], "new-branch", "{restored}");
    assert_eq!(restored["branch"], "feature");
    assert_eq!(restored["status_matches"], true);
    assert_eq!(b.git(&["branch", "--show-current"]).trim(), "feature");
    assert_eq!(head(&b), head(&a));
    assert_eq!(b.read("README"), "hello\nedited on A\n");
    assert!(
        !b.repo.join("gone.txt").exists(),
        "a deleted file stays deleted"
    );
    assert_eq!(
        mode(&b.repo.join("run.sh")) & 0o111,
        0o111,
        "executable bit"
    );
    assert_eq!(
        mode(&b.repo.join("tool.sh")) & 0o111,
        0o111,
        "new executable"
    );
    assert_eq!(
        std::fs::read_link(b.repo.join("link")).expect("a symlink"),
        PathBuf::from("README")
    );
    assert_eq!(b.read("notes/new.txt"), "untracked on A\n");
    // Uncommitted, as on A: nothing staged, the same status line for line.
    assert_eq!(b.git(&["status", "--porcelain"]), status_a);
    assert_eq!(b.git(&["diff", "--cached", "--name-only"]), "");

    // The path differs; everything else matches. The check runs because B confirms it.
    let strict = b.pair(&["checkpoint", "verify", &id, "--check", check]);
    assert_eq!(strict.code, 1, "{strict}");
    assert_eq!(
        strict.stdout.lines().take(2).collect::<Vec<_>>(),
        [
            "HANDOFF REGRESSION".to_owned(),
            format!(
                "path: expected {}, found {}",
                a.repo.display(),
                b.repo.display()
            )
        ]
    );
    let v = b.pair_json(&[
        "checkpoint",
        "verify",
        &id,
        "--allow-other-path",
        "--check",
        check,
    ]);
    assert_eq!(v["result"], "HANDOFF VERIFIED", "{v}");
    assert_eq!(v["mismatches"], serde_json::json!([]));
    assert_eq!(v["check"]["outcome"], "exit 0");
    assert_eq!(
        b.pair_json(&["checkpoint", "archive", &id, "--authorize-archive"])["state"],
        "SOURCE_ARCHIVED_CONFIRMED"
    );
    // Back on A, the source learns its context is retired.
    b.pair_json(&["push"]);
    a.pair_json(&["pull"]);
    let on_a = a.pair_json(&["status", "--run", &run_id]);
    assert_eq!(
        on_a["checkpoint"]["state"], "SOURCE_ARCHIVED_CONFIRMED",
        "{on_a}"
    );
    assert_eq!(stored_record(&a, &run_id, "checkpoint-verified").len(), 2);
    a.assert_fsck_clean();
    b.assert_fsck_clean();
}

#[test]
fn a_check_recorded_elsewhere_runs_only_once_confirmed() {
    let Machines { _root, a, b } = two_machines();
    a.start("t");
    // The check leaves a marker beside the work tree: proof of whether it ran, and where.
    let check = "touch ../check-ran";
    let id = id_of(&create(&a, &["--next", "x", "--check", check]));
    let a_marker = a.repo.join("../check-ran");
    assert!(a_marker.exists(), "create runs the user's own check");
    std::fs::remove_file(&a_marker).expect("rm");
    // Where it was made, the check runs again without asking (a local receipt says so).
    assert_eq!(
        a.pair_json(&["checkpoint", "verify", &id])["result"],
        "HANDOFF VERIFIED"
    );
    assert!(a_marker.exists());
    a.pair_json(&["push"]);

    b.pair_json(&["pull"]);
    let b_marker = b.repo.join("../check-ran");
    let before = b.pair_refs();
    // Without --allow-other-path here, the hint still names it: following the hint verifies.
    for args in [vec![], vec!["--allow-other-path"]] {
        let mut all = vec!["checkpoint", "verify", &id];
        all.extend(args);
        let out = b.pair(&all);
        assert_one_error_line(&out, 1, "never runs unconfirmed");
        assert!(
            out.stderr.contains(&format!(
                "confirm it: git pair checkpoint verify {id} --allow-other-path --check '{check}'"
            )),
            "{out}"
        );
    }
    let out = b.pair(&["checkpoint", "verify", &id, "--allow-other-path", "--json"]);
    assert_one_error_line(&out, 1, "never runs unconfirmed");
    assert!(
        out.stderr.contains(&format!("--check '{check}'"))
            && out
                .stderr
                .contains(&format!("git config --add pair.trustedChecks '{check}'")),
        "{out}"
    );
    assert_eq!(out.json()["ran"], false);
    assert!(!b_marker.exists(), "the recorded check did not run");
    assert_eq!(b.pair_refs(), before, "nothing recorded");
    // Another command is not a confirmation.
    let out = b.pair(&[
        "checkpoint",
        "verify",
        &id,
        "--allow-other-path",
        "--check",
        "true",
    ]);
    assert_one_error_line(&out, 1, "is not the check");
    assert!(!b_marker.exists());
    // Confirmed through configuration, it runs.
    b.git(&["config", "--add", "pair.trustedChecks", check]);
    let v = b.pair_json(&["checkpoint", "verify", &id, "--allow-other-path"]);
    assert_eq!(v["result"], "HANDOFF VERIFIED", "{v}");
    assert!(b_marker.exists(), "confirmed, it ran");
}

#[test]
fn a_trusted_check_does_not_run_on_files_restored_from_elsewhere() {
    let Machines { _root, a, b } = two_machines();
    a.start("t");
    // The trusted command string stays the same; the file it runs is the checkpoint's.
    let check = "sh run.sh";
    a.write("run.sh", "touch ../hostile-ran\n");
    let id = id_of(&create(&a, &["--next", "x", "--check", check]));
    std::fs::remove_file(a.repo.join("../hostile-ran")).expect("create ran it on A");
    a.pair_json(&["push"]);

    b.git(&["config", "--add", "pair.trustedChecks", check]);
    b.pair_json(&["pull"]);
    b.pair_json(&["checkpoint", "restore", &id]);
    let marker = b.repo.join("../hostile-ran");
    let before = b.pair_refs();
    // Archiving before verifying: the way on names the verify this other work tree needs.
    let out = b.pair(&["checkpoint", "archive", &id, "--authorize-archive"]);
    assert_one_error_line(&out, 1, "cannot be archived yet");
    assert!(
        out.stderr.contains(&format!(
            "run git pair checkpoint verify {id} --allow-other-path where the task continues"
        )) && out.stderr.contains(&format!(
            "hint: verify it where the task continues first: git pair checkpoint verify {id} --allow-other-path\n"
        )),
        "{out}"
    );
    let out = b.pair(&["checkpoint", "verify", &id, "--allow-other-path", "--json"]);
    assert_one_error_line(&out, 1, "laid down by restoring checkpoint");
    assert!(
        out.stderr.contains(&format!(
            "git pair checkpoint verify {id} --allow-other-path --check '{check}'"
        )),
        "{out}"
    );
    assert_eq!(out.json()["ran"], false);
    assert!(
        !marker.exists(),
        "the trusted check ran the restored run.sh"
    );
    assert_eq!(b.pair_refs(), before, "nothing recorded");

    // Confirmed by hand once, it runs; the user has vouched for the tree, so trust holds again.
    let v = b.pair_json(&[
        "checkpoint",
        "verify",
        &id,
        "--allow-other-path",
        "--check",
        check,
    ]);
    assert_eq!(v["result"], "HANDOFF VERIFIED", "{v}");
    assert!(marker.exists(), "confirmed, it ran");
    std::fs::remove_file(&marker).expect("rm");
    let v = b.pair_json(&["checkpoint", "verify", &id, "--allow-other-path"]);
    assert_eq!(v["result"], "HANDOFF VERIFIED", "{v}");
    assert!(marker.exists(), "trusted again after the confirmation");
}

#[test]
fn restore_refuses_a_dirty_tree_a_missing_commit_and_files_in_the_way() {
    let Machines { _root, a, b } = two_machines();
    a.start("t");
    a.write("README", "edited\n");
    a.write("new.txt", "new on A\n");
    let id = id_of(&create(&a, &["--next", "x"]));
    // A second checkpoint on a commit only A has.
    a.git(&["commit", "-qam", "local only"]);
    let local = head(&a);
    let unpushed = id_of(&create(&a, &["--next", "y"]));
    a.pair_json(&["push"]);
    b.pair_json(&["pull"]);
    let b_head = head(&b);

    b.write("mine.txt", "uncommitted on B\n");
    let out = b.pair(&["checkpoint", "restore", &id]);
    assert_one_error_line(&out, 1, "work tree is dirty: mine.txt");
    assert_eq!(b.read("mine.txt"), "uncommitted on B\n");
    std::fs::remove_file(b.repo.join("mine.txt")).expect("rm");

    let out = b.pair(&["checkpoint", "restore", &unpushed]);
    assert_one_error_line(&out, 1, &format!("at commit {local} (branch main)"));
    assert!(
        out.stderr
            .contains("hint: fetch it first (git fetch REMOTE main"),
        "{out}"
    );
    assert_eq!(head(&b), b_head);

    // An ignored file where the snapshot has a new one is never overwritten.
    std::fs::write(b.repo.join(".git/info/exclude"), "HANDOFF.md\nnew.txt\n").expect("exclude");
    b.write("new.txt", "ignored on B, precious\n");
    let out = b.pair(&["checkpoint", "restore", &id]);
    assert_one_error_line(&out, 1, "would overwrite new.txt");
    assert_eq!(b.read("new.txt"), "ignored on B, precious\n");
    assert_eq!(b.read("README"), "hello\n");
    assert_eq!(head(&b), b_head);
}

#[test]
fn restore_detaches_when_the_branch_points_elsewhere_here() {
    let Machines { _root, a, b } = two_machines();
    a.start("t");
    a.write("README", "edited\n");
    let id = id_of(&create(&a, &["--next", "x"]));
    a.pair_json(&["push"]);
    b.pair_json(&["pull"]);
    b.write("b.txt", "b\n");
    b.git(&["add", "b.txt"]);
    b.git(&["commit", "-qm", "B moved main"]);
    let out = b.pair(&["checkpoint", "restore", &id]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stderr
            .contains("branch main exists here at another commit"),
        "{out}"
    );
    assert_eq!(b.git(&["branch", "--show-current"]), "");
    assert_eq!(head(&b), head(&a));
    assert_eq!(b.read("README"), "edited\n");
    let out = b.pair(&["checkpoint", "verify", &id, "--allow-other-path"]);
    assert!(
        out.stdout.contains("branch: expected main, found HEAD"),
        "{out}"
    );
}

// ---------------------------------------------------------------------------------------
// checkpoints without a run, the archive's own rules, standing preferences, and the source
// after a handoff (issue 24)

/// `git pair hook agent-stop` in `env`'s repository, fed a first Stop of a Claude turn.
fn agent_stop(env: &TestEnv) -> crate::common::Output {
    use std::io::Write as _;
    let mut cmd = env.pair_cmd(&["hook", "agent-stop"]);
    cmd.current_dir(&env.repo)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(br#"{"session_id":"s","cwd":"/nowhere","hook_event_name":"Stop","stop_hook_active":false}"#)
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    crate::common::Output {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

#[test]
fn a_checkpoint_without_a_run_stores_head_and_the_uncommitted_work_and_is_never_the_active_run() {
    let env = TestEnv::new();
    env.write(".gitignore", "build/\n");
    env.git(&["add", ".gitignore"]);
    env.git(&["commit", "-qm", "ignore build"]);
    // Mid-task, no run: a tracked edit, an untracked file, an ignored one.
    env.write("README", "hello\nmid-task edit\n");
    env.write("notes/plan.md", "untracked plan\n");
    env.write("build/out.o", "ignored\n");
    let expected_snapshot = git_snapshot(&env);
    let porcelain = env.git(&["status", "--porcelain"]);

    let v = create(&env, &["--next", "finish the parser", "--goal", "a parser"]);
    assert_eq!(v["carrier"], true, "{v}");
    let (id, run_id) = (id_of(&v), v["run_id"].as_str().expect("run").to_owned());
    assert_eq!(v["status"], expected_snapshot.as_str());
    // The work-tree snapshot, untracked included and ignored excluded, is a tree in git.
    let stored = env.git(&[
        "rev-parse",
        &format!("refs/pair/runs/{run_id}:checkpoints/{id}/snapshot"),
    ]);
    assert_eq!(stored.trim(), expected_snapshot);
    let files = env.git(&["ls-tree", "-r", "--name-only", stored.trim()]);
    assert!(files.lines().any(|f| f == "notes/plan.md"), "{files}");
    assert!(!files.contains("build/"), "ignored files stay out: {files}");
    let record = &stored_record(&env, &run_id, "checkpoint")[0];
    assert_eq!(record["repo"]["head"], head(&env).as_str());
    // Nothing of the user's moved: still uncommitted, nothing stashed.
    assert_eq!(env.git(&["status", "--porcelain"]), porcelain);
    assert_eq!(env.git(&["stash", "list"]), "");

    // The run only carries the checkpoint: never the active run, the gate's or the hook's.
    let out = env.pair(&["status"]);
    assert_eq!(out.code, 1, "{out}");
    let out = env.pair(&["coder-done", "--summary", "x"]);
    assert_eq!(out.code, 1, "no active run: {out}");
    assert_eq!(env.pair(&["gate"]).code, 0, "the gate stays open");
    let stop = agent_stop(&env);
    assert_eq!((stop.code, stop.stdout.as_str()), (0, ""), "{stop}");
    let listed = env.pair_json(&["list"]);
    assert_eq!(listed["runs"][0]["run_id"], run_id.as_str());
    assert_eq!(listed["runs"][0]["next_action"], "done");
    assert!(
        !env.repo.join("HANDOFF.md").exists(),
        "a carrier writes no view"
    );
    // A second checkpoint gets a carrier of its own; a real run can start once clean.
    let again = create(&env, &["--next", "x"]);
    assert_ne!(again["run_id"], run_id.as_str());
    env.git(&["stash", "-u", "-q"]);
    let started = env.start("the loop now");
    assert_eq!(env.pair_json(&["status"])["run_id"], started.as_str());
    assert_eq!(create(&env, &["--next", "y"])["carrier"], false);
    env.assert_fsck_clean();
}

#[test]
fn archive_needs_its_own_authorization_and_no_git_operation_in_progress() {
    let env = TestEnv::new();
    env.start("t");
    let id = id_of(&create(&env, &["--next", "x", "--authorized"]));
    // Unverified and unauthorized: both named, and never reported as verified.
    let out = env.pair(&["checkpoint", "archive", &id, "--json"]);
    assert_one_error_line(&out, 1, "cannot be archived yet (UNVERIFIED)");
    let v = out.json();
    assert_eq!(v["state"], "UNVERIFIED");
    let missing = v["missing"].to_string();
    assert!(missing.contains("a passing verification"), "{missing}");
    assert!(missing.contains("--authorize-archive"), "{missing}");
    assert!(
        v["auto_resume_risk"]
            .as_str()
            .is_some_and(|r| r.contains("resume on its own")),
        "{v}"
    );

    env.pair_json(&["checkpoint", "verify", &id]);
    let before = env.pair_refs();
    // Verified, but --authorized (the handoff's) does not authorize the archive.
    let out = env.pair(&["checkpoint", "archive", &id, "--json"]);
    assert_one_error_line(&out, 1, "HANDOFF_VERIFIED_WITH_SOURCE_STILL_ACTIVE");
    assert!(out.stderr.contains("resume on its own"), "{out}");
    let v = out.json();
    assert_eq!(v["state"], "HANDOFF_VERIFIED_WITH_SOURCE_STILL_ACTIVE");
    assert_eq!(v["missing"].as_array().map(Vec::len), Some(1), "{v}");
    assert!(
        v["missing"][0]
            .to_string()
            .contains("pair.archiveAuthorized")
    );
    assert!(
        out.stderr.contains("--authorize-archive"),
        "the hint: {out}"
    );

    // The standing preference authorizes; a git operation in progress still refuses.
    env.git(&["config", "pair.archiveAuthorized", "true"]);
    env.git(&["bisect", "start"]);
    let out = env.pair(&["checkpoint", "archive", &id, "--json"]);
    assert_one_error_line(&out, 1, "HANDOFF_VERIFIED_WITH_SOURCE_STILL_ACTIVE");
    let v = out.json();
    assert_eq!(v["missing"].as_array().map(Vec::len), Some(1), "{v}");
    assert!(
        v["missing"][0]
            .to_string()
            .contains("a bisect is in progress"),
        "{v}"
    );
    assert_eq!(env.pair_refs(), before, "a refusal records nothing");
    env.git(&["bisect", "reset"]);
    let v = env.pair_json(&["checkpoint", "archive", &id]);
    assert_eq!(v["state"], "SOURCE_ARCHIVED_CONFIRMED");
    assert_eq!(
        status_checkpoint(&env)["state"],
        "SOURCE_ARCHIVED_CONFIRMED"
    );
}

#[test]
fn archive_refuses_during_a_rebase() {
    let env = TestEnv::new();
    env.start("t");
    let id = id_of(&create(&env, &["--next", "x"]));
    env.pair_json(&["checkpoint", "verify", &id]);
    in_the_middle_of(&env, "rebase");
    let before = env.pair_refs();
    let out = env.pair(&[
        "checkpoint",
        "archive",
        &id,
        "--authorize-archive",
        "--json",
    ]);
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.json()["missing"]
            .to_string()
            .contains("a rebase (or git am) is in progress"),
        "{out}"
    );
    assert_eq!(env.pair_refs(), before, "nothing recorded");
}

#[test]
fn a_standing_handoff_preference_authorizes_and_a_running_review_defers() {
    let env = TestEnv::new();
    env.start("t");
    let pressure = ["--context-used", "90000", "--context-limit", "100000"];
    let mut args = vec!["--next", "x"];
    args.extend(pressure);
    assert_eq!(create(&env, &args)["assessment"], "continue");
    env.git(&["config", "pair.handoffAuthorized", "true"]);
    let v = create(&env, &args);
    assert_eq!(v["assessment"], "handoff-ready", "{v}");
    let shown = env.pair_json(&["checkpoint", "show", &id_of(&v)]);
    assert_eq!(shown["packet"]["authorized"], true);
    let settings = &env.pair_json(&["status"])["settings"]["handoff-authorized"];
    assert_eq!(settings["value"], true, "{settings}");
    assert_eq!(settings["from"], "pair.handoffAuthorized", "{settings}");
    // A run's own setting wins over configuration, as for every run setting.
    env.pair_json(&["set", "handoff-authorized", "false"]);
    assert_eq!(create(&env, &args)["assessment"], "continue");
    env.pair_json(&["set", "--unset", "handoff-authorized"]);

    // While the loop's own review runs, a handoff waits: nothing is stored.
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "a"]);
    let pid_file = env.home.join("reviewer.pid");
    let hang = format!(
        "[\"{}\"]",
        crate::common::fixtures()
            .join("reviewers")
            .join("hang.sh")
            .display()
    );
    let mut review = env.pair_cmd(&["review", "--reviewer-cmd", &hang, "--timeout", "120"]);
    review
        .env("STUB_PID_FILE", &pid_file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut review = review.spawn().expect("spawn the review");
    assert!(
        crate::common::eventually(std::time::Duration::from_secs(20), || pid_file.exists()),
        "the reviewer never started"
    );
    assert_eq!(env.pair_json(&["status"])["next_action"], "wait:review");
    let before = env.pair_refs();
    let out = env.pair(
        &["checkpoint", "create", "--json"]
            .iter()
            .chain(&args)
            .copied()
            .collect::<Vec<_>>(),
    );
    assert_one_error_line(&out, 1, "handoff deferred");
    assert!(out.stderr.contains("wait:review"), "{out}");
    assert_eq!(out.json()["assessment"], "handoff-deferred");
    assert_eq!(env.pair_refs(), before, "nothing stored");
    let compacted = env.pair_json(&["checkpoint", "compaction"]);
    assert_eq!(compacted["assessment"], "handoff-deferred", "{compacted}");
    review.kill().expect("kill the review");
    review.wait().expect("reap");
}

/// A's checkpoint goes to B through the remote: B restores, verifies, maybe archives, pushes;
/// A pulls.
fn hand_over(a: &TestEnv, b: &TestEnv, id: &str, archive: bool) {
    a.pair_json(&["push"]);
    b.pair_json(&["pull"]);
    b.git(&["fetch", "-q", "origin"]);
    b.pair_json(&["checkpoint", "restore", id]);
    let v = b.pair_json(&["checkpoint", "verify", id, "--allow-other-path"]);
    assert_eq!(v["result"], "HANDOFF VERIFIED", "{v}");
    if archive {
        b.pair_json(&["checkpoint", "archive", id, "--authorize-archive"]);
    }
    b.pair_json(&["push"]);
    a.pair_json(&["pull"]);
}

#[test]
fn a_checkpoint_without_a_run_restores_elsewhere_and_the_source_is_told_where_it_went() {
    let Machines { _root, a, b } = two_machines();
    a.write("README", "hello\nedited on A, no run\n");
    a.write("new.txt", "untracked on A\n");
    let porcelain = a.git(&["status", "--porcelain"]);
    let v = create(&a, &["--next", "go on"]);
    assert_eq!(v["carrier"], true);
    let id = id_of(&v);
    // Before the handoff, the source has no run to report.
    assert_eq!(a.pair(&["status"]).code, 1);
    hand_over(&a, &b, &id, true);
    assert_eq!(b.read("README"), "hello\nedited on A, no run\n");
    assert_eq!(b.git(&["status", "--porcelain"]), porcelain);

    let status = a.pair_json(&["status"]);
    let went = &status["checkpoint"]["handed_over"];
    assert_eq!(
        went["path"],
        b.repo.display().to_string().as_str(),
        "{status}"
    );
    assert_eq!(went["archived"], true);
    assert_eq!(status["checkpoint"]["state"], "SOURCE_ARCHIVED_CONFIRMED");
    let human = a.pair(&["status"]);
    assert!(human.stdout.contains("handed over"), "{human}");
    let stop = agent_stop(&a);
    assert_eq!(stop.code, 0, "{stop}");
    let said = stop.json();
    let message = said["systemMessage"].as_str().expect("a message");
    assert!(
        message.contains(&id) && message.contains(&b.repo.display().to_string()),
        "{message}"
    );
    assert!(said.get("decision").is_none(), "never a block: {stop}");
}

#[test]
fn a_handoffs_source_stops_instead_of_being_sent_to_review() {
    let Machines { _root, a, b } = two_machines();
    let run_id = a.start("handed over mid-round");
    a.write("README", "hello\nunreviewed on A\n");
    // Unreviewed work: the Stop hook blocks, sending the agent to review.
    let stop = agent_stop(&a);
    assert!(stop.stdout.contains("git pair review"), "{stop}");
    let id = id_of(&create(&a, &["--next", "review it on B"]));
    hand_over(&a, &b, &id, false);

    let status = a.pair_json(&["status", "--run", &run_id]);
    let went = &status["checkpoint"]["handed_over"];
    assert_eq!(went["archived"], false, "{status}");
    assert_eq!(went["path"], b.repo.display().to_string().as_str());
    let stop = agent_stop(&a);
    assert_eq!(stop.code, 0, "{stop}");
    let said = stop.json();
    let message = said["systemMessage"].as_str().expect("a message");
    assert!(!message.contains("git pair review"), "{message}");
    assert!(message.contains("may resume on its own"), "{message}");
    assert!(!message.contains("did not go with it"), "{message}");
    // Work done here after the checkpoint is named as left behind.
    a.write("later.txt", "after the checkpoint\n");
    let message = agent_stop(&a).json()["systemMessage"].to_string();
    assert!(message.contains("did not go with it"), "{message}");
    // B, the destination, is not a source: its Stop hook follows the run as usual.
    assert!(
        agent_stop(&b).stdout.contains("git pair"),
        "B has unreviewed work"
    );
}
