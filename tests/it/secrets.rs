//! Secrets and what leaves the machine (SPEC §6.2, §14), end to end with real git: the review
//! packet is redacted and the round blocked, nothing stored or printed carries the secret,
//! `push` refuses to publish it (or publishes an allowed false positive, recorded), and
//! `drop` removes a run for good, locally and on a bare remote, with tombstones that keep it
//! from coming back and objects that `git gc` then prunes.
//!
//! Every secret is assembled at run time from a seeded generator: this file holds none.

use crate::common::{Output, TestEnv, assert_one_error_line, fixtures, record_path};
use crate::sync::{Net, path};

/// A small deterministic generator (xorshift), so the secrets look random but are fixed.
struct Gen(u64);

impl Gen {
    fn pick(&mut self, alphabet: &str, n: usize) -> String {
        let a = alphabet.as_bytes();
        (0..n)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                char::from(a[(self.0 % a.len() as u64) as usize])
            })
            .collect()
    }
}

/// An AWS access key id and secret key, as a `.env` holds them.
struct AwsKeys {
    id: String,
    secret: String,
}

impl AwsKeys {
    fn new(seed: u64) -> AwsKeys {
        let mut g = Gen(seed);
        AwsKeys {
            id: ["AK", "IA", &g.pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)].concat(),
            secret: g.pick(
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+",
                40,
            ),
        }
    }

    fn dotenv(&self) -> String {
        format!(
            "AWS_ACCESS_KEY_ID={}\nAWS_SECRET_ACCESS_KEY={}\nREGION=eu-west-1\n",
            self.id, self.secret
        )
    }

    fn all(&self) -> [&str; 2] {
        [&self.id, &self.secret]
    }
}

/// A generic credential that is really a test fixture (a false positive to allow).
fn fixture_token(seed: u64) -> String {
    Gen(seed).pick(
        "abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789",
        32,
    )
}

/// A pattern table whose one rule never matches (its keyword is a control character).
const INERT_TABLE: &str = r#"{"v": 1, "rules": [{"id": "never", "keywords": ["\u0001never"], "regex": "\u0001never", "secret_group": 0}], "allowlist": {}}"#;

fn reviewer(script: &str) -> String {
    format!(
        "[\"{}\"]",
        fixtures().join("reviewers").join(script).display()
    )
}

/// Everything a command printed, checked for every secret; returns the output.
#[track_caller]
fn clean(out: Output, secrets: &[&str]) -> Output {
    for secret in secrets {
        assert!(
            !out.stdout.contains(secret) && !out.stderr.contains(secret),
            "a secret was printed:\n{out}"
        );
    }
    out
}

#[track_caller]
fn ok(out: Output) -> Output {
    assert_eq!(out.code, 0, "{out}");
    out
}

fn show(env: &TestEnv, run_id: &str, path: &str) -> String {
    env.git(&["show", &format!("refs/pair/runs/{run_id}:{path}")])
}

