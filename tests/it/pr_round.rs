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

    /// The environment of the fake gh on PATH, serving the pushed head and base.
    fn gh_vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("PATH", self.path()),
            ("FAKE_GH_DIR", self.gh_dir.display().to_string()),
            (
                "FAKE_GH_HEAD",
                self.env.git(&["rev-parse", "feature"]).trim().to_owned(),
            ),
            (
                "FAKE_GH_BASE",
                self.env.git(&["rev-parse", "main"]).trim().to_owned(),
            ),
        ]
    }

    /// `git pair args` with the fake gh on PATH, serving the pushed head and base.
    fn pair(&self, args: &[&str], extra: &[(&str, &str)]) -> Output {
        let gh = self.gh_vars();
        let mut vars: Vec<(&str, &str)> = gh.iter().map(|(k, v)| (*k, v.as_str())).collect();
        vars.extend_from_slice(extra);
        self.env.pair_env(args, &vars)
    }

    /// `git pair args` started in the background, as [`PrEnv::pair`] runs it.
    fn spawn(&self, args: &[&str], extra: &[(&str, &str)]) -> std::process::Child {
        let mut cmd = self.env.pair_cmd(args);
        cmd.envs(self.gh_vars())
            .envs(extra.iter().copied())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd.spawn().expect("spawn git pair")
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
fn a_pr_review_that_cannot_comment_keeps_only_its_audit_trail() {
    let pr = opened();
    let approve = cmd_json(&[&reviewer("approve.sh")]);
    let out = pr.pair(
        &["review", "--pr", "7", "--reviewer-cmd", &approve],
        &[("FAKE_GH_FAIL", "comment")],
    );
    assert_one_error_line(&out, 1, "gh pr comment failed for PR #7");
    assert_eq!(
        pr.kinds_after_open(),
        ["pr-dispatch", "pr-review-failed"],
        "the dispatch and its failed outcome, no pr-review"
    );
    let failed = pr.record("pr-review-failed");
    assert_eq!(failed["outcome"], "not-posted", "{failed:#}");
    assert_eq!(
        failed["verdict"], "APPROVED",
        "what the reviewer said is kept"
    );
    assert!(pr.tree().contains(&"pr/7/1/output.txt".to_owned()));
    assert_eq!(pr.status()["next_action"], "review:pr", "still due");
    let before = pr.env.pair_refs();
    let out = pr.pair(&["review", "--pr", "8", "--reviewer-cmd", &approve], &[]);
    assert_one_error_line(&out, 1, "PR is #7, not #8");
    assert_eq!(pr.env.pair_refs(), before);
}

impl PrEnv {
    /// Every path in the run's tree, read with real git.
    fn tree(&self) -> Vec<String> {
        self.env
            .git(&[
                "ls-tree",
                "-r",
                "--name-only",
                &format!("refs/pair/runs/{}", self.run_id),
            ])
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The kinds of the records after the run's `pr` record, in order.
    fn kinds_after_open(&self) -> Vec<String> {
        let names = self.record_kinds();
        let from = names
            .iter()
            .position(|n| {
                n.contains("-pr-") && !n.contains("-pr-review") && !n.contains("-pr-dispatch")
            })
            .expect("a pr record");
        names[from + 1..]
            .iter()
            .map(|n| kind_of(n).to_owned())
            .collect()
    }

    /// The newest record of `kind`, parsed.
    fn record(&self, kind: &str) -> serde_json::Value {
        let name = self
            .record_kinds()
            .into_iter()
            .rev()
            .find(|n| kind_of(n) == kind)
            .unwrap_or_else(|| panic!("no {kind} record"));
        self.show(&crate::common::record_path(&name))
            .parse::<serde_json::Value>()
            .expect("a record is JSON")
    }

    /// A file of the run's tree, with `git show`.
    fn show(&self, path: &str) -> String {
        self.env
            .git(&["show", &format!("refs/pair/runs/{}:{path}", self.run_id)])
    }

    /// Real git's stdout, as bytes.
    fn git_bytes(&self, args: &[&str]) -> Vec<u8> {
        let mut cmd = std::process::Command::new("git");
        cmd.args(args).current_dir(&self.env.repo);
        self.env.configure(&mut cmd);
        let out = cmd.output().expect("run git");
        assert!(out.status.success(), "git {args:?}");
        out.stdout
    }

    fn fsck_is_clean(&self) {
        self.env.assert_fsck_clean();
    }
}

/// The kind in a record file name `<seq>-<kind>-<id>.json`.
fn kind_of(name: &str) -> &str {
    let rest = name.strip_suffix(".json").unwrap_or(name);
    let rest = rest.split_once('-').map_or(rest, |(_, r)| r);
    rest.rsplit_once('-').map_or(rest, |(k, _)| k)
}

/// What `script arg` prints on stdout, run here as the review runs it (prompt on stdin).
fn stub_stdout(script: &str, arg: &str) -> Vec<u8> {
    let out = std::process::Command::new(reviewer(script))
        .arg(arg)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run the stub");
    out.stdout
}

const MATERIAL: [&str; 8] = [
    "attempts.json",
    "context.json",
    "coverage.json",
    "diff.patch",
    "output.txt",
    "probe.json",
    "prompt.md",
    "result.json",
];

#[test]
fn the_prs_final_review_keeps_what_the_reviewer_was_shown_and_said() {
    let pr = opened();
    pr.env.write("local-only.txt", "not pushed\n");
    let round_output = |pr: &PrEnv| {
        pr.env.git(&[
            "rev-parse",
            &format!("refs/pair/runs/{}:reviews/1/output.txt", pr.run_id),
        ])
    };
    let round_before = round_output(&pr);
    let hostile = "odd \u{1b}]52;c;ZXZpbA==\u{7} text";
    let cmd = cmd_json(&[&reviewer("request-changes.sh"), hostile]);
    let v = pr.json(&["review", "--pr", "7", "--reviewer-cmd", &cmd], &[]);
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v:#}");
    // The dispatch first, then the outcome, and nothing in between.
    assert_eq!(pr.kinds_after_open(), ["pr-dispatch", "pr-review"]);
    let dispatch_name = pr
        .record_kinds()
        .into_iter()
        .find(|n| kind_of(n) == "pr-dispatch")
        .expect("dispatch");
    let dispatch = pr.record("pr-dispatch");
    let review = pr.record("pr-review");
    assert!(
        dispatch_name.ends_with(&format!(
            "-{}.json",
            review["dispatch"].as_str().expect("dispatch id")
        )),
        "{review:#}"
    );
    assert_eq!(dispatch["attempt"], 1);
    assert_eq!(dispatch["remote"], "origin");
    assert_eq!(review["remote"], "origin");
    assert_eq!(dispatch["head"], v["head"]);
    assert_eq!(dispatch["merge_base"], v["merge_base"]);
    assert!(dispatch["runner"]["pid"].is_u64(), "{dispatch:#}");
    assert_eq!(review["reviewers"][0]["attempts"], 1, "{review:#}");
    // The material, under pr/7/1/, apart from the coder rounds' (which did not change), and
    // no copy of the PR's head tree (the remote has it; the record names it).
    let tree = pr.tree();
    for file in MATERIAL {
        assert!(
            tree.contains(&format!("pr/7/1/{file}")),
            "pr/7/1/{file} in {tree:#?}"
        );
    }
    assert!(
        !tree.iter().any(|p| p.starts_with("pr/7/1/snapshot")),
        "{tree:#?}"
    );
    assert_eq!(round_output(&pr), round_before, "reviews/1 untouched");
    // What the reviewer was shown: the PR's change, not the local work tree.
    let diff = pr.show("pr/7/1/diff.patch");
    assert!(diff.contains("+hello from the PR"), "{diff}");
    assert!(!diff.contains("local-only"), "{diff}");
    let prompt = pr.show("pr/7/1/prompt.md");
    assert!(prompt.contains("greet.txt"), "{prompt}");
    // What it said: its stdout byte for byte (escape bytes included: stored data is exact).
    let raw = stub_stdout("request-changes.sh", hostile);
    let stored = pr.git_bytes(&[
        "show",
        &format!("refs/pair/runs/{}:pr/7/1/output.txt", pr.run_id),
    ]);
    assert!(
        stored.windows(raw.len()).any(|w| w == raw.as_slice()),
        "the raw output is stored whole:\n{}",
        String::from_utf8_lossy(&stored)
    );
    let attempts: serde_json::Value = pr.show("pr/7/1/attempts.json").parse().expect("json");
    assert_eq!(attempts.as_array().map(Vec::len), Some(1), "{attempts:#}");
    let result: serde_json::Value = pr.show("pr/7/1/result.json").parse().expect("json");
    assert_eq!(result["pr"], 7);
    assert_eq!(result["verdict"], "CHANGES_REQUESTED");
    // The escape sequence stays inert on the PR and on the terminal.
    let comment = &pr.comments()[0].1;
    assert!(
        !comment.contains('\u{1b}') && !comment.contains('\u{7}'),
        "{comment:?}"
    );
    pr.fsck_is_clean();
    // `show` and `log` read it back.
    let shown = pr.env.pair(&["show", &pr.run_id, "--pr", "7", "--output"]);
    assert_eq!(shown.code, 0, "{shown}");
    assert!(
        shown.stdout.contains("VERDICT: CHANGES_REQUESTED")
            && shown.stdout.contains("odd \\033]52"),
        "{shown}"
    );
    let shown = pr.env.pair(&["show", &pr.run_id, "--pr", "7", "--diff"]);
    assert!(shown.stdout.contains("+hello from the PR"), "{shown}");
    let records = pr.env.pair_json(&["show", &pr.run_id, "--pr", "7"]);
    let kinds: Vec<&str> = records["records"]
        .as_array()
        .expect("records")
        .iter()
        .filter_map(|r| r["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["pr-dispatch", "pr-review"]);
    let log = pr.env.pair_json(&["log"]);
    let reviews = &log["rounds"][0]["reviews"];
    assert_eq!(reviews[1]["pr"], 7, "{log:#}");
    assert_eq!(reviews[1]["findings"], 2, "{log:#}");
    assert!(reviews[0].get("pr").is_none(), "{log:#}");
    let text = pr.env.pair(&["log"]).stdout;
    assert!(text.contains("PR #7 final review:"), "{text}");

    // A second dispatch gets its own folder; the first stays as it was.
    let first = pr
        .env
        .git(&["rev-parse", &format!("refs/pair/runs/{}:pr/7/1", pr.run_id)]);
    let out = pr.pair(&["review", "--pr", "7", "--reviewer-cmd", &cmd], &[]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        !out.stdout.contains('\u{1b}') && !out.stderr.contains('\u{1b}'),
        "{out}"
    );
    assert!(
        out.stdout.contains("\\033]52"),
        "escaped as git escapes it: {out}"
    );
    assert!(pr.tree().contains(&"pr/7/2/output.txt".to_owned()));
    assert_eq!(pr.record("pr-dispatch")["attempt"], 2);
    assert_eq!(
        pr.env
            .git(&["rev-parse", &format!("refs/pair/runs/{}:pr/7/1", pr.run_id)]),
        first
    );
    pr.fsck_is_clean();
}

#[test]
fn a_pr_review_without_a_verdict_stores_its_attempts_and_posts_nothing() {
    let pr = opened();
    for (script, outcome, attempts) in [
        ("fail.sh", "died", 2),
        ("garbage.sh", "failed-validation", 2),
    ] {
        let before = pr.record_kinds().len();
        let cmd = cmd_json(&[&reviewer(script)]);
        let out = pr.pair(&["review", "--pr", "7", "--reviewer-cmd", &cmd], &[]);
        assert_one_error_line(&out, 1, "the final review failed for PR #7: no verdict");
        let kinds: Vec<String> = pr.record_kinds()[before..]
            .iter()
            .map(|n| kind_of(n).to_owned())
            .collect();
        assert_eq!(kinds, ["pr-dispatch", "pr-review-failed"], "{script}");
        let failed = pr.record("pr-review-failed");
        assert_eq!(failed["outcome"], outcome, "{script}: {failed:#}");
        let attempt = pr.record("pr-dispatch")["attempt"]
            .as_u64()
            .expect("attempt");
        let listed: serde_json::Value = pr
            .show(&format!("pr/7/{attempt}/attempts.json"))
            .parse()
            .expect("json");
        assert_eq!(
            listed.as_array().map(Vec::len),
            Some(attempts),
            "{script}: {listed:#}"
        );
        let output = pr.git_bytes(&[
            "show",
            &format!("refs/pair/runs/{}:pr/7/{attempt}/output.txt", pr.run_id),
        ]);
        let raw = stub_stdout(script, "");
        assert!(
            output.windows(raw.len()).any(|w| w == raw.as_slice()),
            "{script}: {}",
            String::from_utf8_lossy(&output)
        );
    }
    assert!(pr.comments().is_empty(), "nothing posted");
    assert!(!pr.argv_log().contains("pr | comment"), "{}", pr.argv_log());
    assert_eq!(pr.status()["next_action"], "review:pr");
    pr.fsck_is_clean();
}

impl PrEnv {
    /// How many `gh pr view` calls the fake gh has answered so far.
    fn views(&self) -> usize {
        self.argv_log()
            .lines()
            .filter(|l| l.starts_with("pr | view"))
            .count()
    }

    /// Asserts `out` failed with one error line holding `needle` and stored nothing.
    fn refused(&self, out: &Output, code: i32, needle: &str, before: &str) {
        assert_one_error_line(out, code, needle);
        assert_eq!(
            self.env.pair_refs(),
            before,
            "stored state untouched:\n{out}"
        );
    }
}

#[test]
fn a_hostile_pr_number_or_remote_is_refused_before_gh_runs() {
    let pr = opened();
    let before = pr.env.pair_refs();
    let approve = cmd_json(&[&reviewer("approve.sh")]);
    for number in ["-1", "1;rm", "1 2", "7x", "99999999999999999999999"] {
        let out = pr.pair(&["review", "--pr", number, "--reviewer-cmd", &approve], &[]);
        pr.refused(&out, 129, "", &before);
    }
    let out = pr.pair(&["review", "--remote", "origin"], &[]);
    pr.refused(&out, 129, "--pr", &before);
    let path = pr.env.home.join("origin.git").display().to_string();
    for (remote, needle) in [
        (
            "--remote=-oProxyCommand=touch /tmp/pwned",
            "not a remote name",
        ),
        ("--remote=--upload-pack=touch x", "not a remote name"),
        ("--remote=nosuch", "no such remote is configured"),
        (
            &format!("--remote={path}") as &str,
            "no such remote is configured",
        ),
        (
            "--remote=https://example.com/o/r.git",
            "no such remote is configured",
        ),
        ("--remote=or\nigin", "not a remote name"),
    ] {
        let out = pr.pair(
            &["review", "--pr", "7", remote, "--reviewer-cmd", &approve],
            &[],
        );
        pr.refused(&out, 1, needle, &before);
        assert!(
            out.stderr.contains("hint: name the remote the PR lives on"),
            "{out}"
        );
    }
    assert_eq!(pr.views(), 0, "gh never ran: {}", pr.argv_log());
}

#[test]
fn the_pr_is_fetched_from_the_branchs_upstream_remote_or_the_one_named() {
    let pr = opened();
    // The PR lives on a fork, the branch's upstream; origin is unreachable now.
    let fork = pr.env.home.join("fork.git");
    pr.env.git(&[
        "clone",
        "-q",
        "--bare",
        &pr.env.home.join("origin.git").display().to_string(),
        &fork.display().to_string(),
    ]);
    pr.env
        .git(&["remote", "add", "fork", &fork.display().to_string()]);
    pr.env.git(&["push", "-q", "-u", "fork", "feature"]);
    pr.env.git(&[
        "remote",
        "set-url",
        "origin",
        &pr.env.home.join("gone.git").display().to_string(),
    ]);
    let approve = cmd_json(&[&reviewer("approve.sh")]);
    let v = pr.json(&["review", "--pr", "7", "--reviewer-cmd", &approve], &[]);
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    assert_eq!(pr.record("pr-dispatch")["remote"], "fork");
    assert_eq!(pr.record("pr-review")["remote"], "fork");
    // Named, it wins over the upstream (the commits are here already: git asks no one).
    let v = pr.json(
        &[
            "review",
            "--pr",
            "7",
            "--remote",
            "origin",
            "--reviewer-cmd",
            &approve,
        ],
        &[],
    );
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    assert_eq!(pr.record("pr-dispatch")["remote"], "origin");
}

#[test]
fn junk_from_gh_is_refused_and_stores_nothing() {
    let pr = opened();
    let before = pr.env.pair_refs();
    let approve = cmd_json(&[&reviewer("approve.sh")]);
    let head = pr.env.git(&["rev-parse", "feature"]).trim().to_owned();
    let zero = "0".repeat(40);
    let junk = [
        "<html>502 Bad Gateway</html>".to_owned(),
        String::new(),
        "{\"headRefOid\":".to_owned(),
        format!(
            r#"{{"baseRefName":"main","headRefName":"feature","headRefOid":"HEAD~1","baseRefOid":"{head}"}}"#
        ),
        format!(
            r#"{{"baseRefName":"main","headRefName":"--upload-pack=x","headRefOid":"{head}","baseRefOid":"{head}"}}"#
        ),
        format!(
            r#"{{"baseRefName":"main","headRefName":"feature","headRefOid":"{head}","baseRefOid":"{head}","headRefOid":"{zero}"}}"#
        ),
        "[1,2,3]".to_owned(),
        "\u{1b}]0;owned\u{7}".to_owned(),
    ];
    for (i, text) in junk.iter().enumerate() {
        let file = pr.env.home.join(format!("view-{i}.json"));
        std::fs::write(&file, text).expect("write");
        let file_s = file.display().to_string();
        let out = pr.pair(
            &["review", "--pr", "7", "--reviewer-cmd", &approve],
            &[("FAKE_GH_VIEW_FILE", &file_s)],
        );
        assert_one_error_line(&out, 1, "gh pr view failed for PR #7");
        assert!(!out.stderr.contains('\u{1b}'), "{out}");
        assert_eq!(pr.env.pair_refs(), before, "{text}: {out}");
    }
    let out = pr.pair(
        &["review", "--pr", "7", "--reviewer-cmd", &approve],
        &[("FAKE_GH_FAIL", "view")],
    );
    pr.refused(&out, 1, "gh pr view failed for PR #7", &before);
    // Well-formed, but a head the remote does not have.
    let out = pr.pair(
        &["review", "--pr", "7", "--reviewer-cmd", &approve],
        &[("FAKE_GH_HEAD", &zero)],
    );
    pr.refused(&out, 1, "cannot fetch from 'origin'", &before);
    assert!(pr.comments().is_empty());
}

#[test]
fn a_pr_whose_base_shares_no_history_is_refused() {
    let pr = opened();
    pr.env.git(&["checkout", "-q", "--orphan", "elsewhere"]);
    pr.env.git(&["rm", "-rq", "--cached", "."]);
    pr.env.write("other.txt", "unrelated\n");
    pr.env.git(&["add", "other.txt"]);
    pr.env.git(&["commit", "-q", "-m", "unrelated"]);
    pr.env.git(&["push", "-q", "origin", "elsewhere"]);
    let base = pr.env.git(&["rev-parse", "elsewhere"]).trim().to_owned();
    pr.env.git(&["checkout", "-q", "-f", "feature"]);
    pr.env.git(&["clean", "-qfd"]);
    let before = pr.env.pair_refs();
    let approve = cmd_json(&[&reviewer("approve.sh")]);
    let out = pr.pair(
        &["review", "--pr", "7", "--reviewer-cmd", &approve],
        &[("FAKE_GH_BASE", &base)],
    );
    pr.refused(&out, 1, "share no history", &before);
    assert!(pr.comments().is_empty());
}

#[test]
fn a_pr_head_that_moves_is_never_reviewed_as_the_old_one() {
    let pr = opened();
    let old = pr.env.git(&["rev-parse", "feature"]).trim().to_owned();
    pr.env.write("greet.txt", "pushed meanwhile\n");
    pr.env.git(&["commit", "-qam", "meanwhile"]);
    pr.env.git(&["push", "-q", "origin", "feature"]);
    let moved = pr.env.git(&["rev-parse", "feature"]).trim().to_owned();
    let approve = cmd_json(&[&reviewer("approve.sh")]);
    // Between `gh pr view` and the fetch: refused before anything is dispatched.
    let before = pr.env.pair_refs();
    // The first view reads the old head, every later one the new.
    let after = (pr.views() + 1).to_string();
    let out = pr.pair(
        &["review", "--pr", "7", "--reviewer-cmd", &approve],
        &[
            ("FAKE_GH_HEAD", &old),
            ("FAKE_GH_MOVE_AFTER", &after),
            ("FAKE_GH_MOVED_HEAD", &moved),
        ],
    );
    pr.refused(&out, 1, "the PR's head moved from", &before);
    // While the reviewer runs: its attempts are kept, nothing is posted.
    let after = (pr.views() + 2).to_string();
    let out = pr.pair(
        &["review", "--pr", "7", "--reviewer-cmd", &approve],
        &[
            ("FAKE_GH_HEAD", &old),
            ("FAKE_GH_MOVE_AFTER", &after),
            ("FAKE_GH_MOVED_HEAD", &moved),
        ],
    );
    assert_one_error_line(&out, 1, "the PR's head moved from");
    assert_eq!(pr.kinds_after_open(), ["pr-dispatch", "pr-review-failed"]);
    assert_eq!(pr.record("pr-review-failed")["outcome"], "head-moved");
    assert!(pr.comments().is_empty(), "nothing posted");
    assert_eq!(pr.status()["next_action"], "review:pr");
}

/// Waits (up to a minute) for the stub reviewer to write its pid to `file`.
fn stub_pid(file: &std::path::Path) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !file.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the reviewer never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::read_to_string(file)
        .expect("pid")
        .trim()
        .to_owned()
}

/// Whether process `pid` is alive (and not a zombie waiting to be reaped).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| !s.trim_start().starts_with('Z'))
    })
}

