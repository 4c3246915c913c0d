//! The PR's final round (`pair.prFinalRound`, `review --pr N`) against a fake `gh`
//! (`fixtures/gh/gh`, which records its argv and the comment bodies) and a real bare remote
//! holding the PR's head and base: posting, updating the same comment, inert hostile
//! findings, the one extra coder round, `finish` after it, and the refusals.

use std::path::PathBuf;

use crate::common::{Output, TestEnv, assert_one_error_line, fixtures, system_bin};

/// A repository whose `feature` branch holds an approved run, pushed to a bare `origin`.
struct PrEnv {
    env: TestEnv,
    gh_dir: PathBuf,
    run_id: String,
}

fn reviewer(name: &str) -> String {
    fixtures()
        .join("reviewers")
        .join(name)
        .display()
        .to_string()
}

fn cmd_json(argv: &[&str]) -> String {
    serde_json::to_string(argv).expect("json")
}

impl PrEnv {
    fn new() -> PrEnv {
        let env = TestEnv::new();
        let remote = env.home.join("origin.git");
        env.git(&["init", "-q", "--bare", remote.to_str().expect("utf8")]);
        env.git(&["remote", "add", "origin", remote.to_str().expect("utf8")]);
        env.git(&["push", "-q", "origin", "main"]);
        env.git(&["checkout", "-q", "-b", "feature"]);
        let run_id = env.start("add a greeting");
        env.write("greet.txt", "hello from the PR\n");
        env.pair_json(&["coder-done", "--summary", "add greet.txt"]);
        let approve = cmd_json(&[&reviewer("approve.sh")]);
        env.pair_json(&["review", "--reviewer-cmd", &approve]);
        env.git(&["add", "-A"]);
        env.git(&["commit", "-q", "-m", "greeting"]);
        env.git(&["push", "-q", "origin", "feature"]);
        env.git(&["config", "pair.prFinalRound", "true"]);
        let gh_dir = env.home.join("gh-state");
        PrEnv {
            env,
            gh_dir,
            run_id,
        }
    }

    fn path(&self) -> String {
        format!(
            "{}:{}:{}",
            fixtures().join("gh").display(),
            fixtures().join("reviewers").display(),
            system_bin().display()
        )
    }

    /// `git pair args` with the fake gh on PATH, serving the pushed head and base.
    fn pair(&self, args: &[&str], extra: &[(&str, &str)]) -> Output {
        let head = self.env.git(&["rev-parse", "feature"]).trim().to_owned();
        let base = self.env.git(&["rev-parse", "main"]).trim().to_owned();
        let path = self.path();
        let gh_dir = self.gh_dir.display().to_string();
        let mut vars: Vec<(&str, &str)> = vec![
            ("PATH", &path),
            ("FAKE_GH_DIR", &gh_dir),
            ("FAKE_GH_HEAD", &head),
            ("FAKE_GH_BASE", &base),
        ];
        vars.extend_from_slice(extra);
        self.env.pair_env(args, &vars)
    }

    fn json(&self, args: &[&str], extra: &[(&str, &str)]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.pair(&all, extra);
        assert_eq!(out.code, 0, "git pair {args:?}:\n{out}");
        out.json()
    }

    fn argv_log(&self) -> String {
        std::fs::read_to_string(self.gh_dir.join("argv.log")).unwrap_or_default()
    }

    fn comments(&self) -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = std::fs::read_dir(&self.gh_dir)
            .map(|d| {
                d.flatten()
                    .filter_map(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        let id = name
                            .strip_prefix("comment-")?
                            .strip_suffix(".md")?
                            .to_owned();
                        Some((id, std::fs::read_to_string(e.path()).ok()?))
                    })
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        found
    }

    fn status(&self) -> serde_json::Value {
        self.env.pair_json(&["status"])
    }

    fn record_kinds(&self) -> Vec<String> {
        self.env.records(&self.run_id)
    }
}

fn opened() -> PrEnv {
    let pr = PrEnv::new();
    let v = pr.json(&["finish", "--open-pr"], &[]);
    assert_eq!(v["pr"], 7, "{v:#}");
    assert_eq!(v["pr_round"], "due", "{v:#}");
    assert!(v["verdict"].is_null(), "the run stays open: {v:#}");
    assert!(pr.gh_dir.join("pr-body.md").exists());
    assert_eq!(pr.status()["next_action"], "review:pr");
    pr
}

fn hostile_changes() -> String {
    cmd_json(&[
        &reviewer("request-changes.sh"),
        "<!-- git-pair:pr-review --> <img src=x onerror=alert(1)> @octocat ![t](http://e/t.gif) </details>",
    ])
}

