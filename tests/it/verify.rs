//! `verify`, the team gate: a developer clone runs whole loops and pushes code and review
//! records to a bare remote; a CI clone fetches them with plain `git fetch` and verifies the
//! branch. Every status, the missing-records error, the merge rule, `--json` and `--summary`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{TestEnv, assert_one_error_line, fixtures};

/// The refspecs the README and the error hint give.
const FETCH: [&str; 5] = [
    "fetch",
    "origin",
    "+refs/pair/runs/*:refs/pair/runs/*",
    "+refs/notes/pair:refs/notes/pair",
    "--quiet",
];

/// A bare remote seeded with one commit on `main`, and a developer clone on branch `feature`.
struct Team {
    _root: tempfile::TempDir,
    remote: PathBuf,
    dev: TestEnv,
}

impl Team {
    fn new() -> Team {
        let root = tempfile::tempdir().expect("temp dir");
        let seed = TestEnv::new();
        let remote = root.path().join("remote.git");
        seed.git(&["clone", "-q", "--bare", ".", path(&remote)]);
        let dev = clone_of(&remote);
        dev.git(&["checkout", "-q", "-b", "feature"]);
        Team {
            _root: root,
            remote,
            dev,
        }
    }

    /// Pushes the developer's branches and review records.
    fn publish(&self) {
        self.dev
            .git(&["push", "-q", "--force", "origin", "feature", "main"]);
        self.dev.pair_json(&["push"]);
    }

    /// A CI clone: the code, then the review records by plain `git fetch`, on `feature`
    /// detached (as CI checks a pull request out).
    fn ci(&self) -> TestEnv {
        let ci = self.ci_without_records();
        ci.git(&FETCH);
        ci
    }

    fn ci_without_records(&self) -> TestEnv {
        let ci = clone_of(&self.remote);
        ci.git(&["checkout", "-q", "--detach", "origin/feature"]);
        ci
    }
}

