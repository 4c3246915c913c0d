//! Cost and budget from the agents' own logs (SPEC §7), through the binary, on the shared
//! sample logs whose dollar figures are documented in fixtures/agent-logs/README.md.

use std::path::Path;

use crate::common::{TestEnv, assert_one_error_line, fixtures, record_path};

pub(crate) const CLAUDE_SESSION: &str = "11111111-2222-4333-8444-555555555555";
const CODEX_SESSION: &str = "0199f0aa-1111-7222-8333-444455556666";
/// 2026-09-01T09:00:00Z: before the sample logs, so a run started then counts them.
pub(crate) const BEFORE_LOGS: &str = "1788253200";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

/// An environment whose HOME holds the sample logs and whose prices are the samples'.
pub(crate) fn env_with_logs() -> TestEnv {
    let env = TestEnv::new();
    let logs = fixtures().join("agent-logs");
    copy_dir(&logs.join("claude"), &env.home.join(".claude"));
    copy_dir(&logs.join("codex"), &env.home.join(".codex"));
    env.git(&[
        "config",
        "pair.pricingFile",
        logs.join("pricing.json").to_str().expect("utf8"),
    ]);
    env
}

#[test]
fn cost_session_prices_a_claude_session_whole() {
    let env = env_with_logs();
    let v = env.pair_json(&["cost", "--session", CLAUDE_SESSION]);
    assert_eq!(v["session_id"], CLAUDE_SESSION);
    assert_eq!(v["agent"], "claude");
    assert_eq!(v["total_usd"], 0.128299);
    assert!(v["tokens"]["cache_write_1h"].as_u64().expect("tokens") > 0);
    assert_eq!(v["models"].as_array().expect("models").len(), 2);
}

#[test]
fn cost_session_prices_a_codex_rollout() {
    let env = env_with_logs();
    let v = env.pair_json(&["cost", "--session", CODEX_SESSION]);
    assert_eq!(v["agent"], "codex");
    assert_eq!(v["total_usd"], 0.034125);
    assert_eq!(v["tokens"]["cached_input"], 25000);
}

#[test]
fn cost_session_errors_are_one_line() {
    let env = env_with_logs();
    let out = env.pair(&["cost", "--session", "00000000-0000-4000-8000-000000000000"]);
    assert_one_error_line(&out, 1, "no Claude Code or Codex log found");
    assert!(
        out.stderr.contains("CLAUDE_CONFIG_DIR") && !out.stderr.contains("pricingFile"),
        "a missing log is not a price problem: {out}"
    );
    let out = env.pair(&["cost", "--session", "../../etc/passwd"]);
    assert_one_error_line(&out, 1, "invalid session id");
    env.git(&["config", "pair.pricingFile", "/no/such/prices.json"]);
    let out = env.pair(&["cost", "--session", CLAUDE_SESSION]);
    assert_one_error_line(&out, 1, "/no/such/prices.json");
    assert!(
        out.stderr.contains("git config --get pair.pricingFile"),
        "{out}"
    );
}

