//! The agent lifecycle hooks fed their events on stdin, as Claude Code and Codex send them
//! (`git pair hook session-start | user-prompt | session-end`, SPEC §10): the count, the
//! reminder, the reset, the removal, what is stored, and failing open.

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use crate::common::{Output, TestEnv};

fn hook(env: &TestEnv, dir: &Path, name: &str, stdin: &str) -> Output {
    let mut cmd = env.pair_cmd(&["hook", name]);
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

const SESSION: &str = "5bf1d1b9-8c98-452e-a919-118e21fabb90";

/// Claude Code's SessionStart (the `cwd` points nowhere: the hook runs where it is started).
fn claude_start(source: &str) -> String {
    format!(
        r#"{{"session_id":"{SESSION}","transcript_path":"/home/u/.claude/projects/-repo/{SESSION}.jsonl","cwd":"/nowhere","hook_event_name":"SessionStart","source":"{source}","model":"claude-opus-4-8[1m]"}}"#
    )
}

/// Codex 0.171's SessionStart (its `session-start.command.input` schema).
fn codex_start(source: &str) -> String {
    format!(
        r#"{{"session_id":"{SESSION}","transcript_path":null,"cwd":"/nowhere","hook_event_name":"SessionStart","model":"gpt-6.2-sol","permission_mode":"default","source":"{source}"}}"#
    )
}

fn prompt(text: &str) -> String {
    format!(
        r#"{{"session_id":"{SESSION}","cwd":"/nowhere","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"{text}"}}"#
    )
}

fn end() -> String {
    format!(
        r#"{{"session_id":"{SESSION}","cwd":"/nowhere","hook_event_name":"SessionEnd","reason":"other"}}"#
    )
}

/// The additional context of a hook's stdout, checking its shape.
fn context(out: &Output, event: &str) -> String {
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.stdout.lines().count(), 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("one JSON object");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], event, "{v}");
    assert_eq!(v.as_object().map(|o| o.len()), Some(1), "{v}");
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("text")
        .to_owned()
}

fn quiet(out: &Output) {
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.stdout, "", "{out}");
}