#[test]
fn the_env_story_redacts_the_packet_blocks_the_round_and_leaks_nothing() {
    let env = TestEnv::new();
    let keys = AwsKeys::new(0x5eed_0001);
    let secrets = keys.all();
    let run_id = env.start("Deploy the service to the new region");
    env.write(
        "src/deploy.rs",
        "pub fn region() -> &'static str {\n    \"eu-west-1\"\n}\n",
    );
    env.write(".env", &keys.dotenv());
    let approve = reviewer("approve.sh");
    ok(clean(
        env.pair(&["coder-done", "--summary", "Added the deploy config"]),
        &secrets,
    ));

    // The dry run shows the packet as a reviewer would get it: redacted.
    let dry = ok(clean(
        env.pair(&["review", "--dry-run", "--reviewer-cmd", &approve]),
        &secrets,
    ));
    assert!(
        dry.stdout
            .contains("+AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id]"),
        "{dry}"
    );
    assert!(
        dry.stdout
            .contains("+AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-access-key]"),
        "{dry}"
    );
    assert!(dry.stdout.contains("+REGION=eu-west-1"), "{dry}");
    assert!(
        dry.stderr.contains("2 secrets redacted from the packet")
            && dry.stderr.contains("aws-access-key-id in .env:1"),
        "{dry}"
    );
    let dry_json = ok(clean(
        env.pair(&["review", "--dry-run", "--reviewer-cmd", &approve, "--json"]),
        &secrets,
    ))
    .json();
    assert_eq!(
        dry_json["secrets"],
        serde_json::json!([
            {"kind": "aws-access-key-id", "path": ".env", "line": 1},
            {"kind": "aws-secret-access-key", "path": ".env", "line": 2},
        ])
    );

    // A reviewer that approves: the round is CHANGES_REQUESTED all the same.
    let seen = env.home.join("prompt-seen.md");
    let out = ok(clean(
        env.pair_env(
            &["review", "--reviewer-cmd", &approve, "--json"],
            &[("STUB_PROMPT_COPY", seen.to_str().expect("utf-8 path"))],
        ),
        &secrets,
    ));
    let v = out.json();
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{out}");
    assert_eq!(v["next_action"], "code", "{out}");
    let findings = v["findings"].as_array().expect("findings");
    let secret_findings: Vec<&serde_json::Value> = findings
        .iter()
        .filter(|f| f["category"] == "secret")
        .collect();
    assert_eq!(secret_findings.len(), 2, "{out}");
    assert_eq!(secret_findings[0]["location"], ".env:1");
    assert_eq!(secret_findings[0]["severity"], "critical");
    assert!(
        secret_findings[0]["text"]
            .as_str()
            .expect("text")
            .contains("aws-access-key-id")
    );
    assert_eq!(secret_findings[1]["location"], ".env:2");
    let prompt_seen = std::fs::read_to_string(&seen).expect("the reviewer got a prompt");
    assert!(prompt_seen.contains("[REDACTED:aws-access-key-id]"));
    for secret in secrets {
        assert!(!prompt_seen.contains(secret), "the reviewer saw a secret");
    }

    // Nothing stored for the round carries the secret…
    for material in [
        "diff.patch",
        "prompt.md",
        "output.txt",
        "context.json",
        "coverage.json",
        "result.json",
        "attempts.json",
    ] {
        let text = show(&env, &run_id, &format!("reviews/1/{material}"));
        for secret in secrets {
            assert!(
                !text.contains(secret),
                "reviews/1/{material} holds a secret"
            );
        }
    }
    assert!(show(&env, &run_id, "reviews/1/diff.patch").contains("[REDACTED:aws-access-key-id]"));
    let mut stored = show(&env, &run_id, "manifest.json");
    for record in env.records(&run_id) {
        stored.push_str(&show(&env, &run_id, &record_path(&record)));
    }
    stored.push_str(&env.git(&["log", "--format=%B", &format!("refs/pair/runs/{run_id}")]));
    for secret in secrets {
        assert!(
            !stored.contains(secret),
            "a record or commit holds a secret"
        );
    }
    // …except the reviewed snapshot, which is the work tree itself: what push scans.
    assert!(show(&env, &run_id, "reviews/1/snapshot/.env").contains(&keys.id));

    // Nothing rendered or printed carries it either.
    let handoff = env.read("HANDOFF.md");
    assert!(
        handoff.contains("1. [secret] [severity: critical] .env:1 — a secret (aws-access-key-id)"),
        "{handoff}"
    );
    assert!(handoff.contains("VERDICT: CHANGES_REQUESTED"), "{handoff}");
    for secret in secrets {
        assert!(!handoff.contains(secret), "HANDOFF.md holds a secret");
    }
    let pr_body = ok(clean(env.pair(&["pr-body"]), &secrets));
    assert!(pr_body.stdout.contains("[secret]"), "{pr_body}");
    for args in [
        vec!["handoff"],
        vec!["status", "--json"],
        vec!["list", "--json"],
        vec!["show", &run_id, "--json"],
        vec!["show", &run_id, "--round", "1", "--diff"],
        vec!["show", &run_id, "--round", "1", "--prompt"],
        vec!["show", &run_id, "--round", "1", "--output"],
        vec!["pr-body", "--json"],
        vec!["diff", &run_id, "--round", "1", "--json"],
    ] {
        ok(clean(env.pair(&args), &secrets));
    }
}