#[test]
fn a_pr_review_runs_alone_and_a_killed_one_leaves_no_reviewer_running() {
    let pr = opened();
    let pid_file = pr.env.home.join("stub.pid");
    let pid_var = pid_file.display().to_string();
    // A reviewer whose child ignores SIGTERM and escapes the parent-death signal (only the
    // direct child gets it): what a killed `git pair` can leave running.
    let hang = cmd_json(&[&reviewer("fork-and-hang.sh")]);
    let mut first = pr.spawn(
        &["review", "--pr", "7", "--reviewer-cmd", &hang],
        &[("STUB_PID_FILE", &pid_var)],
    );
    let stub = stub_pid(&pid_file);
    assert_eq!(pr.status()["next_action"], "wait:review");

    // While it runs, neither a second PR review nor a coder round's review starts.
    let before = pr.env.pair_refs();
    let approve = cmd_json(&[&reviewer("approve.sh")]);
    let again = pr.pair(&["review", "--pr", "7", "--reviewer-cmd", &approve], &[]);
    pr.refused(&again, 1, "is running right now", &before);
    assert!(
        again.stderr.contains(&format!("pid {}", first.id())),
        "names the running process:\n{again}"
    );
    let round = pr.pair(&["review", "--again", "--reviewer-cmd", &approve], &[]);
    pr.refused(&round, 1, "is running right now", &before);

    // Killed: the reviewer's child lives on (in its process group), the review is due.
    first.kill().expect("SIGKILL the review");
    first.wait().expect("reap");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(alive(&stub), "the reviewer's child outlives its git pair");
    assert_eq!(pr.status()["next_action"], "review:pr");

    let v = pr.json(&["review", "--pr", "7", "--reviewer-cmd", &approve], &[]);
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while alive(&stub) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        !alive(&stub),
        "the interrupted review's reviewer was stopped"
    );
    let kinds: Vec<String> = pr
        .record_kinds()
        .iter()
        .map(|n| kind_of(n).to_owned())
        .filter(|k| k.starts_with("pr-"))
        .collect();
    assert_eq!(kinds, ["pr-dispatch", "pr-dispatch", "pr-review"]);
    assert_eq!(pr.record("pr-review")["attempt"], 2);
    // Each dispatch's prompt carries its own attempt marker (what ties a reviewer session's
    // spend to its attempt).
    let marker = |attempt: u32| {
        let prompt = pr.show(&format!("pr/7/{attempt}/prompt.md"));
        prompt.lines().next().expect("a marker line").to_owned()
    };
    assert!(marker(1).starts_with("<!-- git-pair: "), "{}", marker(1));
    assert_ne!(marker(1), marker(2));
    assert_eq!(pr.comments().len(), 1, "one comment");
    assert_eq!(pr.status()["next_action"], "finish");
    pr.fsck_is_clean();
}

