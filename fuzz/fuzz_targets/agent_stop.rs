//! The agent Stop hook on any stdin, against every kind of run state: never a panic, and the
//! stdout is nothing or exactly one line holding one JSON object
//! `{"decision":"block","reason":"…"}`; a stop that follows a block is never blocked.
#![no_main]

use git_pair::hook::agent_stop::{RunView, decide_with, parse_input};
use libfuzzer_sys::fuzz_target;

const ACTIONS: [&str; 10] = [
    "code",
    "review",
    "resume:review",
    "finish",
    "done",
    "wait:review",
    "stop:budget",
    "stop:round-cap",
    "stop:stalled",
    "something-new",
];

fn check(stdin: &[u8], stdout: &str) {
    if stdout.is_empty() {
        return;
    }
    let line = stdout
        .strip_suffix('\n')
        .expect("a block ends with a newline");
    assert!(!line.contains('\n'), "one line: {stdout:?}");
    let value: serde_json::Value = serde_json::from_str(line).expect("a block is JSON");
    let object = value.as_object().expect("a block is one JSON object");
    assert_eq!(object.len(), 2, "{stdout}");
    assert_eq!(object["decision"], "block");
    assert!(object["reason"].as_str().is_some_and(|r| !r.is_empty()));
    let input = parse_input(stdin).expect("only well-formed input can block");
    assert!(
        !input.stop_hook_active,
        "a stop after a block is never blocked"
    );
}

fuzz_target!(|data: &[u8]| {
    let mut runs = vec![Ok(RunView::NoRun), Err(())];
    for action in ACTIONS {
        for unreviewed_work in [false, true] {
            runs.push(Ok(RunView::Run {
                run_id: "20261130-220000-a1b2c3".to_owned(),
                next_action: action.to_owned(),
                unreviewed_work,
            }));
        }
    }
    for run in runs {
        check(data, &decide_with(data, |_| run).stdout());
    }
});