#[test]
fn a_reviewer_echoing_a_secret_is_redacted_before_it_is_stored() {
    let env = TestEnv::new();
    let keys = AwsKeys::new(0x5eed_0002);
    let run_id = env.start("Harden the config loader");
    env.write("src/config.rs", "pub fn load() {}\n");
    ok(env.pair(&["coder-done", "--summary", "Added the loader"]));
    let note = format!("the key {} from your shell history is live", keys.id);
    let out = ok(clean(
        env.pair_env(
            &[
                "review",
                "--reviewer-cmd",
                &reviewer("approve.sh"),
                "--json",
            ],
            &[("STUB_NOTE", &note)],
        ),
        &[&keys.id],
    ));
    let v = out.json();
    // The secret is in what the reviewer said, not in the change: no [secret] finding.
    assert_eq!(v["verdict"], "APPROVED", "{out}");
    assert_eq!(
        v["findings"][0]["text"],
        "the key [REDACTED:aws-access-key-id] from your shell history is live"
    );
    for material in ["output.txt", "result.json", "attempts.json"] {
        let text = show(&env, &run_id, &format!("reviews/1/{material}"));
        assert!(
            !text.contains(&keys.id),
            "reviews/1/{material} holds the key"
        );
    }
    assert!(!env.read("HANDOFF.md").contains(&keys.id));
}