#[test]
fn of_two_pr_reviews_started_at_once_one_runs() {
    let pr = opened();
    // A first review that got no verdict: the PR's commits are here, so neither of the two
    // fetches (a fetch's own ref lock is not what this checks).
    let fail = cmd_json(&[&reviewer("fail.sh")]);
    let out = pr.pair(&["review", "--pr", "7", "--reviewer-cmd", &fail], &[]);
    assert_one_error_line(&out, 1, "no verdict");
    let hang = cmd_json(&[&reviewer("hang.sh")]);
    let files = [pr.env.home.join("a.pid"), pr.env.home.join("b.pid")];
    let mut children: Vec<std::process::Child> = files
        .iter()
        .map(|file| {
            let var = file.display().to_string();
            pr.spawn(
                &["review", "--pr", "7", "--reviewer-cmd", &hang],
                &[("STUB_PID_FILE", &var)],
            )
        })
        .collect();
    // The one refused exits; the other hangs in its reviewer until killed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let refused = loop {
        if let Some(i) = (0..2).find(|&i| matches!(children[i].try_wait(), Ok(Some(_)))) {
            break i;
        }
        assert!(std::time::Instant::now() < deadline, "neither was refused");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let running = 1 - refused;
    let stub = stub_pid(&files[running]);
    let out = children.remove(refused).wait_with_output().expect("output");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is running right now"), "{stderr}");
    assert!(
        !files[refused].exists(),
        "the refused one spawned no reviewer"
    );
    let dispatched = pr
        .record_kinds()
        .iter()
        .filter(|n| kind_of(n) == "pr-dispatch")
        .count();
    assert_eq!(dispatched, 2, "the failed one and one of the two");
    let mut other = children.remove(0);
    other.kill().expect("kill");
    other.wait().expect("reap");
    let _ = std::process::Command::new("kill")
        .args(["-9", &stub])
        .status();
    assert!(pr.comments().is_empty());
}