#[test]
fn unknown_models_are_reported_not_priced_at_zero() {
    let env = env_with_logs();
    let path = env.home.join(format!(
        ".claude/projects/-home-dev-my-repo/{CLAUDE_SESSION}.jsonl"
    ));
    let text = std::fs::read_to_string(&path)
        .expect("log")
        .replace("claude-opus-4-7", "claude-opus-9-9");
    std::fs::write(&path, text).expect("write");
    let out = env.pair(&["cost", "--session", CLAUDE_SESSION, "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(
        v["unknown_models"],
        serde_json::json!(["claude-opus-9-9"]),
        "{out}"
    );
    assert_eq!(
        v["total_usd"], 0.023589,
        "only the sonnet message is priced"
    );
    assert!(out.stderr.contains("no price for model"), "{out}");
}

#[test]
fn budget_check_grades_the_run_and_exits_2_at_alert() {
    for (budget, level, code) in [
        ("1.00", serde_json::Value::Null, 0),
        ("0.15", "warn".into(), 0),
        ("0.10", "alert".into(), 2),
    ] {
        let env = env_with_logs();
        let mut start = env.pair_cmd(&["start", "--task", "t", "--budget-usd", budget, "--json"]);
        start.env("GIT_PAIR_NOW", BEFORE_LOGS);
        let out = crate::common::run(start);
        assert_eq!(out.code, 0, "{out}");
        env.pair_json(&["coder-done", "--summary", "x", "--session", CLAUDE_SESSION]);
        let out = env.pair(&["budget-check", "--json"]);
        assert_eq!(out.code, code, "{out}");
        let v = out.json();
        assert_eq!(v["level"], level, "{out}");
        assert_eq!(v["spent"], 0.1283);
        assert_eq!(v["limit"], budget.parse::<f64>().expect("f64"));
        let status = env.pair_json(&["status"]);
        let expected = if code == 2 { "stop:budget" } else { "review" };
        assert_eq!(status["next_action"], expected);
    }
}

#[test]
fn coder_sessions_count_only_inside_the_run_window() {
    let env = env_with_logs();
    // Started after the logs were written: none of that session's lines count.
    env.pair_json(&["start", "--task", "t", "--budget-usd", "0.10"]);
    env.pair_json(&["coder-done", "--summary", "x", "--session", CLAUDE_SESSION]);
    let v = env.pair_json(&["budget-check"]);
    assert_eq!(v["spent"], 0.0);
    assert_eq!(v["level"], serde_json::Value::Null);
}

#[test]
fn measured_costs_are_stored_and_survive_deleted_logs() {
    let env = env_with_logs();
    let mut start = env.pair_cmd(&["start", "--task", "t", "--json"]);
    start.env("GIT_PAIR_NOW", BEFORE_LOGS);
    let run_id = crate::common::run(start).json()["run_id"]
        .as_str()
        .expect("id")
        .to_owned();
    env.pair_json(&["coder-done", "--summary", "x", "--session", CLAUDE_SESSION]);
    let m = env.manifest(&run_id);
    assert_eq!(m["spent_usd"], 0.128299);
    assert_eq!(m["rounds"][0]["cost_usd"], 0.128299);
    assert!(env.records(&run_id).iter().any(|r| r.contains("-cost-")));
    std::fs::remove_dir_all(env.home.join(".claude")).expect("rm logs");
    std::fs::remove_dir_all(env.repo.join(".git/pair/cache")).expect("rm cache");
    let v = env.pair_json(&["budget-check"]);
    assert_eq!(v["spent"], 0.1283);
    let cost = env.pair_json(&["cost"]);
    assert_eq!(cost["runs"][0]["spent_usd"], 0.1283);
    assert_eq!(
        cost["runs"][0]["sessions"][0]["measured_usd"],
        serde_json::Value::Null
    );
}

#[test]
fn the_coder_session_is_found_by_work_tree_when_not_given() {
    let env = env_with_logs();
    let cwd = env.repo.canonicalize().expect("canonical");
    let cwd = cwd.to_str().expect("utf8");
    let mangled: String = cwd
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = env.home.join(".claude/projects").join(&mangled);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let sample = fixtures().join(format!(
        "agent-logs/claude/projects/-home-dev-my-repo/{CLAUDE_SESSION}.jsonl"
    ));
    let text = std::fs::read_to_string(sample)
        .expect("sample")
        .replace("/home/dev/my_repo", cwd);
    let session = "22222222-2222-4333-8444-555555555555";
    std::fs::write(dir.join(format!("{session}.jsonl")), text).expect("write");
    let mut start = env.pair_cmd(&["start", "--task", "t", "--json"]);
    start.env("GIT_PAIR_NOW", BEFORE_LOGS);
    let run_id = crate::common::run(start).json()["run_id"]
        .as_str()
        .expect("id")
        .to_owned();
    env.pair_json(&["coder-done", "--summary", "x"]);
    let m = env.manifest(&run_id);
    assert_eq!(m["rounds"][0]["session_id"], session);
    assert_eq!(m["sessions"][session]["role"], "coder");
}

/// With `reviewer = claude` the reviewer runs in the work tree, so its session logs sit in
/// the coder's project folder, newer than the coder's: `coder-done` without `--session` still
/// finds the coder's session, passing over the reviewer session the run recorded and one of
/// a failed attempt it never recorded (its first prompt holds git pair's attempt marker).
#[test]
fn a_reviewer_session_in_the_work_tree_is_never_taken_for_the_coder() {
    let env = TestEnv::new();
    env.git(&["config", "pair.reviewer", "claude"]);
    let run_id = env.start("Teach the fetcher to retry");
    let cwd = env.repo.canonicalize().expect("canonical");
    let cwd = cwd.to_str().expect("utf8").to_owned();
    let mangled: String = cwd
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = env.home.join(".claude/projects").join(&mangled);
    std::fs::create_dir_all(&dir).expect("mkdir");
    // The shapes Claude Code 2.1.197 writes: an interactive coder, a `claude -p` reviewer.
    let log = |id: &str, prompt: &str, entrypoint: &str, age_secs: u64| {
        let mut lines = Vec::new();
        if entrypoint == "sdk-cli" {
            lines.push(
                serde_json::json!({"type": "queue-operation", "operation": "enqueue",
                "timestamp": "2026-12-02T03:38:08.270Z", "sessionId": id, "content": prompt}),
            );
        }
        lines.push(
            serde_json::json!({"parentUuid": null, "isSidechain": false, "type": "user",
            "message": {"role": "user", "content": prompt},
            "uuid": "6383e190-10ee-40bc-85dd-0aac731271e2",
            "timestamp": "2026-12-02T03:38:08.341Z", "userType": "external",
            "entrypoint": entrypoint, "cwd": cwd, "sessionId": id, "version": "2.1.197",
            "gitBranch": "main"}),
        );
        let path = dir.join(format!("{id}.jsonl"));
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).expect("write");
        let when = std::time::SystemTime::now() + std::time::Duration::from_secs(3600)
            - std::time::Duration::from_secs(age_secs);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("open")
            .set_modified(when)
            .expect("touch");
    };
    let coder = "c0de0000-0000-4000-8000-000000000001";
    let reviewer = "5e5e0000-0000-4000-8000-000000000002";
    let failed = "5e5e0000-0000-4000-8000-000000000003";
    log(coder, "Teach the fetcher to retry", "cli", 300);
    env.write("src/lib.rs", "pub fn fetch() -> u32 {\n    42\n}\n");
    env.pair_json(&["coder-done", "--summary", "Added fetch"]);
    let prompt_file = env.home.join("prompt.txt");
    let out = env.pair_with_vendors(
        &["review", "--json"],
        &[
            ("FAKE_REVIEW", "changes"),
            ("FAKE_SESSION_ID", reviewer),
            ("FAKE_PROMPT_FILE", prompt_file.to_str().expect("utf8")),
        ],
    );
    assert_eq!(out.code, 0, "{out}");
    let prompt = std::fs::read_to_string(&prompt_file).expect("prompt");
    assert!(prompt.contains("<!-- git-pair: "), "{prompt}");
    log(reviewer, &prompt, "sdk-cli", 200);
    log(failed, &prompt.replace("/1 -->", "/2 -->"), "sdk-cli", 100);
    env.pair_json(&["coder-done", "--summary", "fixed"]);
    let m = env.manifest(&run_id);
    assert_eq!(m["rounds"][0]["session_id"], coder, "{m}");
    assert_eq!(m["rounds"][2]["session_id"], coder, "{m}");
    assert_eq!(m["sessions"][coder]["role"], "coder", "{m}");
    assert_eq!(m["sessions"][reviewer]["role"], "reviewer", "{m}");
    assert!(m["sessions"].get(failed).is_none(), "{m}");
}