fn clone_of(remote: &Path) -> TestEnv {
    let env = TestEnv::empty();
    env.git(&["clone", "-q", path(remote), "."]);
    env
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

fn reviewer(script: &str) -> String {
    format!(
        "[\"{}\"]",
        fixtures().join("reviewers").join(script).display()
    )
}

/// One whole loop: start, write the files, coder-done, an approving review, commit, finish
/// (which attaches the note). Returns the run id.
fn approved_commit(env: &TestEnv, files: &[(&str, &str)], message: &str) -> String {
    let run_id = env.start(message);
    for (file, content) in files {
        env.write(file, content);
    }
    env.pair_json(&["coder-done", "--summary", message]);
    let out = env.pair(&["review", "--reviewer-cmd", &reviewer("approve.sh")]);
    assert_eq!(out.code, 0, "{out}");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", message]);
    let finished = env.pair_json(&["finish"]);
    assert_eq!(
        finished["note_commit"],
        env.git(&["rev-parse", "HEAD"]).trim()
    );
    run_id
}

fn verify(env: &TestEnv, args: &[&str]) -> (Value, crate::common::Output) {
    let mut all = vec!["verify"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = env.pair(&all);
    let json = out.json();
    (json, out)
}

fn statuses(v: &Value) -> Vec<String> {
    v["commits"]
        .as_array()
        .expect("commits")
        .iter()
        .map(|c| c["status"].as_str().expect("status").to_owned())
        .collect()
}

#[test]
fn a_branch_whose_commits_were_each_approved_passes_in_a_ci_clone() {
    let team = Team::new();
    let first = approved_commit(&team.dev, &[("src/lib.rs", "pub fn a() {}\n")], "add a");
    let second = approved_commit(&team.dev, &[("src/b.rs", "pub fn b() {}\n")], "add b");
    team.publish();

    let ci = team.ci();
    let (v, out) = verify(&ci, &["origin/main..HEAD"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["ok"], true);
    assert_eq!(v["range"], "origin/main..HEAD");
    assert_eq!(statuses(&v), ["approved", "approved"]);
    let commits = v["commits"].as_array().expect("commits");
    assert_eq!(commits[0]["run"], first.as_str());
    assert_eq!(commits[1]["run"], second.as_str());
    assert_eq!(commits[0]["subject"], "add a", "oldest first");
    for c in commits {
        assert_eq!(c["round"], 1);
        assert_eq!(c["reviewer"], "command:approve.sh");
        assert_eq!(c["via"], "note");
        assert_eq!(c["paths"], serde_json::json!([]));
    }
    // Human output: one line per commit and the verdict.
    let human = ci.pair(&["verify", "origin/main..HEAD"]);
    assert_eq!(human.code, 0, "{human}");
    assert!(
        human.stdout.contains("approved              add a"),
        "{human}"
    );
    assert!(
        human
            .stdout
            .contains(&format!("run {first}, round 1, command")),
        "{human}"
    );
    assert!(
        human
            .stdout
            .ends_with("ok: 2 commits in origin/main..HEAD reviewed\n"),
        "{human}"
    );
    assert_eq!(human.stderr, "");
}

#[test]
fn the_plain_git_fetch_of_the_run_refs_alone_is_enough() {
    // The notes did not come (or were lost): each commit is found by its tree.
    let team = Team::new();
    let run_id = approved_commit(&team.dev, &[("a.txt", "a\n")], "add a");
    team.publish();
    let ci = team.ci_without_records();
    ci.git(&[
        "fetch",
        "-q",
        "origin",
        "+refs/pair/runs/*:refs/pair/runs/*",
    ]);
    let (v, out) = verify(&ci, &["origin/main..HEAD"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["commits"][0]["via"], "tree");
    assert_eq!(v["commits"][0]["run"], run_id.as_str());
}

#[test]
fn a_pair_run_trailer_leads_to_the_run_when_there_is_no_note() {
    let team = Team::new();
    let run_id = team.dev.start("trailer");
    team.dev.write("a.txt", "a\n");
    team.dev.pair_json(&["coder-done", "--summary", "a"]);
    let out = team
        .dev
        .pair(&["review", "--reviewer-cmd", &reviewer("approve.sh")]);
    assert_eq!(out.code, 0, "{out}");
    team.dev.git(&["add", "-A"]);
    let trailer = format!("Pair-Run: {run_id}");
    team.dev
        .git(&["commit", "-q", "-m", "add a", "-m", &trailer]);
    team.publish();
    // No run was finished, so the remote has no notes: the `pair*` form of the fetch (as
    // the CI examples use) is not an error, where `refs/notes/pair` would be.
    let ci = team.ci_without_records();
    ci.git(&[
        "fetch",
        "-q",
        "origin",
        "+refs/pair/runs/*:refs/pair/runs/*",
        "+refs/notes/pair*:refs/notes/pair*",
    ]);
    let (v, out) = verify(&ci, &["origin/main..HEAD"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["commits"][0]["via"], "trailer");
    assert_eq!(v["commits"][0]["run"], run_id.as_str());
}

#[test]
fn an_amended_commit_after_approval_fails_naming_the_paths() {
    let team = Team::new();
    let run_id = approved_commit(
        &team.dev,
        &[
            ("src/lib.rs", "pub fn a() {}\n"),
            ("README", "hello\nmore\n"),
        ],
        "add a",
    );
    team.dev.write("src/lib.rs", "pub fn a() { evil() }\n");
    team.dev.write("src/new.rs", "// sneaked in\n");
    team.dev.git(&["add", "-A"]);
    team.dev.git(&["commit", "-q", "--amend", "--no-edit"]);
    team.publish();

    let ci = team.ci();
    let (v, out) = verify(&ci, &["origin/main..HEAD"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(v["ok"], false);
    let c = &v["commits"][0];
    assert_eq!(c["status"], "changed-after-review", "{v}");
    assert_eq!(c["run"], run_id.as_str());
    assert_eq!(c["round"], 1);
    assert_eq!(c["paths"], serde_json::json!(["src/lib.rs", "src/new.rs"]));
    assert!(
        v["error"]
            .as_str()
            .expect("error")
            .contains("1 of 1 commit")
    );

    let human = ci.pair(&["verify", "origin/main..HEAD"]);
    assert_one_error_line(&human, 1, "not approved by a review");
    assert!(human.stdout.contains("changed-after-review"), "{human}");
    assert!(
        human.stdout.contains("\n              src/lib.rs\n"),
        "{human}"
    );
    assert!(human.stdout.contains("FAILED: 1 of 1 commit"), "{human}");
}

#[test]
fn a_commit_made_without_review_fails_as_unreviewed() {
    let team = Team::new();
    approved_commit(&team.dev, &[("a.txt", "a\n")], "add a");
    team.dev.write("b.txt", "b\n");
    team.dev.git(&["add", "b.txt"]);
    team.dev
        .git(&["commit", "-q", "--no-verify", "-m", "add b"]);
    // The default range without an upstream: origin/main..HEAD.
    let (v, out) = verify(&team.dev, &[]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(v["range"], "origin/main..HEAD");
    assert_eq!(statuses(&v), ["approved", "unreviewed"]);
    let c = &v["commits"][1];
    assert_eq!(c["run"], Value::Null);
    assert_eq!(c["paths"], serde_json::json!(["b.txt"]));
    assert_eq!(c["passes"], false);

    // With an upstream, the default is @{upstream}..HEAD.
    team.publish();
    team.dev.git(&["branch", "-q", "-u", "origin/main"]);
    let (v, _) = verify(&team.dev, &[]);
    assert_eq!(v["range"], "@{upstream}..HEAD");
    assert_eq!(statuses(&v), ["approved", "unreviewed"]);
}

#[test]
fn another_tasks_run_from_the_same_commit_is_not_taken_for_this_one() {
    let team = Team::new();
    // A teammate's approved run, started from the same main commit, on another branch.
    let mate = clone_of(&team.remote);
    mate.git(&["checkout", "-q", "-b", "other"]);
    approved_commit(&mate, &[("other.txt", "theirs\n")], "their task");
    mate.git(&["push", "-q", "origin", "other"]);
    mate.pair_json(&["push"]);
    // Here: a commit nobody reviewed, on the same parent.
    team.dev.write("mine.txt", "mine\n");
    team.dev.git(&["add", "mine.txt"]);
    team.dev.git(&["commit", "-q", "-m", "my task"]);
    team.publish();
    let (v, out) = verify(&team.ci(), &["origin/main..HEAD"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(statuses(&v), ["unreviewed"], "{v}");
    assert_eq!(v["commits"][0]["run"], Value::Null);
}

#[test]
fn a_forced_finish_fails_unless_allowed() {
    let team = Team::new();
    let run_id = team.dev.start("forced");
    team.dev.write("a.txt", "a\n");
    team.dev.pair_json(&["coder-done", "--summary", "a"]);
    let out = team
        .dev
        .pair(&["review", "--reviewer-cmd", &reviewer("request-changes.sh")]);
    assert_eq!(out.code, 0, "{out}");
    team.dev.git(&["add", "-A"]);
    team.dev.git(&["commit", "-q", "-m", "forced through"]);
    team.dev.pair_json(&["finish", "--force"]);
    team.publish();

    let ci = team.ci();
    let (v, out) = verify(&ci, &["origin/main..HEAD"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(statuses(&v), ["forced"]);
    assert_eq!(v["commits"][0]["run"], run_id.as_str());
    let (v, out) = verify(&ci, &["origin/main..HEAD", "--allow-forced"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["ok"], true);
    assert_eq!(statuses(&v), ["forced"], "still shown as forced");
}

#[test]
fn a_squash_of_approved_work_whose_final_tree_was_approved_passes() {
    let team = Team::new();
    approved_commit(&team.dev, &[("a.txt", "a\n")], "add a");
    let last = approved_commit(&team.dev, &[("b.txt", "b\n")], "add b");
    team.dev.git(&["reset", "-q", "--soft", "origin/main"]);
    team.dev.git(&["commit", "-q", "-m", "a and b, squashed"]);
    team.publish();

    let (v, out) = verify(&team.ci(), &["origin/main..HEAD"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(statuses(&v), ["approved"]);
    assert_eq!(v["commits"][0]["run"], last.as_str());
    assert_eq!(v["commits"][0]["via"], "tree");
}

#[test]
fn a_note_alone_approves_nothing() {
    let team = Team::new();
    let run_id = approved_commit(&team.dev, &[("a.txt", "a\n")], "add a");
    team.dev.write("b.txt", "b\n");
    team.dev.git(&["add", "b.txt"]);
    team.dev.git(&["commit", "-q", "-m", "add b"]);
    // A forged note naming a real run and this very tree.
    let tree = team.dev.git(&["rev-parse", "HEAD^{tree}"]);
    let line = format!(
        "pair-run={run_id} verdict=APPROVED rounds=1 reviewer=codex cost_usd=0 tree={}",
        tree.trim()
    );
    team.dev
        .git(&["notes", "--ref=pair", "add", "-m", &line, "HEAD"]);
    team.publish();

    let (v, out) = verify(&team.ci(), &["origin/main..HEAD"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(statuses(&v), ["approved", "changed-after-review"]);
    assert_eq!(v["commits"][1]["run"], run_id.as_str());
    assert_eq!(v["commits"][1]["paths"], serde_json::json!(["b.txt"]));
}

/// A commit "main work" on `main`, merged into `feature` (checked out again): a merge that
/// adds nothing of its own.
fn merge_main_work(dev: &TestEnv) {
    dev.git(&["checkout", "-q", "main"]);
    dev.write("main.txt", "m\n");
    dev.git(&["add", "main.txt"]);
    dev.git(&["commit", "-q", "-m", "main work"]);
    dev.git(&["checkout", "-q", "feature"]);
    dev.git(&["merge", "-q", "--no-edit", "main"]);
}

#[test]
fn a_merge_that_adds_nothing_passes_and_one_with_edits_does_not() {
    let team = Team::new();
    let dev = &team.dev;
    approved_commit(dev, &[("feature.txt", "f\n")], "feature work");
    // main moves on meanwhile (outside the range: the trusted base).
    merge_main_work(dev);
    let (v, out) = verify(dev, &["main..feature"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(statuses(&v), ["approved", "approved"]);
    assert_eq!(v["commits"][1]["via"], "parents");
    assert_eq!(v["commits"][1]["run"], Value::Null);

    // The same merge with an edit of its own.
    dev.git(&["reset", "-q", "--hard", "HEAD~1"]);
    dev.git(&["merge", "-q", "--no-commit", "main"]);
    dev.write("README", "edited in the merge\n");
    dev.git(&["add", "README"]);
    dev.git(&["commit", "-q", "--no-edit"]);
    let (v, out) = verify(dev, &["main..feature"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(statuses(&v), ["approved", "unreviewed"]);
    assert_eq!(v["commits"][1]["paths"], serde_json::json!(["README"]));
    // One revision alone verifies that commit only.
    let (v, _) = verify(dev, &["HEAD~1"]);
    assert_eq!(statuses(&v), ["approved"]);
}

#[test]
fn a_fresh_clone_without_the_pair_refs_gets_the_fetch_hint() {
    let team = Team::new();
    approved_commit(&team.dev, &[("a.txt", "a\n")], "add a");
    team.publish();
    let ci = team.ci_without_records();
    let summary = ci.home.join("summary.md");
    let out = ci.pair(&["verify", "origin/main..HEAD", "--summary", path(&summary)]);
    assert_one_error_line(&out, 1, "no review records in this repository");
    assert!(
        out.stderr.contains(
            "hint: fetch them: git fetch origin '+refs/pair/runs/*:refs/pair/runs/*' '+refs/notes/pair:refs/notes/pair'"
        ),
        "{out}"
    );
    assert_eq!(out.stdout, "");
    let text = std::fs::read_to_string(&summary).expect("summary written");
    assert!(text.contains("no review records"), "{text}");
    let json = ci.pair(&["verify", "origin/main..HEAD", "--json"]);
    assert_eq!(json.code, 1);
    assert!(
        json.json()["error"]
            .as_str()
            .expect("error")
            .contains("refs/pair/runs")
    );
    // That exact command makes it work.
    ci.git(&FETCH);
    assert_eq!(ci.pair(&["verify", "origin/main..HEAD"]).code, 0);
}

#[test]
fn json_is_one_compact_object_of_stable_keys() {
    let team = Team::new();
    approved_commit(&team.dev, &[("a.txt", "a\n")], "add a");
    let (v, out) = verify(&team.dev, &["origin/main..HEAD"]);
    assert_eq!(out.stdout.lines().count(), 1, "{out}");
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(&v),
        ["allow_forced", "commits", "malformed_runs", "ok", "range"]
    );
    assert_eq!(v["malformed_runs"], serde_json::json!([]));
    assert_eq!(
        keys(&v["commits"][0]),
        [
            "commit",
            "cost_usd",
            "detail",
            "passes",
            "paths",
            "paths_omitted",
            "reviewer",
            "round",
            "run",
            "status",
            "subject",
            "via"
        ]
    );
    assert_eq!(
        v["commits"][0]["commit"],
        team.dev.git(&["rev-parse", "HEAD"]).trim()
    );
    assert_eq!(v["commits"][0]["cost_usd"], Value::Null, "never measured");
    // An empty range passes with no commits.
    let (v, out) = verify(&team.dev, &["HEAD..HEAD"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["commits"], serde_json::json!([]));
    // A range that does not resolve is one error line.
    let out = team.dev.pair(&["verify", "nosuch..HEAD"]);
    assert_one_error_line(&out, 1, "cannot verify range 'nosuch..HEAD'");
}

#[test]
fn summary_appends_a_markdown_table() {
    let team = Team::new();
    let run_id = approved_commit(&team.dev, &[("a.txt", "a\n")], "add a");
    team.dev.write("b.txt", "b\n");
    team.dev.git(&["add", "b.txt"]);
    team.dev.git(&["commit", "-q", "-m", "add b"]);
    let summary = team.dev.home.join("summary.md");
    std::fs::write(&summary, "earlier step\n").expect("write");
    let out = team
        .dev
        .pair(&["verify", "origin/main..HEAD", "--summary", path(&summary)]);
    assert_eq!(out.code, 1, "{out}");
    let text = std::fs::read_to_string(&summary).expect("summary");
    assert!(
        text.starts_with("earlier step\n### git pair verify `origin/main..HEAD`\n"),
        "{text}"
    );
    assert!(
        text.contains("❌ **1 of 2 commits not approved by a review.**"),
        "{text}"
    );
    assert!(text.contains("| --- | --- |"), "{text}");
    assert!(
        text.contains(&format!(
            "| approved | `{run_id}` | 1 | command:approve.sh | not measured | add a |"
        )),
        "{text}"
    );
    assert!(
        text.contains("| unreviewed | — | — | — | — | add b |"),
        "{text}"
    );
    assert!(text.contains("  - `b.txt`\n"), "{text}");
}

/// Runs `fixtures/ci/verify.sh` in `env` with `git-pair` on `PATH`, as a CI job would.
fn ci_script(env: &TestEnv, summary: &Path) -> crate::common::Output {
    let bin_dir = Path::new(crate::common::bin())
        .parent()
        .expect("the binary's directory");
    ci_script_with_path(env, summary, &format!("{}:", bin_dir.display()))
}

/// `fixtures/ci/verify.sh` with `extra` before the system's tools on `PATH`.
fn ci_script_with_path(env: &TestEnv, summary: &Path, extra: &str) -> crate::common::Output {
    let script = fixtures().join("ci/verify.sh");
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(&script)
        .current_dir(&env.repo)
        .stdin(std::process::Stdio::null());
    env.configure(&mut cmd);
    cmd.env(
        "PATH",
        format!("{extra}{}", crate::common::system_bin().display()),
    )
    .env("SUMMARY", summary)
    .env_remove("GIT_PAIR_REPO")
    .env_remove("GIT_PAIR_REV");
    crate::common::run(cmd)
}

/// The `run: |` script of the workflow step named `name`, unindented.
fn workflow_step(workflow: &str, name: &str) -> String {
    let mut lines = workflow.lines();
    lines
        .by_ref()
        .find(|l| l.trim_start() == format!("- name: {name}"))
        .unwrap_or_else(|| panic!("no step {name}"));
    let run = lines
        .by_ref()
        .find(|l| l.trim_start().starts_with("run: |"))
        .unwrap_or_else(|| panic!("step {name} has no run: | script"));
    let key_indent = run.len() - run.trim_start().len();
    let mut script = String::new();
    for line in lines {
        let indent = line.len() - line.trim_start().len();
        if !line.trim().is_empty() && indent <= key_indent {
            break;
        }
        script.push_str(line.get(key_indent + 2..).unwrap_or(""));
        script.push('\n');
    }
    script
}

/// Runs a workflow step's script with bash (`-e`, as GitHub runs it) and `env`.
fn run_step(script: &str, env: &[(&str, &str)]) -> crate::common::Output {
    let mut cmd = std::process::Command::new("bash");
    cmd.args(["-e", "-c", script])
        .env_clear()
        .env("PATH", crate::common::system_bin())
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    crate::common::run(cmd)
}

#[test]
fn the_ci_script_fetches_the_records_and_gates_the_branch() {
    let team = Team::new();
    approved_commit(&team.dev, &[("a.txt", "a\n")], "add a");
    team.publish();
    let ci = team.ci_without_records();
    let summary = ci.home.join("summary.md");
    let out = ci_script(&ci, &summary);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stdout
            .contains("ok: 1 commit in origin/main..HEAD reviewed"),
        "{out}"
    );
    assert!(
        std::fs::read_to_string(&summary)
            .expect("summary")
            .contains("✅ **All 1 commit reviewed.**")
    );

    // A commit pushed without review turns the gate red.
    team.dev.write("b.txt", "b\n");
    team.dev.git(&["add", "b.txt"]);
    team.dev
        .git(&["commit", "-q", "--no-verify", "-m", "add b"]);
    team.publish();
    ci.git(&["fetch", "-q", "origin"]);
    ci.git(&["checkout", "-q", "--detach", "origin/feature"]);
    let out = ci_script(&ci, &summary);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stdout.contains("unreviewed"), "{out}");
}

#[test]
fn a_checked_out_pr_branch_with_nothing_unpushed_says_how_to_check_it_against_its_base() {
    let team = Team::new();
    approved_commit(&team.dev, &[("a.txt", "a\n")], "add a");
    team.publish();
    // A second clone checks the branch out to look at the PR: it tracks origin/feature.
    let second = clone_of(&team.remote);
    second.git(&["checkout", "-q", "feature"]);
    second.git(&FETCH);
    let out = second.pair(&["verify"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stdout
            .contains("verify @{upstream}..HEAD: no commits in the range")
            && out
                .stdout
                .contains("name it: git pair verify origin/BASE..HEAD"),
        "{out}"
    );
    let out = second.pair(&["verify", "origin/main..HEAD"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stdout
            .contains("ok: 1 commit in origin/main..HEAD reviewed"),
        "{out}"
    );
}

#[test]
fn the_ci_script_says_what_to_set_when_git_pair_is_not_installed() {
    let team = Team::new();
    approved_commit(&team.dev, &[("a.txt", "a\n")], "add a");
    team.publish();
    let ci = team.ci_without_records();
    let summary = ci.home.join("summary.md");
    let out = ci_script_with_path(&ci, &summary, "");
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stderr.contains(
            "error: git-pair is not on PATH and GIT_PAIR_REPO is not set: set GIT_PAIR_REPO to the git URL"
        ),
        "{out}"
    );
    assert!(!out.stderr.contains("cargo"), "{out}");
}

#[test]
fn the_github_workflow_explains_forks_missing_settings_and_the_re_run() {
    let workflow =
        std::fs::read_to_string(fixtures().join("ci/github-pull-request.yml")).expect("workflow");
    let fork = workflow_step(&workflow, "Refuse records from a fork");
    let same = run_step(
        &fork,
        &[("HEAD_REPO", "team/app"), ("THIS_REPO", "team/app")],
    );
    assert_eq!((same.code, same.stdout.as_str()), (0, ""), "{same}");
    let out = run_step(
        &fork,
        &[("HEAD_REPO", "alice/app"), ("THIS_REPO", "team/app")],
    );
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stdout.starts_with("::error::this pull request comes from the fork 'alice/app': its review records (refs/pair/*) live in the fork")
            && out.stdout.contains("git pair pull https://github.com/alice/app, then git pair push"),
        "{out}"
    );

    let settings = workflow_step(&workflow, "Check the git pair install settings");
    let rev = "0123456789abcdef0123456789abcdef01234567";
    let out = run_step(&settings, &[("GIT_PAIR_REPO", ""), ("GIT_PAIR_REV", rev)]);
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stdout
            .starts_with("::error::the repository variable GIT_PAIR_REPO is not set"),
        "{out}"
    );
    let repo = "https://example.com/git-pair.git";
    let out = run_step(
        &settings,
        &[("GIT_PAIR_REPO", repo), ("GIT_PAIR_REV", "v1.0")],
    );
    assert!(
        out.code == 1 && out.stdout.contains("GIT_PAIR_REV"),
        "{out}"
    );
    let out = run_step(&settings, &[("GIT_PAIR_REPO", repo), ("GIT_PAIR_REV", rev)]);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out}");

    // A failed verify says how to re-run once the records are published, and keeps its exit.
    let verify = workflow_step(&workflow, "Verify every commit was reviewed");
    let fake = tempfile::tempdir().expect("temp dir");
    let git = fake.path().join("git");
    std::fs::write(&git, "#!/bin/sh\necho \"verify $*\"\nexit 1\n").expect("fake git");
    std::fs::set_permissions(&git, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let mut cmd = std::process::Command::new("bash");
    cmd.args(["-e", "-c", &verify])
        .env_clear()
        .env(
            "PATH",
            format!(
                "{}:{}",
                fake.path().display(),
                crate::common::system_bin().display()
            ),
        )
        .env("BASE_REF", "master")
        .env("GITHUB_STEP_SUMMARY", "/dev/null")
        .env("GITHUB_RUN_ID", "4242")
        .env("GITHUB_REPOSITORY", "team/app");
    let out = crate::common::run(cmd);
    assert_eq!(out.code, 1, "{out}");
    assert!(
        out.stdout
            .contains("verify pair verify origin/master..HEAD --summary /dev/null"),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("re-run this check with gh run rerun 4242 --failed --repo team/app"),
        "{out}"
    );

    // The build is cached by the commit installed; the cached binary skips cargo.
    assert!(workflow.contains("path: ~/.cargo/bin/git-pair"));
    assert!(workflow.contains("key: git-pair-${{ runner.os }}-${{ vars.GIT_PAIR_REV }}"));
    assert!(workflow.contains("if: steps.cache.outputs.cache-hit != 'true'"));
}

#[test]
fn the_github_workflow_runs_the_same_steps() {
    let workflow =
        std::fs::read_to_string(fixtures().join("ci/github-pull-request.yml")).expect("workflow");
    for needle in [
        "fetch-depth: 0",
        "ref: ${{ github.event.pull_request.head.sha }}",
        "'+refs/pair/runs/*:refs/pair/runs/*'",
        "'+refs/notes/pair*:refs/notes/pair*'",
        "cargo install --locked --git \"$GIT_PAIR_REPO\" --rev \"$GIT_PAIR_REV\" git-pair",
        "BASE_REF: ${{ github.base_ref }}",
        "git pair verify \"origin/$BASE_REF..HEAD\"",
        "--summary \"$GITHUB_STEP_SUMMARY\"",
    ] {
        assert!(workflow.contains(needle), "workflow lacks {needle}");
    }
    // No expression a pull request controls is pasted into a script, and what runs is pinned.
    let mut in_run = false;
    for line in workflow.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("run:") {
            in_run = true;
        } else if trimmed.starts_with("- ") || trimmed.starts_with("env:") {
            in_run = false;
        }
        if in_run || trimmed.starts_with("run:") {
            assert!(
                !line.contains("${{"),
                "an expression in a run: script: {line}"
            );
        }
        if let Some(action) = trimmed
            .strip_prefix("- uses: ")
            .or(trimmed.strip_prefix("uses: "))
        {
            let rev = action.split('@').nth(1).unwrap_or("");
            let rev = rev.split_whitespace().next().unwrap_or("");
            assert!(
                rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()),
                "an action not pinned to a commit: {line}"
            );
            // The release the commit is, beside it: `# vX.Y.Z`.
            let tag = action.split_once(" # v").map(|(_, t)| t).unwrap_or("");
            assert!(
                tag.split('.').count() == 3 && tag.split('.').all(|n| n.parse::<u32>().is_ok()),
                "an action pin without its release tag beside it: {line}"
            );
        }
    }
    assert!(!workflow.contains('\t'), "YAML has no tabs");
}

// ---- Issue 22: a hostile teammate can neither fool nor harm `verify` ----

/// One path of a forged tree: its new content, or `None` to delete it.
type Edit<'a> = (&'a str, Option<&'a str>);

/// Commits the tree of `base` with `edits` applied (`None` deletes a path) through a
/// temporary index: plain git plumbing, as a hostile teammate would. Returns the tree.
fn edited_tree(env: &TestEnv, base: &str, edits: &[Edit]) -> String {
    let index = env.home.join("forge.index");
    let index = path(&index);
    let vars = [("GIT_INDEX_FILE", index)];
    let run = |args: &[&str]| {
        let out = env.git_env(args, &vars);
        assert_eq!(out.code, 0, "git {args:?}: {out}");
        out.stdout
    };
    run(&["read-tree", base]);
    for (file, content) in edits {
        match content {
            Some(content) => {
                let blob = env.git_stdin(&["hash-object", "-w", "--stdin"], content);
                let info = format!("100644,{},{file}", blob.trim());
                run(&["update-index", "--add", "--cacheinfo", &info]);
            }
            None => {
                run(&["update-index", "--force-remove", file]);
            }
        }
    }
    let tree = run(&["write-tree"]).trim().to_owned();
    std::fs::remove_file(index).expect("remove the forge index");
    tree
}

/// Moves run `run_id`'s ref to a forged commit: its tip's tree with `edits` applied. Returns
/// the tip it had, to put back.
fn forge_run(env: &TestEnv, run_id: &str, edits: &[Edit]) -> String {
    let name = format!("refs/pair/runs/{run_id}");
    let tip = env.git(&["rev-parse", &name]).trim().to_owned();
    let tree = edited_tree(env, &tip, edits);
    let message = format!("forged\n\nPair-Run: {run_id}");
    let forged = env.git(&["commit-tree", &tree, "-p", &tip, "-m", &message]);
    env.git(&["update-ref", &name, forged.trim()]);
    tip
}

/// The JSON file at `path` of run `run_id`'s tip, edited by `edit`, as text.
fn edited_json(env: &TestEnv, run_id: &str, path: &str, edit: impl FnOnce(&mut Value)) -> String {
    let text = env.git(&["show", &format!("refs/pair/runs/{run_id}:{path}")]);
    let mut v: Value = serde_json::from_str(&text).expect("stored JSON");
    edit(&mut v);
    v.to_string()
}

/// The record file of `kind` (the first) of run `run_id`, as `records/<bucket>/<name>`.
fn record_path(env: &TestEnv, run_id: &str, kind: &str) -> String {
    // `000004-review-<12 hex>.json`: the kind is exactly what sits between seq and id.
    let name = env
        .records(run_id)
        .into_iter()
        .find(|n| {
            n.split_once('-')
                .and_then(|(_, rest)| rest.rsplit_once('-'))
                .is_some_and(|(k, _)| k == kind)
        })
        .unwrap_or_else(|| panic!("run {run_id} has a {kind} record"));
    crate::common::record_path(&name)
}

#[test]
fn a_merge_with_an_ancestor_parent_brings_nothing_of_its_own() {
    let team = Team::new();
    let dev = &team.dev;
    approved_commit(dev, &[("auth.rs", "fn check() { /* hole */ }\n")], "auth");
    let old = dev.git(&["rev-parse", "HEAD"]).trim().to_owned();
    approved_commit(
        dev,
        &[
            ("auth.rs", "fn check() { verify() }\n"),
            ("auth_test.rs", "#[test] fn hole_stays_closed() {}\n"),
        ],
        "close the hole",
    );
    approved_commit(dev, &[("notes.txt", "more work\n")], "more work");
    // A merge of HEAD with its own old ancestor: it takes the old file back and deletes the
    // newer test, and each file "equals one parent's".
    let head = dev.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let old_auth = format!("{old}:auth.rs");
    let old_blob = dev.git(&["show", &old_auth]);
    let tree = edited_tree(
        dev,
        &head,
        &[("auth.rs", Some(&old_blob)), ("auth_test.rs", None)],
    );
    let merge = dev.git(&["commit-tree", &tree, "-p", &head, "-p", &old, "-m", "merge"]);
    dev.git(&["reset", "-q", "--hard", merge.trim()]);
    let (v, out) = verify(dev, &["origin/main..HEAD"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(
        statuses(&v),
        ["approved", "approved", "approved", "unreviewed"],
        "{v}"
    );
    let c = &v["commits"][3];
    assert_eq!(c["via"], Value::Null);
    assert_eq!(c["paths"], serde_json::json!(["auth.rs", "auth_test.rs"]));

    // A real merge still adds nothing of its own: main moved on, outside the range.
    dev.git(&["reset", "-q", "--hard", &head]);
    dev.git(&["checkout", "-q", "main"]);
    dev.write("main.txt", "m\n");
    dev.git(&["add", "main.txt"]);
    dev.git(&["commit", "-q", "-m", "main work"]);
    dev.git(&["checkout", "-q", "feature"]);
    dev.git(&["merge", "-q", "--no-edit", "main"]);
    let (v, out) = verify(dev, &["main..feature"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["commits"][3]["via"], "parents", "{v}");
}

#[test]
fn a_revert_to_an_old_approved_tree_does_not_pass() {
    let team = Team::new();
    let dev = &team.dev;
    let first = approved_commit(dev, &[("auth.rs", "hole\n")], "auth");
    approved_commit(dev, &[("auth.rs", "fixed\n")], "fix the hole");
    // Revert the reviewed fix: the tree is exactly the first run's approved tree.
    dev.git(&["revert", "--no-edit", "HEAD"]);
    assert_eq!(
        dev.git(&["rev-parse", "HEAD^{tree}"]),
        dev.git(&["rev-parse", "HEAD~2^{tree}"])
    );
    let (v, out) = verify(dev, &["origin/main..HEAD"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(statuses(&v), ["approved", "approved", "unreviewed"], "{v}");
    let c = &v["commits"][2];
    assert_eq!(
        c["run"],
        first.as_str(),
        "the run that approved the tree is named"
    );
    assert_eq!(c["paths"], serde_json::json!(["auth.rs"]));
    let detail = c["detail"].as_str().expect("detail");
    assert!(
        detail.contains("approved this tree")
            && detail.contains("changes auth.rs from a version no review of that run started from"),
        "{detail}"
    );
}

#[test]
fn reordered_approved_commits_pass_only_where_a_reviewer_saw_the_change() {
    let team = Team::new();
    let dev = &team.dev;
    approved_commit(dev, &[("a.txt", "a\n")], "add a");
    approved_commit(dev, &[("b.txt", "b\n")], "add b");
    let a = dev.git(&["rev-parse", "HEAD~1"]).trim().to_owned();
    let b = dev.git(&["rev-parse", "HEAD"]).trim().to_owned();
    dev.git(&["reset", "-q", "--hard", "origin/main"]);
    dev.git(&["cherry-pick", &b]);
    dev.git(&["cherry-pick", &a]);
    let (v, out) = verify(dev, &["origin/main..HEAD"]);
    assert_eq!(out.code, 1, "{out}");
    // b alone on main is a tree nobody approved; a on top of it gives the tree the second
    // run approved, and adding a (from nothing) is what the first run's reviewer saw.
    assert_eq!(statuses(&v), ["unreviewed", "approved"], "{v}");
    assert_eq!(v["commits"][1]["via"], "tree");
}

#[test]
fn several_approved_commits_in_one_run_each_pass() {
    let team = Team::new();
    let dev = &team.dev;
    let run_id = dev.start("two steps");
    for (round, file) in [(1, "one.txt"), (2, "two.txt")] {
        dev.write(file, "step\n");
        dev.pair_json(&["coder-done", "--summary", file]);
        let out = dev.pair(&["review", "--reviewer-cmd", &reviewer("approve.sh")]);
        assert_eq!(out.code, 0, "round {round}: {out}");
        dev.git(&["add", "-A"]);
        dev.git(&["commit", "-q", "-m", file]);
    }
    dev.pair_json(&["finish"]);
    team.publish();
    let (v, out) = verify(&team.ci(), &["origin/main..HEAD"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(statuses(&v), ["approved", "approved"], "{v}");
    for (c, round) in v["commits"].as_array().expect("commits").iter().zip([1, 2]) {
        assert_eq!(c["run"], run_id.as_str());
        assert_eq!(c["round"], round);
    }
}

#[test]
fn a_run_whose_base_is_older_than_the_parent_approves_only_what_it_saw() {
    let team = Team::new();
    let dev = &team.dev;
    dev.write("shared.txt", "old\n");
    dev.git(&["add", "shared.txt"]);
    dev.git(&["commit", "-q", "-m", "shared"]);
    let run_id = dev.start("feature");
    dev.write("feature.txt", "f\n");
    dev.pair_json(&["coder-done", "--summary", "f"]);
    let out = dev.pair(&["review", "--reviewer-cmd", &reviewer("approve.sh")]);
    assert_eq!(out.code, 0, "{out}");
    // Meanwhile the branch moves on past the run's base (someone else's fix).
    dev.write("shared.txt", "new, fixed\n");
    dev.git(&["add", "shared.txt"]);
    dev.git(&["commit", "-q", "-m", "fix shared"]);
    // The approved tree, committed on top: it silently takes the fix back out.
    dev.write("shared.txt", "old\n");
    dev.git(&["add", "-A"]);
    dev.git(&["commit", "-q", "-m", "feature"]);
    let (v, out) = verify(dev, &["HEAD"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(statuses(&v), ["unreviewed"], "{v}");
    let c = &v["commits"][0];
    assert_eq!(c["run"], run_id.as_str());
    assert!(
        c["detail"].as_str().expect("detail").contains("shared.txt"),
        "{c}"
    );
}

#[test]
fn a_snapshot_the_run_reviewed_is_a_before_side_too() {
    // Round 1 requested changes and its snapshot was committed anyway; round 2 approved the
    // next one: the commit on top changes only what round 2's reviewer saw change.
    let team = Team::new();
    let dev = &team.dev;
    let run_id = dev.start("two rounds");
    dev.write("a.txt", "draft\n");
    dev.pair_json(&["coder-done", "--summary", "draft"]);
    let out = dev.pair(&["review", "--reviewer-cmd", &reviewer("request-changes.sh")]);
    assert_eq!(out.code, 0, "{out}");
    dev.git(&["add", "-A"]);
    dev.git(&["commit", "-q", "-m", "draft"]);
    dev.write("a.txt", "final\n");
    dev.pair_json(&["coder-done", "--summary", "final"]);
    let out = dev.pair(&["review", "--reviewer-cmd", &reviewer("approve.sh")]);
    assert_eq!(out.code, 0, "{out}");
    dev.git(&["add", "-A"]);
    dev.git(&["commit", "-q", "-m", "final"]);
    let (v, out) = verify(dev, &["origin/main..HEAD"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(statuses(&v), ["unreviewed", "approved"], "{v}");
    assert_eq!(v["commits"][1]["run"], run_id.as_str());
    assert_eq!(v["commits"][1]["round"], 2);
}

#[test]
fn a_malformed_run_is_reported_and_skipped_and_drop_removes_it_for_good() {
    let team = Team::new();
    let run_id = approved_commit(&team.dev, &[("a.txt", "a\n")], "add a");
    team.publish();
    // A hostile teammate pushes two broken runs with plain git: a run ref naming a blob,
    // and a run whose review record is not JSON.
    let mate = clone_of(&team.remote);
    let blob_run = "20200101-000000-aaaaaa";
    let json_run = "20200102-000000-bbbbbb";
    let blob = mate.git_stdin(&["hash-object", "-w", "--stdin"], "not a run\n");
    mate.git(&[
        "update-ref",
        &format!("refs/pair/runs/{blob_run}"),
        blob.trim(),
    ]);
    mate.git(&[
        "fetch",
        "-q",
        "origin",
        &format!("+refs/pair/runs/{run_id}:refs/pair/runs/{run_id}"),
    ]);
    let tip = mate.git(&["rev-parse", &format!("refs/pair/runs/{run_id}")]);
    let tree = edited_tree(
        &mate,
        tip.trim(),
        &[(
            "records/0000/000099-review-0123456789ab.json",
            Some("{not json"),
        )],
    );
    let commit = mate.git(&["commit-tree", &tree, "-m", "broken"]);
    mate.git(&[
        "update-ref",
        &format!("refs/pair/runs/{json_run}"),
        commit.trim(),
    ]);
    mate.git(&[
        "push",
        "-q",
        "origin",
        &format!("refs/pair/runs/{blob_run}:refs/pair/runs/{blob_run}"),
        &format!("refs/pair/runs/{json_run}:refs/pair/runs/{json_run}"),
    ]);

    // CI fetches the runs with plain git (no notes: every commit is looked up by its tree).
    let ci = team.ci_without_records();
    ci.git(&[
        "fetch",
        "-q",
        "origin",
        "+refs/pair/runs/*:refs/pair/runs/*",
    ]);
    let (v, out) = verify(&ci, &["origin/main..HEAD"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(statuses(&v), ["approved"]);
    assert_eq!(v["commits"][0]["run"], run_id.as_str());
    let bad: Vec<&str> = v["malformed_runs"]
        .as_array()
        .expect("malformed_runs")
        .iter()
        .map(|m| m["run"].as_str().expect("run"))
        .collect();
    assert_eq!(bad, [blob_run, json_run], "{v}");
    let human = ci.pair(&["verify", "origin/main..HEAD"]);
    assert_eq!(human.code, 0, "{human}");
    assert!(
        human.stdout.contains(&format!(
            "warning: run {blob_run} was skipped: it cannot be read"
        )),
        "{human}"
    );

    // list keeps working and names the unreadable one; status is not thrown by it.
    // (A record that is not JSON makes its run unreadable too: the manifest is only a cache,
    // rebuilt from the records.)
    // Newest first, as list prints runs.
    let listed = ci.pair_json(&["list"]);
    assert_eq!(listed["malformed_runs"][0]["run"], json_run, "{listed}");
    assert_eq!(listed["malformed_runs"][1]["run"], blob_run, "{listed}");
    assert_eq!(
        listed["runs"].as_array().expect("runs").len(),
        1,
        "{listed}"
    );
    let human = ci.pair(&["list"]);
    assert_eq!(human.code, 0, "{human}");
    assert!(
        human
            .stdout
            .contains(&format!("remove it with: git pair drop {blob_run}")),
        "{human}"
    );
    let status = ci.pair(&["status"]);
    assert!(!status.stderr.contains("corrupted run"), "{status}");

    // drop removes both (no --force needed: an unreadable run is nobody's active run).
    for bad in [blob_run, json_run] {
        let out = ci.pair(&["drop", bad]);
        assert_eq!(out.code, 0, "drop {bad}: {out}");
    }
    assert!(
        !ci.pair_refs().contains("refs/pair/runs/2020"),
        "{}",
        ci.pair_refs()
    );
    // pull does not bring them back: one is tombstoned, and no ref is made of a blob.
    let out = ci.pair(&["pull", "origin"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        !ci.pair_refs().contains("refs/pair/runs/2020"),
        "{}",
        ci.pair_refs()
    );
    let fresh = clone_of(&team.remote);
    let out = fresh.pair(&["pull", "origin"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        !fresh
            .pair_refs()
            .contains(&format!("refs/pair/runs/{blob_run}")),
        "{}",
        fresh.pair_refs()
    );
}

#[test]
fn a_forged_run_failing_a_consistency_check_approves_nothing() {
    let team = Team::new();
    let dev = &team.dev;
    let run_id = approved_commit(dev, &[("a.txt", "a\n")], "add a");
    let (v, _) = verify(dev, &["HEAD"]);
    assert_eq!(statuses(&v), ["approved"], "the untouched run approves");
    let review = record_path(dev, &run_id, "review");
    let dispatch = record_path(dev, &run_id, "review-dispatch");
    let start = record_path(dev, &run_id, "start");
    let base = dev.git(&["rev-parse", "origin/main"]).trim().to_owned();
    let base_tree = format!("{base}^{{tree}}");
    let orphan = dev.git(&["commit-tree", &base_tree, "-m", "same tree, other history"]);
    let orphan = orphan.trim().to_owned();

    let answer = edited_json(dev, &run_id, "reviews/1/attempts.json", |v| {
        v[0]["attempt"]["answer"] = "Looks fine.\nVERDICT: CHANGES_REQUESTED\n".into();
    });
    let finding = edited_json(dev, &run_id, &review, |v| {
        v["findings"] = serde_json::json!([{
            "n": 1, "category": "bug", "severity": "high", "location": "a.txt:1", "text": "broken"
        }]);
    });
    let start_record = edited_json(dev, &run_id, &start, |v| v["base"] = orphan.clone().into());
    let manifest = edited_json(dev, &run_id, "manifest.json", |v| {
        v["base"] = orphan.clone().into();
    });
    let cases: Vec<(Vec<Edit>, &str)> = vec![
        (
            vec![("reviews/1/attempts.json", Some(&answer))],
            "stored answer in round 1 reads CHANGES_REQUESTED",
        ),
        (
            vec![("reviews/1/attempts.json", None)],
            "round 1 has no stored attempts",
        ),
        (vec![(&dispatch, None)], "has no dispatch record"),
        (
            vec![(&review, Some(&finding))],
            "carries a blocking finding (#1)",
        ),
        (
            vec![("reviews/1/snapshot/extra.txt", Some("x\n"))],
            "the snapshot stored for round 1 is not the tree approved",
        ),
        (
            vec![
                (&start, Some(&start_record)),
                ("manifest.json", Some(&manifest)),
            ],
            "is not an ancestor of the commit",
        ),
    ];
    for (edits, reason) in cases {
        let tip = forge_run(dev, &run_id, &edits);
        let (v, out) = verify(dev, &["HEAD"]);
        assert_eq!(out.code, 1, "{reason}: {out}");
        let c = &v["commits"][0];
        assert_eq!(c["status"], "unreviewed", "{reason}: {v}");
        assert_eq!(c["run"], run_id.as_str(), "{reason}");
        let detail = c["detail"].as_str().expect("detail");
        assert!(detail.contains(reason), "want {reason:?} in {detail:?}");
        dev.git(&["update-ref", &format!("refs/pair/runs/{run_id}"), &tip]);
    }
    let (v, _) = verify(dev, &["HEAD"]);
    assert_eq!(
        statuses(&v),
        ["approved"],
        "the restored run approves again"
    );
}

#[test]
fn without_a_range_or_upstream_verify_checks_from_the_remotes_default_branch() {
    // A `master` repository, checked out detached as CI does: no upstream, no origin/main.
    let root = tempfile::tempdir().expect("temp dir");
    let seed = TestEnv::new();
    seed.git(&["branch", "-m", "master"]);
    let remote = root.path().join("remote.git");
    seed.git(&["clone", "-q", "--bare", ".", path(&remote)]);
    let dev = clone_of(&remote);
    dev.git(&["checkout", "-q", "-b", "feature"]);
    approved_commit(&dev, &[("a.txt", "a\n")], "add a");
    dev.write("b.txt", "b\n");
    dev.git(&["add", "b.txt"]);
    dev.git(&["commit", "-q", "-m", "add b unreviewed"]);
    dev.git(&["push", "-q", "origin", "feature"]);
    dev.pair_json(&["push"]);
    let ci = clone_of(&remote);
    ci.git(&["checkout", "-q", "--detach", "origin/feature"]);
    ci.git(&FETCH);
    assert!(
        ci.git_out(&["rev-parse", "--verify", "-q", "origin/main"])
            .code
            != 0
    );

    let out = ci.pair(&["verify", "--json"]);
    assert_eq!(out.code, 1, "the unreviewed commit is found: {out}");
    let v = out.json();
    assert_eq!(
        v["range"], "origin/master..HEAD",
        "origin/HEAD, by its name: {v}"
    );
    assert_eq!(v["commits"].as_array().map(Vec::len), Some(2), "{v}");

    // The CI script finds the default branch from the remote itself, too.
    let summary = ci.home.join("summary.md");
    let out = ci_script(&ci, &summary);
    assert!(
        out.stdout.contains("origin/master..HEAD") || out.stderr.contains("origin/master..HEAD"),
        "{out}"
    );
}

/// Run `run_id`'s tip, its tree with the stored answer of round 1 turned into CHANGES_REQUESTED
/// (written, not referenced), and the tip's message.
fn answer_turned(env: &TestEnv, run_id: &str) -> (String, String, String) {
    let tip = env
        .git(&["rev-parse", &format!("refs/pair/runs/{run_id}")])
        .trim()
        .to_owned();
    let answer = edited_json(env, run_id, "reviews/1/attempts.json", |v| {
        v[0]["attempt"]["answer"] = "Looks fine.\nVERDICT: CHANGES_REQUESTED\n".into();
    });
    let tree = edited_tree(env, &tip, &[("reviews/1/attempts.json", Some(&answer))]);
    let message = env.git(&["log", "-1", "--format=%B", &tip]);
    (tip, tree, message)
}

/// The `Pair-Approvals:` trailer of commit `rev`, as JSON (`None`: it carries none).
fn carried_approvals(env: &TestEnv, rev: &str) -> Option<Value> {
    let message = env.git(&["log", "-1", "--format=%B", rev]);
    let line = message
        .lines()
        .find_map(|l| l.strip_prefix("Pair-Approvals: "))?;
    Some(serde_json::from_str(line).expect("the trailer is JSON"))
}

#[test]
fn a_runs_tip_carries_its_approvals_and_verify_reads_from_it_what_the_records_say() {
    let team = Team::new();
    let dev = &team.dev;
    let approved = approved_commit(dev, &[("a.txt", "a\n")], "add a");
    // Changes requested, then approved in round 2.
    let twice = dev.start("b in two rounds");
    dev.write("b.txt", "b\n");
    dev.pair_json(&["coder-done", "--summary", "b"]);
    let out = dev.pair(&["review", "--reviewer-cmd", &reviewer("request-changes.sh")]);
    assert_eq!(out.code, 0, "{out}");
    dev.write("b.txt", "b, fixed\n");
    dev.pair_json(&["coder-done", "--summary", "b fixed"]);
    let out = dev.pair(&["review", "--reviewer-cmd", &reviewer("approve.sh")]);
    assert_eq!(out.code, 0, "{out}");
    dev.git(&["add", "-A"]);
    dev.git(&["commit", "-q", "-m", "add b"]);
    dev.pair_json(&["finish"]);
    // Forced through.
    let forced = dev.start("c forced");
    dev.write("c.txt", "c\n");
    dev.pair_json(&["coder-done", "--summary", "c"]);
    dev.pair(&["review", "--reviewer-cmd", &reviewer("request-changes.sh")]);
    dev.git(&["add", "-A"]);
    dev.git(&["commit", "-q", "-m", "add c"]);
    dev.pair_json(&["finish", "--force"]);
    // Approved, then changed before the commit.
    dev.start("d changed after review");
    dev.write("d.txt", "d\n");
    dev.pair_json(&["coder-done", "--summary", "d"]);
    dev.pair(&["review", "--reviewer-cmd", &reviewer("approve.sh")]);
    dev.write("d.txt", "d, changed\n");
    dev.git(&["add", "-A"]);
    dev.git(&["commit", "-q", "--no-verify", "-m", "add d"]);
    team.publish();

    for run in [&approved, &twice, &forced] {
        let tip = format!("refs/pair/runs/{run}");
        let carried = carried_approvals(dev, &tip).expect("the tip carries its approvals");
        let tree = dev.git(&["rev-parse", &format!("{tip}^{{tree}}")]);
        assert_eq!(carried["tree"], tree.trim(), "{carried}");
        assert_eq!(
            carried["facts"]["checks"],
            serde_json::json!([null]),
            "{carried}"
        );
    }
    let with_notes = team.ci();
    let without_notes = team.ci_without_records();
    without_notes.git(&[
        "fetch",
        "-q",
        "origin",
        "+refs/pair/runs/*:refs/pair/runs/*",
    ]);
    for ci in [&with_notes, &without_notes] {
        let (carried, out) = verify(ci, &["origin/main..HEAD", "--allow-forced"]);
        assert_eq!(out.code, 1, "{out}");
        assert_eq!(
            statuses(&carried),
            ["approved", "approved", "forced", "changed-after-review"],
            "{carried}"
        );
        let read = ci.pair_env(
            &["verify", "origin/main..HEAD", "--allow-forced", "--json"],
            &[("GIT_PAIR_TEST_VERIFY_READS_RECORDS", "1")],
        );
        assert_eq!(read.json(), carried, "read from the records");
    }
}

#[test]
fn a_forged_tree_under_the_tips_own_message_is_checked_from_its_records() {
    let team = Team::new();
    let dev = &team.dev;
    let run_id = approved_commit(dev, &[("a.txt", "a\n")], "add a");
    let name = format!("refs/pair/runs/{run_id}");
    // The honest tip's message, trailers and all, over the edited tree.
    let (tip, tree, message) = answer_turned(dev, &run_id);
    assert!(carried_approvals(dev, &tip).is_some());
    let forged = dev.git(&["commit-tree", &tree, "-p", &tip, "-m", &message]);
    dev.git(&["update-ref", &name, forged.trim()]);
    let (v, out) = verify(dev, &["HEAD"]);
    assert_eq!(out.code, 1, "{out}");
    let c = &v["commits"][0];
    assert_eq!(c["status"], "unreviewed", "{v}");
    let detail = c["detail"].as_str().expect("detail");
    assert!(detail.contains("reads CHANGES_REQUESTED"), "{detail}");
}

#[test]
fn pull_checks_the_approvals_a_fetched_tip_carries_against_its_records() {
    let team = Team::new();
    let dev = &team.dev;
    let run_id = approved_commit(dev, &[("a.txt", "a\n")], "add a");
    team.publish();
    // Someone with push access rewrites the stored answer and writes the trailer a forger
    // would: the approval checked, on the forged tree.
    let name = format!("refs/pair/runs/{run_id}");
    let (tip, tree, message) = answer_turned(dev, &run_id);
    let old_tree = dev.git(&["rev-parse", &format!("{tip}^{{tree}}")]);
    let hostile = message.replace(old_tree.trim(), &tree);
    assert_ne!(hostile, message);
    let forged = dev.git(&["commit-tree", &tree, "-p", &tip, "-m", &hostile]);
    let forged = forged.trim().to_owned();
    dev.git(&[
        "push",
        "-q",
        "--force",
        "origin",
        &format!("{forged}:{name}"),
    ]);

    // A plain fetch takes the trailer as the records (forged records are not caught: the
    // trust model, SECURITY.md).
    let ci = team.ci();
    let (v, _) = verify(&ci, &["origin/main..HEAD"]);
    assert_eq!(statuses(&v), ["approved"], "{v}");
    // `git pair pull` checks it against the records, and puts the truth on top.
    let pulled = dev.pair_json(&["pull"]);
    assert_eq!(pulled["runs"]["fast_forwarded"], 1, "{pulled}");
    let parent = dev.git(&["rev-parse", &format!("{name}^")]);
    assert_eq!(parent.trim(), forged, "a commit on top of the fetched tip");
    let carried = carried_approvals(dev, &name).expect("the fix carries approvals");
    let check = carried["facts"]["checks"][0]
        .as_str()
        .expect("a failed check");
    assert!(check.contains("reads CHANGES_REQUESTED"), "{carried}");
    let (v, out) = verify(dev, &["HEAD"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(statuses(&v), ["unreviewed"], "{v}");
    assert_eq!(dev.git_out(&["fsck", "--no-progress"]).code, 0);
}

#[test]
fn an_append_on_a_forged_tip_checks_its_approvals_again_instead_of_carrying_them_on() {
    let team = Team::new();
    let dev = &team.dev;
    let run_id = dev.start("add a");
    dev.write("a.txt", "a\n");
    dev.pair_json(&["coder-done", "--summary", "add a"]);
    let out = dev.pair(&["review", "--reviewer-cmd", &reviewer("approve.sh")]);
    assert_eq!(out.code, 0, "{out}");
    dev.git(&["add", "-A"]);
    dev.git(&["commit", "-q", "-m", "add a"]);
    // The stored answer rewritten under the honest tip's message (its trailer says the
    // approval was checked).
    let name = format!("refs/pair/runs/{run_id}");
    let (tip, tree, message) = answer_turned(dev, &run_id);
    let forged = dev.git(&["commit-tree", &tree, "-p", &tip, "-m", &message]);
    dev.git(&["update-ref", &name, forged.trim()]);

    // The next record is appended on the forged tip: what it carries is checked again.
    dev.pair_json(&["finish"]);
    let carried = carried_approvals(dev, &name).expect("the finish commit carries approvals");
    let check = carried["facts"]["checks"][0]
        .as_str()
        .unwrap_or_else(|| panic!("a failed check: {carried}"));
    assert!(check.contains("reads CHANGES_REQUESTED"), "{carried}");
    let (v, out) = verify(dev, &["HEAD"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(statuses(&v), ["unreviewed"], "{v}");
}

#[test]
fn a_trailer_checked_under_other_rules_is_checked_again_from_the_records() {
    let team = Team::new();
    let dev = &team.dev;
    let run_id = approved_commit(dev, &[("a.txt", "a\n")], "add a");
    let name = format!("refs/pair/runs/{run_id}");
    // The stored answer turned into CHANGES_REQUESTED, under a trailer naming that tree (as a
    // writer of this version would): verify believes it.
    let (tip, tree, message) = answer_turned(dev, &run_id);
    let old_tree = dev.git(&["rev-parse", &format!("{tip}^{{tree}}")]);
    let named = message.replace(old_tree.trim(), &tree);
    let rules = carried_approvals(dev, &tip).expect("a trailer")["rules"]
        .as_str()
        .expect("rules")
        .to_owned();
    for (message, want) in [
        (named.clone(), "approved"),
        // The same trailer, checked under other rules (an older parser's): read again.
        (named.replace(&rules, "0123456789abcdef"), "unreviewed"),
    ] {
        let forged = dev.git(&["commit-tree", &tree, "-p", &tip, "-m", &message]);
        dev.git(&["update-ref", &name, forged.trim()]);
        let (v, _) = verify(dev, &["HEAD"]);
        assert_eq!(statuses(&v), [want], "{v}");
        if want == "unreviewed" {
            let detail = v["commits"][0]["detail"].as_str().expect("detail");
            assert!(detail.contains("reads CHANGES_REQUESTED"), "{detail}");
        }
    }
}

#[test]
fn a_commit_graph_fresh_stale_or_absent_changes_no_verdict() {
    // With a commit-graph the walk reads no commit (each is read with what it names): the
    // report must be the one the walk that reads every commit gives, order included.
    let team = Team::new();
    let dev = &team.dev;
    approved_commit(dev, &[("a.txt", "a\n")], "add a");
    merge_main_work(dev);
    approved_commit(dev, &[("b.txt", "b\n")], "add b");
    dev.write("c.txt", "c\n");
    dev.git(&["add", "c.txt"]);
    dev.git(&["commit", "-q", "-m", "c, never reviewed"]);
    team.publish();
    let ci = team.ci();
    let graph = ci.repo.join(".git/objects/info/commit-graph");
    let report = |env: &TestEnv| {
        let (v, out) = verify(env, &["origin/main..HEAD"]);
        (v, out.code)
    };

    assert!(!graph.exists(), "a fresh clone writes no commit-graph");
    let (without, code) = report(&ci);
    assert_eq!(code, 1);
    assert_eq!(
        statuses(&without),
        ["approved", "approved", "approved", "unreviewed"],
        "{without}"
    );
    let subjects: Vec<&str> = without["commits"]
        .as_array()
        .expect("commits")
        .iter()
        .map(|c| c["subject"].as_str().expect("subject"))
        .collect();
    assert_eq!(
        subjects,
        [
            "add a",
            "Merge branch 'main' into feature",
            "add b",
            "c, never reviewed"
        ]
    );
    ci.git(&["commit-graph", "write", "--reachable"]);
    assert!(graph.exists());
    assert_eq!(
        report(&ci),
        (without.clone(), 1),
        "with a fresh commit-graph"
    );

    // Commits the graph does not hold yet (written before them) are walked all the same.
    ci.write("d.txt", "d\n");
    ci.git(&["add", "d.txt"]);
    ci.git(&["commit", "-q", "-m", "d, after the graph"]);
    let (stale, code) = report(&ci);
    assert_eq!(code, 1);
    let commits = stale["commits"].as_array().expect("commits");
    assert_eq!(commits.len(), 5, "{stale}");
    assert_eq!(commits[4]["subject"], "d, after the graph");
    assert_eq!(
        commits[..4],
        without["commits"].as_array().expect("commits")[..]
    );
    std::fs::remove_file(&graph).expect("remove the graph");
    assert_eq!(report(&ci), (stale, 1), "without the graph again");
    ci.assert_fsck_clean();
}