#[test]
fn finish_says_the_prs_final_review_is_due_not_that_the_run_closed() {
    let pr = PrEnv::new();
    let out = pr.pair(&["finish", "--open-pr"], &[]);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stdout.starts_with(&format!(
            "PR #7 recorded for run {}: its final review is due",
            pr.run_id
        )),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("next: review:pr — push your commits, then git pair review --pr 7"),
        "{out}"
    );
    assert!(!out.stdout.contains("closed without an approval"), "{out}");
    assert_eq!(pr.status()["next_action"], "review:pr");
}

#[test]
fn a_pr_already_fetched_is_not_fetched_again() {
    let pr = opened();
    let fail = cmd_json(&[&reviewer("fail.sh")]);
    let out = pr.pair(&["review", "--pr", "7", "--reviewer-cmd", &fail], &[]);
    assert_one_error_line(&out, 1, "no verdict");
    // The head and base are here, kept by their refs: git is not even started to fetch them
    // (git's trace of every command it runs names no fetch).
    let trace = pr.env.home.join("git-trace");
    let traced = trace.to_str().expect("utf-8");
    let approve = cmd_json(&[&reviewer("approve.sh")]);
    let v = pr.json(
        &["review", "--pr", "7", "--reviewer-cmd", &approve],
        &[("GIT_TRACE", traced)],
    );
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    assert_eq!(pr.comments().len(), 1);
    let ran = std::fs::read_to_string(&trace).unwrap_or_default();
    assert!(!ran.contains("git fetch"), "{ran}");
}