fn state_files(env: &TestEnv) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(env.repo.join(".git/pair/sessions"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn compactions_count_remind_and_end_for_both_vendors() {
    for start in [claude_start, codex_start] {
        let env = TestEnv::new();
        let repo = env.repo.clone();
        quiet(&hook(&env, &repo, "session-start", &start("startup")));
        quiet(&hook(&env, &repo, "user-prompt", &prompt("hello")));
        let first = context(
            &hook(&env, &repo, "session-start", &start("compact")),
            "SessionStart",
        );
        assert!(
            first.starts_with("CONTEXT HANDOFF HEALTH CHECK\n"),
            "{first}"
        );
        assert!(first.contains("observed in this session: 1."), "{first}");
        // Later user turns: the reminder again, never counting.
        for _ in 0..2 {
            let again = context(
                &hook(&env, &repo, "user-prompt", &prompt("go on")),
                "UserPromptSubmit",
            );
            assert!(again.contains("observed in this session: 1."), "{again}");
        }
        let second = context(
            &hook(&env, &repo, "session-start", &start("compact")),
            "SessionStart",
        );
        assert!(second.contains("observed in this session: 2."), "{second}");
        assert!(second.contains("but not authorized"), "{second}");
        // What is stored: a count under a hash, no id, prompt or path.
        let files = state_files(&env);
        assert_eq!(files.len(), 1, "{files:?}");
        let name = files[0]
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        assert!(!name.contains(SESSION) && !name.contains("5bf1"), "{name}");
        let stored = std::fs::read_to_string(&files[0]).expect("state");
        assert_eq!(stored, "{\"compactions\":2}\n");
        quiet(&hook(&env, &repo, "session-end", &end()));
        assert!(state_files(&env).is_empty(), "{:?}", state_files(&env));
        // After the end, a user turn says nothing.
        quiet(&hook(&env, &repo, "user-prompt", &prompt("still there?")));
    }
}

#[test]
fn a_fresh_start_resets_the_count() {
    for source in ["startup", "resume", "clear"] {
        let env = TestEnv::new();
        let repo = env.repo.clone();
        context(
            &hook(&env, &repo, "session-start", &claude_start("compact")),
            "SessionStart",
        );
        quiet(&hook(&env, &repo, "session-start", &claude_start(source)));
        assert!(state_files(&env).is_empty(), "{source}");
        quiet(&hook(&env, &repo, "user-prompt", &prompt("go on")));
        let again = context(
            &hook(&env, &repo, "session-start", &claude_start("compact")),
            "SessionStart",
        );
        assert!(
            again.contains("observed in this session: 1."),
            "{source}: {again}"
        );
    }
}

#[test]
fn a_second_compaction_makes_an_authorized_run_handoff_ready() {
    let env = TestEnv::new();
    let repo = env.repo.clone();
    let v = env.pair_json(&["start", "--task", "count"]);
    let run = v["run_id"].as_str().expect("run").to_owned();
    env.git(&["config", "pair.handoffAuthorized", "true"]);
    let first = context(
        &hook(&env, &repo, "session-start", &codex_start("compact")),
        "SessionStart",
    );
    assert!(first.contains("Assessment: continue"), "{first}");
    assert!(
        first.contains(&format!("recorded on git pair run {run}")),
        "{first}"
    );
    let second = context(
        &hook(&env, &repo, "session-start", &codex_start("compact")),
        "SessionStart",
    );
    assert!(second.contains("Assessment: handoff-ready"), "{second}");
    assert!(
        second.contains("git pair checkpoint create --authorized --next"),
        "{second}"
    );
    // Both compactions are the run's too: an authorized checkpoint is handoff-ready.
    let compactions = env
        .records(&run)
        .iter()
        .filter(|r| r.contains("compaction"))
        .count();
    assert_eq!(compactions, 2, "{:?}", env.records(&run));
    let v = env.pair_json(&[
        "checkpoint",
        "create",
        "--authorized",
        "--next",
        "continue counting",
    ]);
    assert_eq!(v["assessment"], "handoff-ready", "{v}");
    // The user turn repeats the reminder without recording anything on the run.
    context(
        &hook(&env, &repo, "user-prompt", &prompt("go on")),
        "UserPromptSubmit",
    );
    let after = env
        .records(&run)
        .iter()
        .filter(|r| r.contains("compaction"))
        .count();
    assert_eq!(after, 2);
}

#[test]
fn the_hooks_fail_open() {
    let env = TestEnv::new();
    let repo = env.repo.clone();
    let outside = env.home.clone();
    for name in ["session-start", "user-prompt", "session-end"] {
        for stdin in ["", "not json", "[]", r#"{"source":"compact"}"#] {
            quiet(&hook(&env, &repo, name, stdin));
        }
        // Not in a repository at all.
        quiet(&hook(&env, &outside, name, &claude_start("compact")));
        // Another event's input.
        quiet(&hook(
            &env,
            &repo,
            name,
            r#"{"session_id":"s","hook_event_name":"Stop","stop_hook_active":false}"#,
        ));
    }
    assert!(state_files(&env).is_empty());
    // State that cannot be written: still exit 0, nothing printed.
    std::fs::create_dir_all(env.repo.join(".git/pair")).expect("mkdir");
    std::fs::write(
        env.repo.join(".git/pair/sessions"),
        "a file, not a directory",
    )
    .expect("write");
    quiet(&hook(
        &env,
        &repo,
        "session-start",
        &claude_start("compact"),
    ));
    // Damaged state reads as none.
    std::fs::remove_file(env.repo.join(".git/pair/sessions")).expect("rm");
    context(
        &hook(&env, &repo, "session-start", &claude_start("compact")),
        "SessionStart",
    );
    let file = state_files(&env).pop().expect("state");
    std::fs::write(&file, "garbage").expect("damage");
    let text = context(
        &hook(&env, &repo, "session-start", &claude_start("compact")),
        "SessionStart",
    );
    assert!(text.contains("observed in this session: 1."), "{text}");
}