#[test]
fn the_pattern_table_comes_from_pair_secrets_file() {
    let env = TestEnv::new();
    let keys = AwsKeys::new(0x5eed_0003);
    env.start("t");
    env.write(".env", &keys.dotenv());
    ok(env.pair(&["coder-done", "--summary", "config"]));
    let approve = reviewer("approve.sh");
    let dry = ["review", "--dry-run", "--reviewer-cmd", approve.as_str()];

    let missing = env.home.join("no-such-table.json");
    env.git(&["config", "pair.secretsFile", path(&missing)]);
    let out = env.pair(&dry);
    assert_one_error_line(&out, 1, &missing.display().to_string());
    assert!(out.stderr.contains("hint: "), "{out}");

    let broken = env.home.join("broken.json");
    std::fs::write(&broken, "{\"v\": 1, \"rules\": [").expect("write");
    env.git(&["config", "pair.secretsFile", path(&broken)]);
    assert_one_error_line(&env.pair(&dry), 1, &broken.display().to_string());

    // An empty table is refused (a table emptied by mistake must not turn scanning off)…
    let empty = env.home.join("empty.json");
    std::fs::write(&empty, r#"{"v":1,"rules":[],"allowlist":{}}"#).expect("write");
    env.git(&["config", "pair.secretsFile", path(&empty)]);
    assert_one_error_line(&env.pair(&dry), 1, "\"rules\" is empty");
    // …a table of one rule that never matches finds nothing: the "without" case of
    // tests/bench/secrets.sh.
    let inert = env.home.join("inert.json");
    std::fs::write(&inert, INERT_TABLE).expect("write");
    env.git(&["config", "pair.secretsFile", path(&inert)]);
    let out = ok(env.pair(&dry));
    assert!(out.stdout.contains(&keys.id), "{out}");

    // Redaction cannot be switched off: the key is read and said to do nothing.
    env.git(&["config", "--unset", "pair.secretsFile"]);
    env.git(&["config", "pair.review.redactSecrets", "false"]);
    let out = ok(clean(env.pair(&dry), &keys.all()));
    assert!(out.stdout.contains("[REDACTED:aws-access-key-id]"), "{out}");
    assert!(
        out.stderr
            .contains("pair.review.redactSecrets=false has no effect"),
        "{out}"
    );
}

#[test]
fn push_refuses_a_secret_and_drop_removes_the_run_everywhere_for_good() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let keys = AwsKeys::new(0x5eed_0004);
    let secrets = keys.all();
    let approve = reviewer("approve.sh");
    let git_remote = |args: &[&str]| {
        let mut all = vec!["--git-dir", path(&net.remote)];
        all.extend_from_slice(args);
        a.git_out(&all)
    };

    // Round 1 is clean, published, and pulled by the second clone.
    let run_id = a.start("Deploy the service");
    a.write(
        "src/deploy.rs",
        "pub fn region() -> &'static str { \"eu\" }\n",
    );
    ok(a.pair(&["coder-done", "--summary", "deploy code"]));
    ok(a.pair(&["review", "--reviewer-cmd", &approve]));
    assert_eq!(a.pair_json(&["push"])["pushed_runs"], 1);
    assert_eq!(b.pair_json(&["pull"])["runs"]["created"], 1);

    // Round 2 adds the .env: the review blocks, and push publishes nothing.
    a.write(".env", &keys.dotenv());
    let blob = a.git(&["hash-object", ".env"]).trim().to_owned();
    ok(clean(
        a.pair(&["coder-done", "--summary", "config"]),
        &secrets,
    ));
    ok(clean(
        a.pair(&["review", "--reviewer-cmd", &approve]),
        &secrets,
    ));
    let remote_before = net.remote_refs();
    let out = clean(a.pair(&["push"]), &secrets);
    assert_one_error_line(&out, 1, "refusing to push to 'origin'");
    let error = out.stderr.lines().next().expect("error line");
    assert!(
        error.contains(&format!(
            "run {run_id} round 2: aws-access-key-id in .env:1 (snapshot)"
        )) && error.contains("aws-secret-access-key in .env:2"),
        "{out}"
    );
    assert!(
        out.stderr
            .contains(&format!("git pair drop {run_id} --force"))
            && out
                .stderr
                .contains("git pair push --allow-secret aws-access-key-id:.env --allow-secret aws-secret-access-key:.env (recorded"),
        "both secrets are named in the one command that would allow them: {out}"
    );
    let refused = clean(a.pair(&["push", "--json"]), &secrets);
    assert_eq!(refused.code, 1);
    let v = refused.json();
    assert_eq!(v["secrets"][0]["path"], ".env", "{refused}");
    assert_eq!(v["secrets"][0]["round"], 2, "{refused}");
    assert_eq!(net.remote_refs(), remote_before, "nothing was published");
    assert_ne!(git_remote(&["cat-file", "-e", &blob]).code, 0);

    // The active run is only dropped on purpose.
    let out = a.pair(&["drop", &run_id]);
    assert_one_error_line(&out, 1, "active run");
    assert!(out.stderr.contains("--force"), "{out}");

    let dropped = ok(clean(
        a.pair(&["drop", &run_id, "--remote", "origin", "--force", "--json"]),
        &secrets,
    ))
    .json();
    let removed: Vec<&str> = dropped["removed_refs"]
        .as_array()
        .expect("refs")
        .iter()
        .filter_map(|r| r.as_str())
        .collect();
    assert!(removed.contains(&format!("refs/pair/runs/{run_id}").as_str()));
    assert!(
        removed.contains(&format!("refs/pair-remotes/origin/pair/runs/{run_id}").as_str()),
        "{dropped}"
    );
    assert_eq!(dropped["remote"]["deleted"], true, "{dropped}");
    assert_eq!(dropped["tombstone"], format!("refs/pair/dropped/{run_id}"));
    assert!(
        !a.repo.join("HANDOFF.md").exists(),
        "the view of the run went"
    );

    let on_remote = net.remote_refs();
    assert!(
        !on_remote.contains(&format!("refs/pair/runs/{run_id}")),
        "{on_remote}"
    );
    assert!(
        on_remote.contains(&format!("refs/pair/dropped/{run_id}")),
        "{on_remote}"
    );
    // Only tombstones name it now (the remote's, staged, too).
    let local = a.git(&["for-each-ref", "--format=%(refname)"]);
    assert_eq!(
        local
            .lines()
            .filter(|l| l.contains(&run_id))
            .collect::<Vec<_>>(),
        [
            format!("refs/pair-remotes/origin/pair/dropped/{run_id}"),
            format!("refs/pair/dropped/{run_id}")
        ],
        "{local}"
    );
    // The tombstone keeps nothing of the run alive: gc removes the secret's blob.
    a.git(&["gc", "-q", "--prune=now"]);
    assert_ne!(
        a.git_out(&["cat-file", "-e", &blob]).code,
        0,
        "blob survived gc"
    );

    // The clone that pulled round 1 loses its copy on its next pull, and never brings it back.
    let pulled = ok(clean(b.pair(&["pull"]), &secrets));
    assert!(
        pulled
            .stdout
            .contains(&format!("Removed local run {run_id}: it was dropped")),
        "{pulled}"
    );
    assert!(
        b.git_out(&[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/pair/runs/{run_id}")
        ])
        .code
            != 0
    );
    assert!(
        b.git(&["for-each-ref", "refs/pair-remotes"])
            .lines()
            .all(|l| !l.contains(&format!("runs/{run_id}")))
    );
    ok(b.pair(&["push"]));
    ok(b.pair(&["pull"]));
    assert!(
        !net.remote_refs()
            .contains(&format!("refs/pair/runs/{run_id}"))
    );
    assert!(!b.pair(&["list"]).stdout.contains(&run_id));
    // A pushes again: nothing left to publish, nothing resurrected.
    ok(a.pair(&["push"]));
    assert!(
        !net.remote_refs()
            .contains(&format!("refs/pair/runs/{run_id}"))
    );
}

