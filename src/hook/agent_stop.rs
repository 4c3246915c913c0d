//! The agent Stop hook's decision (SPEC §9): keep a Claude Code or Codex agent from ending its
//! turn while the branch's run has work no reviewer has seen, naming the `git pair` command
//! that comes next, and never trap it.
//!
//! Pure: the hook's stdin bytes and the run state the caller computed go in, a [`Decision`]
//! comes out, rendered as the exact stdout both CLIs read (one JSON object, or nothing; the
//! exit status is always 0). Fail-open everywhere: malformed input, a stop that follows a
//! block (`stop_hook_active`, which bounds the hook to one block per stop, as Codex has no cap
//! of its own), no run, and any error computing the state let the agent stop.
//!
//! Which `next_action` blocks:
//! - `code` blocks only when the work tree differs from the last reviewed snapshot (or the
//!   base, before any review): with no change there is nothing to review.
//! - `review` and `resume:review` always block: a coder round is waiting for its review.
//! - `review:pr` blocks: the run's PR is waiting for its final review (`pair.prFinalRound`).
//! - `finish` lets the agent stop (finishing, committing and the PR are the human's step),
//!   unless the work tree changed after the approval: that change was never reviewed.
//! - `done`, `stop:*` (a human decides), `wait:review` (a review is running) and any value this
//!   module does not know let the agent stop.
//! - A context whose checkpoint was verified in another work tree (the handoff's source) may
//!   stop whatever the run's state: it is told where the work went (a `systemMessage`), and
//!   never to review.

use serde::Serialize;

/// What the hook reads from the agent's stdin; every other field is ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookInput {
    /// True on a stop that follows a block of this turn.
    pub stop_hook_active: bool,
    /// The session's working directory, when the agent said.
    pub cwd: Option<String>,
    /// `Stop` (or `SubagentStop`, …), when the agent said.
    pub hook_event_name: Option<String>,
}

/// The branch's run as the caller sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunView {
    /// No run on this branch (or none unfinished and none finished).
    NoRun,
    Run {
        run_id: String,
        /// The run's `next_action` (SPEC §5), e.g. `code`, `review`, `stop:budget`.
        next_action: String,
        /// The work tree differs from the last reviewed snapshot (from the base when nothing
        /// was reviewed yet).
        unreviewed_work: bool,
    },
    /// This work tree made the checkpoint of the branch's run (or of a checkpoint made with no
    /// run) that was verified in another work tree since: the task continues there.
    HandedOver {
        checkpoint: String,
        /// `host:path` of the verification.
        to: String,
        /// The source was archived there.
        archived: bool,
        /// HEAD or the work tree changed here since the checkpoint.
        changed_since: bool,
    },
}

/// Why the agent may stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Allowed {
    /// The stdin was empty, not JSON, not an object, or a field had the wrong type.
    MalformedInput,
    /// The hook was called for another event than `Stop` (e.g. `SubagentStop`).
    OtherEvent,
    /// This stop follows a block: blocking again could loop forever.
    StopHookActive,
    /// No run on this branch.
    NoRun,
    /// The run's state could not be computed.
    StateUnavailable,
    /// `code` with no change since the last review: nothing to review.
    NothingToReview,
    /// `finish`: the work is approved; finishing is the human's step.
    Approved,
    /// `done`: the run is over.
    RunDone,
    /// `stop:*`: the loop stopped for a human to decide.
    HumanDecides,
    /// `wait:review`: a review is running now.
    ReviewRunning,
    /// A `next_action` this module does not know.
    UnknownAction,
    /// This context's task was handed over: its checkpoint was verified elsewhere.
    HandedOver,
}

/// What the hook answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Let the agent stop: print nothing, exit 0.
    Allow(Allowed),
    /// Keep the agent going; `reason` reaches the model as its next message.
    Block { reason: String },
    /// Let the agent stop, saying why (`{"systemMessage": …}`; exit 0).
    Inform { allowed: Allowed, message: String },
}