#[test]
fn the_prs_final_review_posts_inert_findings_then_updates_its_own_comment() {
    let pr = opened();
    // A local change that is not in the PR: the review must not see it.
    pr.env.write("local-only.txt", "not pushed\n");
    let copy = pr.env.home.join("prompt.txt");
    let copy_s = copy.display().to_string();
    let v = pr.json(
        &["review", "--pr", "7", "--reviewer-cmd", &hostile_changes()],
        &[("STUB_PROMPT_COPY", &copy_s)],
    );
    let keys: Vec<&str> = v
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "run_id",
            "pr",
            "verdict",
            "findings",
            "comment",
            "head",
            "base",
            "merge_base",
            "reviewers",
            "model",
            "effort",
            "next_action"
        ],
        "the --json contract of review --pr"
    );
    assert_eq!(v["pr"], 7);
    assert_eq!(v["verdict"], "CHANGES_REQUESTED");
    assert_eq!(v["comment"], "posted");
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(2), "{v:#}");
    assert_eq!(v["next_action"], "code");
    assert_eq!(v["head"], pr.env.git(&["rev-parse", "feature"]).trim());
    assert!(
        pr.argv_log().contains("pr | view | 7 | --json"),
        "{}",
        pr.argv_log()
    );
    assert!(
        pr.argv_log().contains("pr | comment | 7 | --body-file"),
        "{}",
        pr.argv_log()
    );
    // The PR's head and base came over the network transport into local refs.
    let fetched = pr
        .env
        .git(&["for-each-ref", "--format=%(refname)", "refs/pair-local/pr/"]);
    assert!(fetched.contains("refs/pair-local/pr/7/head"), "{fetched}");
    let comments = pr.comments();
    assert_eq!(comments.len(), 1, "{comments:?}");
    let body = &comments[0].1;
    assert!(body.starts_with("<!-- git-pair:pr-review -->\n"), "{body}");
    assert_eq!(body.matches("<!--").count(), 1, "no forged marker: {body}");
    for bad in ["<img", "@octocat", "![t]", "</details>"] {
        assert!(!body.contains(bad), "{bad} in {body}");
    }
    assert_eq!(pr.status()["next_action"], "code");
    assert!(pr.record_kinds().iter().any(|r| r.contains("-pr-review-")));

    // Again, before the extra round: the same comment is updated, none is added, and a
    // comment someone else forged with the marker is left alone.
    let first_id = comments[0].0.clone();
    let v = pr.json(
        &["review", "--pr", "7", "--reviewer-cmd", &hostile_changes()],
        &[("FAKE_GH_FOREIGN", "1")],
    );
    assert_eq!(v["comment"], "updated", "{v:#}");
    let comments = pr.comments();
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert_eq!(comments[0].0, first_id);
    let log = pr.argv_log();
    assert!(
        log.contains(&format!(
            "api | --method | PATCH | repos/{{owner}}/{{repo}}/issues/comments/{first_id} | -F | body=@"
        )),
        "{log}"
    );
    assert!(!log.contains("comments/999"), "{log}");
}

#[test]
fn the_prompt_holds_the_prs_change_not_the_local_work_tree() {
    let pr = opened();
    pr.env.write("local-only.txt", "not pushed\n");
    let copy = pr.env.home.join("prompt.txt");
    let copy_s = copy.display().to_string();
    let approve = cmd_json(&[&reviewer("approve.sh")]);
    let v = pr.json(
        &["review", "--pr", "7", "--reviewer-cmd", &approve],
        &[("STUB_PROMPT_COPY", &copy_s)],
    );
    assert_eq!(v["verdict"], "APPROVED");
    let prompt = std::fs::read_to_string(&copy).expect("prompt copy");
    assert!(prompt.contains("greet.txt"), "{prompt}");
    assert!(!prompt.contains("local-only.txt"), "{prompt}");
    // No findings: a short line after the marker, and the run may finish at once.
    let comments = pr.comments();
    assert_eq!(comments[0].1.lines().count(), 2, "{}", comments[0].1);
    assert!(comments[0].1.contains("no findings"), "{}", comments[0].1);
    assert_eq!(pr.status()["next_action"], "finish");
    let v = pr.env.pair_json(&["finish"]);
    assert_eq!(v["verdict"], "APPROVED");
    assert!(finish_record(&pr).contains("\"pr_final\":true"));
}