#[test]
fn an_allowed_false_positive_is_published_recorded_and_a_later_drop_prunes_the_remote() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let token = fixture_token(0x5eed_0005);
    let approve = reviewer("approve.sh");
    let git_remote = |args: &[&str]| {
        let mut all = vec!["--git-dir", path(&net.remote)];
        all.extend_from_slice(args);
        a.git_out(&all)
    };

    let run_id = a.start("Add the integration test fixtures");
    a.write("tests/fixtures/app.env", &format!("API_TOKEN={token}\n"));
    let blob = a
        .git(&["hash-object", "tests/fixtures/app.env"])
        .trim()
        .to_owned();
    ok(a.pair(&["coder-done", "--summary", "fixtures"]));
    let v = ok(clean(
        a.pair(&["review", "--reviewer-cmd", &approve, "--json"]),
        &[&token],
    ))
    .json();
    assert_eq!(v["verdict"], "CHANGES_REQUESTED");
    assert_eq!(v["findings"][0]["location"], "tests/fixtures/app.env:1");

    let out = clean(a.pair(&["push"]), &[&token]);
    assert_one_error_line(&out, 1, "generic-secret in tests/fixtures/app.env:1");
    let out = a.pair(&["push", "--allow-secret", "no-such-kind:x"]);
    assert_eq!(out.code, 129, "{out}");

    let pushed = ok(clean(
        a.pair(&[
            "push",
            "--allow-secret",
            "generic-secret:tests/fixtures/app.env",
            "--json",
        ]),
        &[&token],
    ))
    .json();
    assert_eq!(pushed["pushed_runs"], 1, "{pushed}");
    assert_eq!(
        pushed["allowances_recorded"][&run_id],
        serde_json::json!(["generic-secret:tests/fixtures/app.env"])
    );
    assert_eq!(pushed["allowed"][0]["kind"], "generic-secret");
    // The allowance is a record of the run, visible in its log, transcript and PR body.
    let log = a.git(&["log", "--format=%s", &format!("refs/pair/runs/{run_id}")]);
    assert!(
        log.contains("allow-secret: generic-secret:tests/fixtures/app.env (push --allow-secret)"),
        "{log}"
    );
    assert!(a.pair(&["handoff"]).stdout.contains(
        "Secret allowed for push (known false positive): generic-secret:tests/fixtures/app.env"
    ));
    assert!(
        a.pair(&["pr-body"])
            .stdout
            .contains("`generic-secret:tests/fixtures/app.env`")
    );
    assert_eq!(git_remote(&["cat-file", "-e", &blob]).code, 0, "published");

    // A later round of the same run needs no flag: the allowance is remembered.
    a.write("src/lib.rs", "pub fn f() {}\n");
    ok(a.pair(&["coder-done", "--summary", "more"]));
    ok(a.pair(&["review", "--reviewer-cmd", &approve]));
    assert_eq!(ok(a.pair(&["push", "--json"])).json()["pushed_runs"], 1);

    // The second clone has it; then the run is dropped on the remote, whose gc prunes it.
    assert_eq!(b.pair_json(&["pull"])["runs"]["created"], 1);
    assert_eq!(b.git_out(&["cat-file", "-e", &blob]).code, 0);
    ok(a.pair(&["drop", &run_id, "--remote", "origin", "--force"]));
    assert!(
        !net.remote_refs()
            .contains(&format!("refs/pair/runs/{run_id}"))
    );
    assert_eq!(git_remote(&["gc", "-q", "--prune=now"]).code, 0);
    assert_ne!(
        git_remote(&["cat-file", "-e", &blob]).code,
        0,
        "blob survived on the remote"
    );

    let pulled = ok(b.pair(&["pull", "--json"])).json();
    assert_eq!(pulled["removed"]["runs"], serde_json::json!([run_id]));
    b.git(&["gc", "-q", "--prune=now"]);
    assert_ne!(
        b.git_out(&["cat-file", "-e", &blob]).code,
        0,
        "blob survived in the clone"
    );
}