impl Decision {
    /// Exactly what the hook prints on stdout (its exit status is 0 either way): nothing to
    /// allow, one line `{"decision":"block","reason":"…"}` to block.
    pub fn stdout(&self) -> String {
        #[derive(Serialize)]
        struct Block<'a> {
            decision: &'static str,
            reason: &'a str,
        }
        #[derive(Serialize)]
        struct Inform<'a> {
            #[serde(rename = "systemMessage")]
            system_message: &'a str,
        }
        match self {
            Decision::Allow(_) => String::new(),
            Decision::Inform { message, .. } => {
                let json = serde_json::to_string(&Inform {
                    system_message: message,
                })
                .expect("a struct of one string always serializes");
                format!("{json}\n")
            }
            Decision::Block { reason } => {
                let json = serde_json::to_string(&Block {
                    decision: "block",
                    reason,
                })
                .expect("a struct of two strings always serializes");
                format!("{json}\n")
            }
        }
    }
}

/// Reads the fields the decision needs from the hook's stdin; `Err` when the input cannot be
/// trusted, which lets the agent stop.
pub fn parse_input(stdin: &[u8]) -> Result<HookInput, Allowed> {
    let value: serde_json::Value =
        serde_json::from_slice(stdin).map_err(|_| Allowed::MalformedInput)?;
    let object = value.as_object().ok_or(Allowed::MalformedInput)?;
    let stop_hook_active = match object.get("stop_hook_active") {
        None | Some(serde_json::Value::Null) => false,
        Some(serde_json::Value::Bool(active)) => *active,
        Some(_) => return Err(Allowed::MalformedInput),
    };
    let text = |key: &str| object.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    Ok(HookInput {
        stop_hook_active,
        cwd: text("cwd"),
        hook_event_name: text("hook_event_name"),
    })
}

/// The whole hook: reads `stdin`, and only when the input allows a block asks `run_state`
/// for the run (so a stop after a block costs no repository work). An error from
/// `run_state` lets the agent stop.
pub fn decide_with<E>(
    stdin: &[u8],
    run_state: impl FnOnce(&HookInput) -> Result<RunView, E>,
) -> Decision {
    let input = match parse_input(stdin) {
        Ok(input) => input,
        Err(allowed) => return Decision::Allow(allowed),
    };
    if let Some(allowed) = allowed_before_state(&input) {
        return Decision::Allow(allowed);
    }
    match run_state(&input) {
        Ok(run) => decide(&input, &run),
        Err(_) => Decision::Allow(Allowed::StateUnavailable),
    }
}

/// The decision for a parsed input and the run's state.
pub fn decide(input: &HookInput, run: &RunView) -> Decision {
    if let Some(allowed) = allowed_before_state(input) {
        return Decision::Allow(allowed);
    }
    let (run_id, next_action, unreviewed_work) = match run {
        RunView::NoRun => return Decision::Allow(Allowed::NoRun),
        RunView::HandedOver {
            checkpoint,
            to,
            archived,
            changed_since,
        } => return handed_over(checkpoint, to, *archived, *changed_since),
        RunView::Run {
            run_id,
            next_action,
            unreviewed_work,
        } => (run_id, next_action, unreviewed_work),
    };
    let record_then_review = |what: &str| Decision::Block {
        reason: format!(
            "git pair run {run_id}: {what}. Record it with `git pair coder-done --summary` and one quoted line saying what you changed, then run `git pair review`.{TAIL}"
        ),
    };
    match next_action.as_str() {
        "code" if *unreviewed_work => {
            record_then_review("the work tree has changes no reviewer has seen")
        }
        "code" => Decision::Allow(Allowed::NothingToReview),
        "review" => Decision::Block {
            reason: format!(
                "git pair run {run_id}: the last coder round was never reviewed. Run `git pair review`.{TAIL}"
            ),
        },
        "review:pr" => Decision::Block {
            reason: format!(
                "git pair run {run_id}: its PR is waiting for its final review. Run `git pair review --pr N` with the run's PR number (`git pair status` shows it).{TAIL}"
            ),
        },
        "resume:review" => Decision::Block {
            reason: format!(
                "git pair run {run_id}: a review was interrupted before it recorded an outcome. Run `git pair review` to dispatch it again.{TAIL}"
            ),
        },
        "finish" if *unreviewed_work => {
            record_then_review("the work tree changed after the approving review")
        }
        "finish" => Decision::Allow(Allowed::Approved),
        "done" => Decision::Allow(Allowed::RunDone),
        "wait:review" => Decision::Allow(Allowed::ReviewRunning),
        action if action.starts_with("stop:") => Decision::Allow(Allowed::HumanDecides),
        _ => Decision::Allow(Allowed::UnknownAction),
    }
}