/// SPEC §5: the budget is enforced. At alert, `review` spawns no reviewer that costs money and
/// exits 2 with `stop:budget` (nothing stored); `coder-done` warns; `--over-budget` goes on,
/// recorded on the round and shown in the PR body; the built-in reviewer still runs.
#[test]
fn at_the_budget_alert_review_starts_no_paid_reviewer() {
    let spent_env = || {
        let env = env_with_logs();
        let mut start = env.pair_cmd(&["start", "--task", "t", "--budget-usd", "0.10", "--json"]);
        start.env("GIT_PAIR_NOW", BEFORE_LOGS);
        assert_eq!(crate::common::run(start).code, 0);
        env.write("a.txt", "a\n");
        let out = env.pair(&["coder-done", "--summary", "x", "--session", CLAUDE_SESSION]);
        assert_eq!(out.code, 0, "{out}");
        assert!(
            out.stderr.contains("budget is spent"),
            "coder-done warns: {out}"
        );
        env
    };
    let approve = format!(
        "[\"{}\"]",
        fixtures().join("reviewers/approve.sh").display()
    );

    let env = spent_env();
    let spawned = env.home.join("spawned-prompt");
    let before = env.pair_refs();
    let out = env.pair_env(
        &["review", "--reviewer-cmd", &approve, "--json"],
        &[("STUB_PROMPT_COPY", spawned.to_str().expect("utf8"))],
    );
    assert_eq!(out.code, 2, "{out}");
    let v = out.json();
    assert_eq!(v["next_action"], "stop:budget", "{v}");
    assert!(
        v["error"].as_str().expect("error").contains("budget"),
        "{v}"
    );
    assert!(
        out.stderr.contains("--over-budget"),
        "the hint names the way on: {out}"
    );
    assert!(!spawned.exists(), "no reviewer was spawned");
    assert_eq!(env.pair_refs(), before, "nothing was stored");

    // --over-budget goes on, recorded and shown in the PR body.
    let out = env.pair(&[
        "review",
        "--reviewer-cmd",
        &approve,
        "--over-budget",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.json()["verdict"], "APPROVED");
    let run_id = env.pair_json(&["status"])["run_id"]
        .as_str()
        .expect("run id")
        .to_owned();
    let dispatch = env
        .records(&run_id)
        .into_iter()
        .find(|name| name.contains("review-dispatch"))
        .expect("a dispatch record");
    let record = env.git(&[
        "show",
        &format!("refs/pair/runs/{run_id}:{}", record_path(&dispatch)),
    ]);
    assert!(record.contains("\"over_budget\":true"), "{record}");
    let finish = env.pair(&["finish"]);
    assert_eq!(finish.code, 0, "{finish}");
    let body = env.pair(&["pr-body"]);
    assert!(body.stdout.contains("**Over budget:** round 1"), "{body}");

    // The built-in reviewer is free: it still runs.
    let env = spent_env();
    env.pair_json(&["set", "reviewer", "builtin"]);
    let out = env.pair(&["review", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(out.json()["verdict"].is_string(), "{out}");
}

/// Claude Code 2.1.197's default model, in `fixtures/agent-logs/claude-new/`.
const OPUS_48_SESSION: &str = "22222222-3333-4444-8555-666666666666";
/// A priced haiku message and a `claude-opus-9` one (no price anywhere).
const PART_UNPRICED_SESSION: &str = "33333333-4444-4555-8666-777777777777";
/// Only `claude-opus-9`.
const UNPRICED_SESSION: &str = "44444444-5555-4666-8777-888888888888";

/// [`env_with_logs`] plus the sessions of `fixtures/agent-logs/claude-new/`.
fn env_with_new_logs() -> TestEnv {
    let env = env_with_logs();
    copy_dir(
        &fixtures().join("agent-logs").join("claude-new"),
        &env.home.join(".claude"),
    );
    env
}

/// Starts a run before the logs (so its coder sessions count) and records `session` as the
/// coder's; returns the run id.
fn run_with_coder_session(env: &TestEnv, budget: Option<&str>, session: &str) -> String {
    let mut args = vec!["start", "--task", "t", "--json"];
    if let Some(budget) = budget {
        args.extend(["--budget-usd", budget]);
    }
    let mut start = env.pair_cmd(&args);
    start.env("GIT_PAIR_NOW", BEFORE_LOGS);
    let out = crate::common::run(start);
    assert_eq!(out.code, 0, "{out}");
    let run_id = out.json()["run_id"].as_str().expect("id").to_owned();
    env.pair_json(&["coder-done", "--summary", "x", "--session", session]);
    run_id
}

#[test]
fn claude_codes_default_model_is_priced_from_the_shipped_table() {
    let env = env_with_new_logs();
    let v = env.pair_json(&["cost", "--session", OPUS_48_SESSION]);
    assert_eq!(v["total_usd"], 0.13, "{v}");
    assert_eq!(v["unknown_models"], serde_json::json!([]));
    assert_eq!(v["models"][0]["priced_as"], "claude-opus-4-8");
    let run_id = run_with_coder_session(&env, Some("0.10"), OPUS_48_SESSION);
    assert_eq!(env.manifest(&run_id)["spent_usd"], 0.13);
    let out = env.pair(&["budget-check", "--json"]);
    assert_eq!(out.code, 2, "over the limit is an alert: {out}");
    assert_eq!(out.json()["spent"], 0.13);
}

#[test]
fn codexs_default_model_is_priced_from_the_shipped_table() {
    let env = TestEnv::new();
    copy_dir(
        &fixtures().join("agent-logs").join("codex-new"),
        &env.home.join(".codex"),
    );
    let v = env.pair_json(&["cost", "--session", "01a234c5-8d82-74b3-aebb-92d4fe62334f"]);
    assert_eq!(v["agent"], "codex");
    assert_eq!(v["models"][0]["priced_as"], "gpt-6.2-sol", "{v}");
    assert_eq!(v["total_usd"], 0.098, "{v}");
    assert_eq!(v["unknown_models"], serde_json::json!([]));
}

/// An unpriced session is never a number: every view says "≥ $x, unpriced: <model>", the
/// record keeps the model's tokens, and a price file added later prices them, logs gone.
#[test]
fn unpriced_spend_is_a_lower_bound_everywhere_and_a_later_price_file_prices_it() {
    let env = env_with_new_logs();
    let run_id = run_with_coder_session(&env, Some("1.00"), PART_UNPRICED_SESSION);

    let status = env.pair_json(&["status"]);
    assert_eq!(status["spent_usd"], 0.006, "only the haiku part: {status}");
    assert_eq!(
        status["unpriced_models"],
        serde_json::json!(["claude-opus-9"])
    );
    let human = env.pair(&["status"]);
    assert!(
        human
            .stdout
            .contains("spent: ≥ $0.01, unpriced: claude-opus-9 of $1.00"),
        "{human}"
    );
    let cost = env.pair(&["cost"]);
    assert!(
        cost.stdout.contains("≥ $0.0060, unpriced: claude-opus-9"),
        "{cost}"
    );
    let cost = env.pair_json(&["cost"]);
    assert_eq!(cost["runs"][0]["spent_usd"], 0.006);
    assert_eq!(
        cost["runs"][0]["unpriced_models"],
        serde_json::json!(["claude-opus-9"])
    );
    let body = env.pair(&["pr-body"]);
    assert!(
        body.stdout
            .contains("**Cost:** ≥ $0.01, unpriced: claude-opus-9"),
        "{body}"
    );
    let check = env.pair(&["budget-check", "--json"]);
    assert_eq!(check.code, 0, "{check}");
    let v = check.json();
    assert_eq!(
        v["level"], "warn",
        "unpriced spend is at least a warning: {v}"
    );
    assert_eq!(v["unpriced_models"], serde_json::json!(["claude-opus-9"]));
    assert!(check.stderr.contains("claude-opus-9"), "{check}");

    // Stored: the priced part as a number, the unpriced model's tokens beside it.
    let m = env.manifest(&run_id);
    let stored = &m["sessions"][PART_UNPRICED_SESSION];
    assert_eq!(stored["usd"], 0.006, "{m}");
    assert_eq!(stored["unpriced"]["claude-opus-9"]["input"], 1000, "{m}");
    assert_eq!(stored["unpriced"]["claude-opus-9"]["output"], 4000, "{m}");

    // Logs gone, then a price file that knows the model: the stored tokens are priced.
    std::fs::remove_dir_all(env.home.join(".claude")).expect("rm logs");
    std::fs::remove_dir_all(env.repo.join(".git/pair/cache")).expect("rm cache");
    let status = env.pair_json(&["status"]);
    assert_eq!(status["spent_usd"], 0.006, "still a lower bound: {status}");
    assert_eq!(
        status["unpriced_models"],
        serde_json::json!(["claude-opus-9"])
    );
    let later = fixtures().join("agent-logs").join("later-prices.json");
    env.git(&["config", "pair.pricingFile", later.to_str().expect("utf8")]);
    let status = env.pair_json(&["status"]);
    assert_eq!(status["spent_usd"], 0.216, "{status}");
    assert_eq!(status["unpriced_models"], serde_json::json!([]));
    let v = env.pair_json(&["budget-check"]);
    assert_eq!(v["level"], serde_json::Value::Null, "{v}");
    assert_eq!(v["spent"], 0.216);
    let cost = env.pair(&["cost"]);
    assert!(cost.stdout.contains("tokens unknown"), "{cost}");
    assert!(!cost.stdout.contains("in 0 out 0"), "{cost}");
}

/// Nothing priced: the dollar figure is null (never 0.0), the human views name the model,
/// nothing anywhere reads as a negative zero.
#[test]
fn spend_with_nothing_priced_is_null_not_zero() {
    let env = env_with_new_logs();
    run_with_coder_session(&env, None, UNPRICED_SESSION);
    let status = env.pair_json(&["status"]);
    assert_eq!(status["spent_usd"], serde_json::Value::Null, "{status}");
    assert_eq!(
        status["unpriced_models"],
        serde_json::json!(["claude-opus-9"])
    );
    let check = env.pair(&["budget-check", "--json"]);
    assert_eq!(check.code, 0, "{check}");
    let v = check.json();
    assert_eq!(v["spent"], serde_json::Value::Null, "{v}");
    assert_eq!(v["level"], "warn", "{v}");
    let cost = env.pair_json(&["cost"]);
    assert_eq!(cost["runs"][0]["spent_usd"], serde_json::Value::Null);
    assert_eq!(cost["total_usd"], serde_json::Value::Null);
    for _ in 0..2 {
        // The second time from the remembered cost: still null.
        let v = env.pair_json(&["cost", "--session", UNPRICED_SESSION]);
        assert_eq!(v["total_usd"], serde_json::Value::Null, "{v}");
        assert_eq!(v["models"][0]["cost_usd"], serde_json::Value::Null, "{v}");
        assert_eq!(v["tokens"]["output"], 3000, "{v}");
    }
    let texts = [
        env.pair(&["status"]),
        env.pair(&["cost"]),
        env.pair(&["budget-check"]),
        env.pair(&["pr-body"]),
        env.pair(&["cost", "--session", UNPRICED_SESSION]),
    ];
    for out in &texts {
        assert!(out.stdout.contains("unpriced"), "{out}");
        assert!(!out.stdout.contains("-0.0"), "{out}");
        assert!(!out.stdout.contains("$0.00 "), "{out}");
    }
    assert!(
        texts[0]
            .stdout
            .contains("spent: ≥ $0.00, unpriced: claude-opus-9")
    );
    assert!(
        texts[4].stdout.contains(&format!(
            "session {UNPRICED_SESSION} (Claude): ≥ $0.0000, unpriced: claude-opus-9"
        )),
        "{}",
        texts[4]
    );
}

/// Real spend over the limit that only the unpriced model carries: budget-check is not
/// silent (warn, naming the model); priced later, it is the alert it always was.
#[test]
fn budget_over_the_limit_only_through_unpriced_spend_warns_then_alerts_when_priced() {
    let env = env_with_new_logs();
    run_with_coder_session(&env, Some("0.01"), PART_UNPRICED_SESSION);
    let out = env.pair(&["budget-check", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["level"], "warn", "{v}");
    assert_eq!(v["spent"], 0.006);
    assert_eq!(v["unpriced_models"], serde_json::json!(["claude-opus-9"]));
    let human = env.pair(&["budget-check"]);
    assert!(
        human
            .stdout
            .contains("warn: spent ≥ $0.01, unpriced: claude-opus-9 of $0.01"),
        "{human}"
    );
    assert!(
        human.stderr.contains("no price for model(s) claude-opus-9"),
        "{human}"
    );
    let later = fixtures().join("agent-logs").join("later-prices.json");
    env.git(&["config", "pair.pricingFile", later.to_str().expect("utf8")]);
    let out = env.pair(&["budget-check", "--json"]);
    assert_eq!(out.code, 2, "{out}");
    assert_eq!(out.json()["level"], "alert");
}

/// `claude -p` prints its own `total_cost_usd`: the attempt records it and the reviewer
/// session counts at it, an unknown model included.
#[test]
fn a_reviewer_session_is_recorded_at_its_clis_own_cost() {
    let env = env_with_new_logs();
    env.git(&["config", "pair.reviewer", "claude"]);
    let mut start = env.pair_cmd(&["start", "--task", "t", "--json"]);
    start.env("GIT_PAIR_NOW", BEFORE_LOGS);
    let run_id = crate::common::run(start).json()["run_id"]
        .as_str()
        .expect("id")
        .to_owned();
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "x"]);
    let out = env.pair_with_vendors(
        &["review", "--json"],
        &[
            ("FAKE_SESSION_ID", UNPRICED_SESSION),
            ("FAKE_COST_USD", "0.17"),
        ],
    );
    assert_eq!(out.code, 0, "{out}");
    let record: serde_json::Value = env
        .records(&run_id)
        .iter()
        .map(|name| {
            let text = env.git(&[
                "show",
                &format!("refs/pair/runs/{run_id}:{}", record_path(name)),
            ]);
            serde_json::from_str::<serde_json::Value>(&text).expect("json")
        })
        .find(|r| r["kind"] == "review")
        .expect("a review record");
    assert_eq!(
        record["reviewers"][0]["session_id"], UNPRICED_SESSION,
        "{record}"
    );
    assert_eq!(record["reviewers"][0]["cost_usd"], 0.17, "{record}");
    let m = env.manifest(&run_id);
    assert_eq!(m["sessions"][UNPRICED_SESSION]["reported_usd"], 0.17, "{m}");
    assert_eq!(m["spent_usd"], 0.17, "{m}");
    let status = env.pair_json(&["status"]);
    assert_eq!(status["spent_usd"], 0.17, "{status}");
    assert_eq!(status["unpriced_models"], serde_json::json!([]));
}

/// The review note names the unpriced models beside the priced part (logfmt: no spaces).
#[test]
fn the_review_note_says_the_spend_is_a_lower_bound() {
    let env = env_with_new_logs();
    let mut start = env.pair_cmd(&["start", "--task", "t", "--json"]);
    start.env("GIT_PAIR_NOW", BEFORE_LOGS);
    assert_eq!(crate::common::run(start).code, 0);
    env.write("a.txt", "a\n");
    env.pair_json(&[
        "coder-done",
        "--summary",
        "x",
        "--session",
        PART_UNPRICED_SESSION,
    ]);
    let approve = format!(
        "[\"{}\"]",
        fixtures().join("reviewers").join("approve.sh").display()
    );
    let out = env.pair(&["review", "--reviewer-cmd", &approve, "--json"]);
    assert_eq!(out.code, 0, "{out}");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "a"]);
    let out = env.pair(&["finish", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let note = env.git(&["notes", "--ref=pair", "show", "HEAD"]);
    assert!(
        note.contains(" cost_usd=0.006 cost_unpriced=claude-opus-9 "),
        "{note}"
    );
}