#[test]
fn drop_removes_the_runs_note_lines_and_a_stale_clone_does_not_bring_them_back() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let approve = reviewer("approve.sh");
    let run_id = a.start("A small fix");
    a.write("src/fix.rs", "pub fn fix() {}\n");
    ok(a.pair(&["coder-done", "--summary", "fix"]));
    ok(a.pair(&["review", "--reviewer-cmd", &approve]));
    a.git(&["add", "src/fix.rs"]);
    a.git(&["commit", "-q", "-m", "fix"]);
    ok(a.pair(&["finish"]));
    let notes = |env: &TestEnv| -> String {
        let list = env.git(&["notes", "--ref=pair", "list"]);
        list.lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(|blob| env.git(&["cat-file", "-p", blob]))
            .collect()
    };
    assert!(
        notes(a).contains(&format!("pair-run={run_id} ")),
        "{}",
        notes(a)
    );
    ok(a.pair(&["push"]));
    ok(b.pair(&["pull"]));
    assert!(notes(b).contains(&format!("pair-run={run_id} ")));

    // A finished run is dropped without --force; its note line goes, here and there.
    let out = ok(a.pair(&["drop", &run_id, "--remote", "origin"]));
    assert!(
        out.stdout.contains("removed 1 line from refs/notes/pair"),
        "{out}"
    );
    assert!(!notes(a).contains(&run_id));

    // The stale clone still holds the line; its push pulls the tombstone first.
    ok(b.pair(&["push"]));
    assert!(!notes(b).contains(&run_id), "{}", notes(b));
    ok(a.pair(&["pull"]));
    assert!(!notes(a).contains(&run_id));
    let remote_notes = a.git(&[
        "--git-dir",
        path(&net.remote),
        "log",
        "-p",
        "-1",
        "refs/notes/pair",
    ]);
    assert!(
        remote_notes.contains(&format!("-pair-run={run_id}")),
        "the remote's newest notes commit removed the line:\n{remote_notes}"
    );
    a.assert_fsck_clean();
    b.assert_fsck_clean();
}

#[test]
fn drop_names_what_it_cannot_find() {
    let env = TestEnv::new();
    let out = env.pair(&["drop", "20261129-231500-abcdef"]);
    assert_one_error_line(&out, 1, "unknown run '20261129-231500-abcdef'");
    let out = env.pair(&["drop", "not-a-run"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.starts_with("error: "), "{out}");
}

#[test]
fn a_secret_typed_into_the_task_or_a_summary_is_recorded_redacted() {
    let env = TestEnv::new();
    let keys = AwsKeys::new(0x5eed_0006);
    let secrets = keys.all();
    let task = format!("Rotate the leaked key {} everywhere", keys.id);
    let out = ok(clean(
        env.pair(&["start", "--task", &task, "--json"]),
        &secrets,
    ));
    let run_id = out.json()["run_id"].as_str().expect("run id").to_owned();
    env.write("src/a.rs", "pub fn a() {}\n");
    let summary = format!(
        "removed AWS_SECRET_ACCESS_KEY={} from the docs",
        keys.secret
    );
    let out = ok(clean(
        env.pair(&["coder-done", "--summary", &summary]),
        &secrets,
    ));
    assert!(out.stderr.contains("1 secret redacted"), "{out}");
    let mut stored = show(&env, &run_id, "manifest.json");
    for record in env.records(&run_id) {
        stored.push_str(&show(&env, &run_id, &record_path(&record)));
    }
    stored.push_str(&env.read("HANDOFF.md"));
    stored.push_str(&env.git(&["log", "--format=%B", &format!("refs/pair/runs/{run_id}")]));
    for secret in secrets {
        assert!(!stored.contains(secret), "stored:\n{stored}");
    }
    assert!(stored.contains("Rotate the leaked key [REDACTED:aws-access-key-id] everywhere"));
    ok(clean(env.pair(&["status", "--json"]), &secrets));
}

#[test]
fn a_run_only_the_remote_has_is_dropped_there() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let run_id = a.start("published from A");
    ok(a.pair(&["push"]));
    // B never pulled it; it drops it on the remote by id.
    let out = ok(b.pair(&["drop", &run_id, "--remote", "origin"]));
    // It is fetched first, so the tombstone names every commit of it.
    assert!(
        out.stdout
            .contains(&format!("removed ref refs/pair/runs/{run_id}")),
        "{out}"
    );
    assert!(out.stdout.contains("deleted on origin"), "{out}");
    assert!(
        !net.remote_refs()
            .contains(&format!("refs/pair/runs/{run_id}"))
    );
    assert!(b.git(&["for-each-ref", "refs/pair/runs"]).is_empty());
    // A, which made it and still works on it, keeps it on its next push (which pulls
    // first), publishes it no more, and removes it only on purpose.
    let pushed = ok(a.pair(&["push", "--json"])).json();
    assert_eq!(
        pushed["removed"]["kept_active"],
        serde_json::json!([run_id]),
        "{pushed}"
    );
    assert!(
        !net.remote_refs()
            .contains(&format!("refs/pair/runs/{run_id}"))
    );
    ok(a.pair(&["drop", &run_id, "--force"]));
    assert!(a.git(&["for-each-ref", "refs/pair/runs"]).is_empty());
}