fn finish_record(pr: &PrEnv) -> String {
    let name = pr
        .record_kinds()
        .into_iter()
        .find(|r| r.contains("-finish-"))
        .expect("a finish record");
    pr.env.git(&[
        "cat-file",
        "-p",
        &format!(
            "refs/pair/runs/{}:{}",
            pr.run_id,
            crate::common::record_path(&name)
        ),
    ])
}

#[test]
fn findings_get_exactly_one_more_coder_round_before_finish() {
    let pr = opened();
    let out = pr.pair(&["finish"], &[]);
    assert_one_error_line(&out, 1, "is not reviewed in its final round yet");
    pr.json(
        &["review", "--pr", "7", "--reviewer-cmd", &hostile_changes()],
        &[],
    );
    let out = pr.pair(&["finish"], &[]);
    assert_one_error_line(&out, 1, "no reviewed coder round addressed yet");
    // The extra round, past the cap when the cap is reached.
    pr.env.git(&["config", "pair.maxRounds", "1"]);
    pr.env.write("greet.txt", "hello from the PR, fixed\n");
    pr.env
        .pair_json(&["coder-done", "--summary", "address the PR review"]);
    let out = pr.pair(
        &["review", "--pr", "7", "--reviewer-cmd", &hostile_changes()],
        &[],
    );
    assert_one_error_line(&out, 1, "the one more coder round it gives has begun");
    assert_eq!(pr.status()["next_action"], "review");
    let out = pr.pair(&["finish"], &[]);
    assert_one_error_line(&out, 1, "no reviewed coder round addressed yet");
    let approve = cmd_json(&[&reviewer("approve.sh")]);
    pr.env.pair_json(&["review", "--reviewer-cmd", &approve]);
    assert_eq!(pr.status()["next_action"], "finish");
    let v = pr.env.pair_json(&["finish"]);
    assert_eq!(v["verdict"], "APPROVED");
    assert!(finish_record(&pr).contains("\"pr_final\":true"));
    assert_eq!(pr.status()["next_action"], "done");
    let body = pr.env.pair(&["pr-body"]).stdout;
    assert!(
        body.contains("**PR final review:** #7 as the remote had it")
            && body.contains("2 findings, posted on the PR, addressed in round 2"),
        "{body}"
    );
}

#[test]
fn a_second_request_for_changes_in_the_extra_round_stops_for_the_human() {
    let pr = opened();
    pr.json(
        &["review", "--pr", "7", "--reviewer-cmd", &hostile_changes()],
        &[],
    );
    pr.env.write("greet.txt", "still wrong\n");
    pr.env.pair_json(&["coder-done", "--summary", "try again"]);
    let changes = cmd_json(&[&reviewer("request-changes.sh")]);
    pr.env.pair_json(&["review", "--reviewer-cmd", &changes]);
    assert_eq!(pr.status()["next_action"], "stop:round-cap");
}

#[test]
fn review_pr_is_refused_without_the_setting_or_a_pr() {
    let pr = PrEnv::new();
    let approve = cmd_json(&[&reviewer("approve.sh")]);
    let out = pr.pair(&["review", "--pr", "7", "--reviewer-cmd", &approve], &[]);
    assert_one_error_line(&out, 1, "has no PR yet");
    let before = pr.env.pair_refs();
    pr.env.git(&["config", "pair.prFinalRound", "false"]);
    let out = pr.pair(&["review", "--pr", "7", "--reviewer-cmd", &approve], &[]);
    assert_one_error_line(&out, 1, "pair.prFinalRound is off");
    assert_eq!(pr.env.pair_refs(), before, "nothing recorded");
    assert!(pr.argv_log().is_empty(), "gh never ran: {}", pr.argv_log());
    // With the setting off, --open-pr finishes the run as before.
    let v = pr.json(&["finish", "--open-pr"], &[]);
    assert_eq!(v["verdict"], "APPROVED");
    assert!(v.get("pr_round").is_none(), "{v:#}");
}

#[test]
fn a_pr_review_that_cannot_comment_records_nothing() {
    let pr = opened();
    let before = pr.env.pair_refs();
    let approve = cmd_json(&[&reviewer("approve.sh")]);
    let out = pr.pair(
        &["review", "--pr", "7", "--reviewer-cmd", &approve],
        &[("FAKE_GH_FAIL", "comment")],
    );
    assert_one_error_line(&out, 1, "gh pr comment failed for PR #7");
    assert_eq!(pr.env.pair_refs(), before);
    let out = pr.pair(&["review", "--pr", "8", "--reviewer-cmd", &approve], &[]);
    assert_one_error_line(&out, 1, "PR is #7, not #8");
}