/// Lets a handoff's source stop, saying where the work went.
fn handed_over(checkpoint: &str, to: &str, archived: bool, changed_since: bool) -> Decision {
    let state = if archived {
        "and this context was archived there"
    } else {
        "(this context is not archived yet: it is still active and may resume on its own until it is)"
    };
    let since = if changed_since {
        " Changes made here after the checkpoint did not go with it: hand them over with a new checkpoint, or leave them for the human."
    } else {
        ""
    };
    Decision::Inform {
        allowed: Allowed::HandedOver,
        message: format!(
            "git pair: this task was handed over — checkpoint {checkpoint} was verified in {to} {state}. The work continues there; this context may stop.{since}"
        ),
    }
}

/// Said after every block, so the agent knows a stop it cannot avoid is still possible.
const TAIL: &str = " If you cannot do that now, tell the user why and stop.";

/// The reasons to allow that need no run state.
fn allowed_before_state(input: &HookInput) -> Option<Allowed> {
    if input
        .hook_event_name
        .as_deref()
        .is_some_and(|event| event != "Stop")
    {
        return Some(Allowed::OtherEvent);
    }
    input.stop_hook_active.then_some(Allowed::StopHookActive)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "20261129-231500-a1b2c3";

    fn claude_stdin(active: bool) -> String {
        format!(
            r#"{{"session_id":"0b6f","transcript_path":"/home/u/.claude/projects/-repo/0b6f.jsonl","cwd":"/repo","hook_event_name":"Stop","stop_hook_active":{active},"last_assistant_message":"All done.","permission_mode":"default","effort":{{"level":"high"}}}}"#
        )
    }

    fn codex_stdin(active: bool) -> String {
        format!(
            r#"{{"session_id":"019a","turn_id":"019a-1","transcript_path":null,"cwd":"/repo","hook_event_name":"Stop","model":"gpt-5.5","permission_mode":"default","stop_hook_active":{active},"last_assistant_message":null}}"#
        )
    }

    fn run(next_action: &str, unreviewed_work: bool) -> RunView {
        RunView::Run {
            run_id: RUN.to_owned(),
            next_action: next_action.to_owned(),
            unreviewed_work,
        }
    }

    /// Allowed for that reason, or blocked with a reason naming that command.
    enum Want {
        Allow(Allowed),
        Block(&'static str),
    }

    #[test]
    fn a_handoffs_source_may_stop_and_is_told_where_the_work_went() {
        let view = |archived, changed_since| RunView::HandedOver {
            checkpoint: "ck-0123456789ab".into(),
            to: "b:/dest".into(),
            archived,
            changed_since,
        };
        let input = parse_input(claude_stdin(false).as_bytes()).expect("parses");
        for (archived, changed) in [(true, false), (false, false), (true, true)] {
            let decision = decide(&input, &view(archived, changed));
            let Decision::Inform { allowed, message } = &decision else {
                panic!("not an informed stop: {decision:?}");
            };
            assert_eq!(*allowed, Allowed::HandedOver);
            assert!(
                message.contains("ck-0123456789ab") && message.contains("b:/dest"),
                "{message}"
            );
            assert!(!message.contains("git pair review"), "{message}");
            assert_eq!(message.contains("archived there"), archived, "{message}");
            assert_eq!(message.contains("did not go with it"), changed, "{message}");
            let out = decision.stdout();
            let json: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
            assert_eq!(json.as_object().map(|o| o.len()), Some(1), "{out}");
            assert!(json["systemMessage"].is_string(), "{out}");
            assert!(json.get("decision").is_none(), "never a block: {out}");
        }
    }

    #[test]
    fn every_next_action_with_and_without_unreviewed_work() {
        use Want::*;
        const CODER_DONE: &str = "`git pair coder-done --summary` and one quoted line saying what you changed, then run `git pair review`";
        let table: &[(&str, bool, Want)] = &[
            ("code", true, Block(CODER_DONE)),
            ("code", false, Allow(Allowed::NothingToReview)),
            ("review:pr", false, Block("`git pair review --pr N`")),
            ("review:pr", true, Block("`git pair review --pr N`")),
            ("review", true, Block("Run `git pair review`.")),
            ("review", false, Block("Run `git pair review`.")),
            (
                "resume:review",
                true,
                Block("Run `git pair review` to dispatch it again"),
            ),
            (
                "resume:review",
                false,
                Block("Run `git pair review` to dispatch it again"),
            ),
            ("finish", true, Block(CODER_DONE)),
            ("finish", false, Allow(Allowed::Approved)),
            ("done", true, Allow(Allowed::RunDone)),
            ("done", false, Allow(Allowed::RunDone)),
            ("stop:round-cap", true, Allow(Allowed::HumanDecides)),
            ("stop:round-cap", false, Allow(Allowed::HumanDecides)),
            ("stop:budget", true, Allow(Allowed::HumanDecides)),
            ("stop:budget", false, Allow(Allowed::HumanDecides)),
            ("stop:stalled", true, Allow(Allowed::HumanDecides)),
            ("stop:stalled", false, Allow(Allowed::HumanDecides)),
            ("stop:partial", true, Allow(Allowed::HumanDecides)),
            ("stop:partial", false, Allow(Allowed::HumanDecides)),
            ("wait:review", true, Allow(Allowed::ReviewRunning)),
            ("wait:review", false, Allow(Allowed::ReviewRunning)),
            ("something-new", true, Allow(Allowed::UnknownAction)),
            ("", false, Allow(Allowed::UnknownAction)),
        ];
        for (next_action, unreviewed, want) in table {
            for stdin in [claude_stdin(false), codex_stdin(false)] {
                let decision = decide_with(stdin.as_bytes(), |_| {
                    Ok::<_, ()>(run(next_action, *unreviewed))
                });
                match (want, &decision) {
                    (Allow(why), Decision::Allow(got)) => {
                        assert_eq!(got, why, "{next_action} {unreviewed}");
                        assert_eq!(decision.stdout(), "");
                    }
                    (Block(command), Decision::Block { reason }) => {
                        assert!(reason.contains(command), "{next_action}: {reason}");
                        assert!(reason.contains(RUN), "{reason}");
                        // Codex XML-escapes a reason (`<` → `&lt;`) and a literal model
                        // copies a placeholder: no `<…>` in anything an agent reads.
                        assert!(
                            !reason.contains('<') && !reason.contains('>'),
                            "{next_action}: {reason}"
                        );
                    }
                    _ => panic!("{next_action} unreviewed={unreviewed}: got {decision:?}"),
                }
            }
            // The stop after a block always goes through, whatever the run says, and the
            // run's state is not even computed.
            for stdin in [claude_stdin(true), codex_stdin(true)] {
                let decision = decide_with(stdin.as_bytes(), |_| -> Result<RunView, ()> {
                    panic!("state computed after a block")
                });
                assert_eq!(decision, Decision::Allow(Allowed::StopHookActive));
            }
            let active = HookInput {
                stop_hook_active: true,
                ..HookInput::default()
            };
            assert_eq!(
                decide(&active, &run(next_action, *unreviewed)),
                Decision::Allow(Allowed::StopHookActive)
            );
        }
    }

    #[test]
    fn a_block_prints_exactly_one_json_object() {
        let decision = decide_with(claude_stdin(false).as_bytes(), |_| {
            Ok::<_, ()>(run("code", true))
        });
        let stdout = decision.stdout();
        assert!(stdout.starts_with(r#"{"decision":"block","reason":"git pair run "#));
        assert!(stdout.ends_with("}\n"));
        assert_eq!(stdout.lines().count(), 1);
        let parsed: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        assert_eq!(parsed["decision"], "block");
        assert_eq!(
            parsed["reason"],
            format!(
                "git pair run {RUN}: the work tree has changes no reviewer has seen. Record it with `git pair coder-done --summary` and one quoted line saying what you changed, then run `git pair review`. If you cannot do that now, tell the user why and stop."
            )
        );
        assert_eq!(parsed.as_object().expect("object").len(), 2);
    }

    #[test]
    fn untrustworthy_input_lets_the_agent_stop_without_looking_at_the_run() {
        let cases: &[&[u8]] = &[
            b"",
            b"   \n",
            b"not json",
            b"[]",
            b"null",
            b"\"Stop\"",
            b"{\"stop_hook_active\": \"false\"}",
            b"{\"stop_hook_active\": 0}",
            b"{\"hook_event_name\": \"Stop\"",
            b"\xff\xfe{}",
        ];
        for stdin in cases {
            let decision = decide_with(stdin, |_| -> Result<RunView, ()> {
                panic!("state computed for malformed input")
            });
            assert_eq!(
                decision,
                Decision::Allow(Allowed::MalformedInput),
                "{}",
                String::from_utf8_lossy(stdin)
            );
            assert_eq!(decision.stdout(), "");
        }
    }

    #[test]
    fn only_the_fields_it_needs_are_read() {
        assert_eq!(
            parse_input(codex_stdin(false).as_bytes()),
            Ok(HookInput {
                stop_hook_active: false,
                cwd: Some("/repo".into()),
                hook_event_name: Some("Stop".into()),
            })
        );
        // Minimal and odd-but-harmless inputs still parse: missing fields default, unknown
        // fields and a non-string cwd are ignored.
        assert_eq!(parse_input(b"{}"), Ok(HookInput::default()));
        assert_eq!(
            parse_input(br#"{"stop_hook_active":null,"cwd":7,"extra":{"nested":[1,2]}}"#),
            Ok(HookInput::default())
        );
    }

    #[test]
    fn other_events_no_run_and_state_errors_allow() {
        let subagent = r#"{"hook_event_name":"SubagentStop","stop_hook_active":false,"agent_id":"a1","agent_type":"Explore"}"#;
        assert_eq!(
            decide_with(subagent.as_bytes(), |_| Ok::<_, ()>(run("code", true))),
            Decision::Allow(Allowed::OtherEvent)
        );
        assert_eq!(
            decide_with(claude_stdin(false).as_bytes(), |_| Ok::<_, ()>(
                RunView::NoRun
            )),
            Decision::Allow(Allowed::NoRun)
        );
        assert_eq!(
            decide_with(claude_stdin(false).as_bytes(), |_| Err::<RunView, _>(
                "not a git repository"
            )),
            Decision::Allow(Allowed::StateUnavailable)
        );
        // No hook_event_name at all is read as Stop.
        assert!(matches!(
            decide_with(b"{\"stop_hook_active\":false}", |_| Ok::<_, ()>(run(
                "review", false
            ))),
            Decision::Block { .. }
        ));
    }

    #[test]
    fn the_state_callback_gets_the_sessions_cwd() {
        let mut seen = None;
        decide_with(codex_stdin(false).as_bytes(), |input| {
            seen = input.cwd.clone();
            Ok::<_, ()>(RunView::NoRun)
        });
        assert_eq!(seen.as_deref(), Some("/repo"));
    }

    #[test]
    fn every_next_action_the_model_computes_has_a_decided_answer() {
        for action in crate::model::NextAction::ALL {
            for unreviewed in [false, true] {
                let decision = decide(&HookInput::default(), &run(action.as_str(), unreviewed));
                assert_ne!(
                    decision,
                    Decision::Allow(Allowed::UnknownAction),
                    "{}",
                    action.as_str()
                );
            }
        }
    }
}