/// Everything stored for a run but its reviewed snapshots (which are the work tree itself):
/// every file of its tree, its commit messages, and `refs/notes/pair` when there is one.
fn stored_outside_snapshots(env: &TestEnv, run_id: &str) -> String {
    let tip = format!("refs/pair/runs/{run_id}");
    let mut stored = String::new();
    for path in env.git(&["ls-tree", "-r", "--name-only", &tip]).lines() {
        if !path.contains("/snapshot/") {
            stored.push_str(&show(env, run_id, path));
        }
    }
    stored.push_str(&env.git(&["log", "--format=%B", &tip]));
    if env
        .git_out(&["rev-parse", "--verify", "-q", "refs/notes/pair"])
        .code
        == 0
    {
        stored.push_str(&env.git(&["log", "-p", "refs/notes/pair"]));
    }
    stored
}

#[test]
fn the_builtin_reviewer_leaves_a_secret_to_the_scanner_one_finding_and_no_bytes() {
    let env = TestEnv::new();
    let keys = AwsKeys::new(0x5eed_0007);
    let start = ok(env.pair(&[
        "start",
        "--task",
        "Load the key",
        "--reviewer",
        "builtin",
        "--json",
    ]));
    let run_id = start.json()["run_id"].as_str().expect("run id").to_owned();
    // The key sits on a line the built-in quotes (a TODO), in a file with a test beside it.
    env.write(
        "src/keys.rs",
        &format!(
            "pub fn key() -> &'static str {{\n    \"{}\" // TODO load from the environment\n}}\n",
            keys.id
        ),
    );
    env.write("tests/keys.rs", "#[test]\nfn key() {}\n");
    ok(env.pair(&["coder-done", "--summary", "Added the key"]));
    let out = ok(clean(env.pair(&["review", "--json"]), &[&keys.id]));
    let v = out.json();
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{out}");
    let findings = v["findings"].as_array().expect("findings");
    let secret: Vec<&serde_json::Value> = findings
        .iter()
        .filter(|f| f["category"] == "secret")
        .collect();
    assert_eq!(secret.len(), 1, "{out}");
    assert_eq!(secret[0]["location"], "src/keys.rs:2", "{out}");
    // The built-in's own finding on that line quotes it redacted.
    let todo: Vec<&serde_json::Value> = findings
        .iter()
        .filter(|f| f["category"] == "todo")
        .collect();
    assert_eq!(todo.len(), 1, "{out}");
    assert_eq!(
        todo[0]["text"],
        "new TODO added: \"[REDACTED:aws-access-key-id]\" // TODO load from the environment",
        "{out}"
    );
    let stored = stored_outside_snapshots(&env, &run_id);
    assert!(
        stored.contains("VERDICT: CHANGES_REQUESTED"),
        "the output is stored"
    );
    assert!(!stored.contains(&keys.id), "stored:\n{stored}");
    ok(clean(env.pair(&["handoff"]), &[&keys.id]));
    assert!(!env.read("HANDOFF.md").contains(&keys.id));
}

#[test]
fn a_look_alike_the_scanner_ignores_no_longer_makes_the_builtin_request_changes() {
    let env = TestEnv::new();
    ok(env.pair(&[
        "start",
        "--task",
        "Config",
        "--reviewer",
        "builtin",
        "--json",
    ]));
    // What the built-in's own table used to call a hard-coded password.
    let look_alike = format!("db_{} = \"{}\"\n", "password", "hunter22");
    env.write("config/app.toml", &look_alike);
    ok(env.pair(&["coder-done", "--summary", "Added the config"]));
    let out = ok(env.pair(&["review", "--json"]));
    let v = out.json();
    assert_eq!(v["verdict"], "APPROVED", "{out}");
    assert_eq!(v["findings"], serde_json::json!([]), "{out}");
}

#[test]
fn a_push_of_many_runs_finds_a_secret_in_the_first_run_and_in_the_last() {
    // Enough runs that the scan runs on a few threads (a share of the runs each, on a machine
    // with more than one core): a secret in the first share and one in the last are both found.
    let net = Net::new(1);
    let a = &net.clones[0];
    let approve = reviewer("approve.sh");
    let (first_keys, last_keys) = (AwsKeys::new(0x5eed_0101), AwsKeys::new(0x5eed_0102));
    let mut secrets: Vec<&str> = first_keys.all().to_vec();
    secrets.extend(last_keys.all());
    let with_secret = |keys: &AwsKeys, task: &str| {
        let run_id = a.start(task);
        a.write(".env", &keys.dotenv());
        ok(clean(
            a.pair(&["coder-done", "--summary", "config"]),
            &secrets,
        ));
        ok(clean(
            a.pair(&["review", "--reviewer-cmd", &approve]),
            &secrets,
        ));
        std::fs::remove_file(a.repo.join(".env")).expect("remove .env");
        run_id
    };
    let first = with_secret(&first_keys, "the first run");
    for i in 0..140 {
        a.start(&format!("run {i}"));
    }
    let last = with_secret(&last_keys, "the last run");
    let out = clean(a.pair(&["push"]), &secrets);
    assert_one_error_line(&out, 1, "refusing to push to 'origin'");
    for run_id in [&first, &last] {
        assert!(
            out.stderr.contains(&format!(
                "run {run_id} round 1: aws-access-key-id in .env:1"
            )),
            "{run_id}: {out}"
        );
    }
    assert_eq!(net.remote_refs(), "", "nothing was published");
}

#[test]
fn a_review_records_text_is_scanned_at_push_on_the_first_push_and_on_a_later_one() {
    // The push scan reads a run's review records once, for the reviewers' `[secret]` flags,
    // and scans that same text: a pattern added after the review (pair.secretsFile) that
    // matches what the reviewer wrote is found in the review record, whether the remote has
    // nothing yet (no manifest is read for a base) or holds the run's earlier rounds.
    let net = Net::new(1);
    let a = &net.clones[0];
    let approve = reviewer("approve.sh");
    let table = a.home.join("zebra.json");
    std::fs::write(
        &table,
        r#"{"v": 1, "rules": [{"id": "zebra-token", "keywords": ["zebra-"], "regex": "zebra-[0-9]{6}", "secret_group": 0}], "allowlist": {}}"#,
    )
    .expect("write");
    let review_with_note = |note: &str| {
        ok(a.pair_env(
            &["review", "--reviewer-cmd", &approve],
            &[("STUB_NOTE", note), ("STUB_CATEGORY", "style")],
        ));
    };
    let run = a.start("notes");
    a.write("src/lib.rs", "pub fn f() {}\n");
    ok(a.pair(&["coder-done", "--summary", "first"]));
    review_with_note("src/lib.rs:1 — see ticket zebra-123456");
    a.git(&["config", "pair.secretsFile", path(&table)]);
    let out = a.pair(&["push"]);
    assert_one_error_line(&out, 1, "refusing to push to 'origin'");
    assert!(out.stderr.contains("zebra-token in records/"), "{out}");
    assert!(out.stderr.contains(&format!("run {run}")), "{out}");
    assert_eq!(net.remote_refs(), "", "nothing was published");

    // Published with the rule off; a later round's review is scanned on the next push.
    a.git(&["config", "--unset", "pair.secretsFile"]);
    ok(a.pair(&["push"]));
    a.write("src/lib.rs", "pub fn f() -> u8 { 1 }\n");
    ok(a.pair(&["coder-done", "--summary", "second"]));
    review_with_note("src/lib.rs:1 — and zebra-654321");
    let published = net.remote_refs();
    a.git(&["config", "pair.secretsFile", path(&table)]);
    let out = a.pair(&["push"]);
    assert_one_error_line(&out, 1, "refusing to push to 'origin'");
    assert!(out.stderr.contains("zebra-token in records/"), "{out}");
    assert_eq!(
        net.remote_refs(),
        published,
        "the second round was not published"
    );
}
