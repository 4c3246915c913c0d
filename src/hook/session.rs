//! The agent lifecycle hooks' decisions (SPEC §10): noticing a context compaction and
//! reminding the agent of the context handoff health check, for Claude Code and Codex alike.
//!
//! - `session-start` with source `compact` counts one compaction for the session and injects
//!   `CONTEXT HANDOFF HEALTH CHECK` with the count; `startup`, `resume`, `clear` and `fork`
//!   start the count again (a fresh context has seen no compaction).
//! - `user-prompt` repeats the reminder, with the same count, on every user turn after a
//!   compaction, never counting.
//! - `session-end` removes the session's state.
//!
//! Pure: the hook's stdin bytes, the session's stored state and whether a handoff is
//! authorized go in; an [`Outcome`] (what to store, what to inject) comes out. The state holds
//! only a count: no prompt, response, transcript, path or session id. It is filed under
//! [`session_key`], a hash of the session id. Fail-open: input that cannot be trusted gives
//! [`Outcome::nothing`] (the caller prints nothing and exits 0).

use serde::{Deserialize, Serialize};

use crate::model::checkpoint::rules::COMPACTIONS_FOR_HANDOFF;

/// The lifecycle event a hook command was called for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    SessionStart,
    UserPrompt,
    SessionEnd,
}

impl Event {
    /// The `hook_event_name` both CLIs send for this event.
    pub fn vendor_name(self) -> &'static str {
        match self {
            Event::SessionStart => "SessionStart",
            Event::UserPrompt => "UserPromptSubmit",
            Event::SessionEnd => "SessionEnd",
        }
    }
}

/// Why a session started (`source` of SessionStart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The context was just compacted (manually with `/compact`, or automatically).
    Compact,
    /// `startup`, `resume`, `clear`, `fork`, or a source this module does not know: a context
    /// that starts with no compaction observed.
    Fresh,
}

/// What the hook reads from the agent's stdin; every other field is ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub session_id: String,
    /// The session's working directory, when the agent said.
    pub cwd: Option<String>,
    /// SessionStart's `source` (`Fresh` for the other events).
    pub source: Source,
}

/// Reads the hook input for `event`; `None` when it cannot be trusted (not a JSON object, no
/// session id, another event than the command is for), which does nothing.
pub fn parse_input(event: Event, stdin: &[u8]) -> Option<Input> {
    let value: serde_json::Value = serde_json::from_slice(stdin).ok()?;
    let object = value.as_object()?;
    let text = |key: &str| object.get(key).and_then(|v| v.as_str());
    let session_id = text("session_id").filter(|id| !id.is_empty())?.to_owned();
    match text("hook_event_name") {
        Some(name) if name != event.vendor_name() => return None,
        _ => {}
    }
    let source = match text("source") {
        Some("compact") => Source::Compact,
        _ => Source::Fresh,
    };
    Some(Input {
        session_id,
        cwd: text("cwd").map(str::to_owned),
        source,
    })
}

/// The name the session's state is filed under: the first 128 bits of SHA-1 over a
/// domain-separated session id, in hex. The id itself is never stored.
pub fn session_key(session_id: &str) -> String {
    let mut hasher = sha1_smol::Sha1::new();
    hasher.update(b"git-pair session\0");
    hasher.update(session_id.as_bytes());
    hasher.digest().to_string()[..32].to_owned()
}

/// A session's stored state: only how many compactions were observed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    pub compactions: u32,
}

impl State {
    /// Parses stored bytes; damaged state reads as none (the count starts again).
    pub fn parse(bytes: &[u8]) -> Option<State> {
        serde_json::from_slice(bytes).ok()
    }

    pub fn to_bytes(self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(&self).expect("a count always serializes");
        bytes.push(b'\n');
        bytes
    }
}

/// What happens to the session's stored state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// Leave it as it is.
    Keep,
    /// Write this state.
    Write(State),
    /// Remove it (nothing stored is the same as no compaction).
    Remove,
}

/// What one hook call does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub store: Store,
    /// This call counted a compaction (the caller records it on the active run, if any).
    pub counted: bool,
    /// The compactions observed in this session, when the reminder is due.
    pub remind: Option<u32>,
}

impl Outcome {
    /// Change nothing, say nothing.
    pub fn nothing() -> Outcome {
        Outcome {
            store: Store::Keep,
            counted: false,
            remind: None,
        }
    }
}

/// The decision for `event` with `input`, given the session's stored state.
pub fn decide(event: Event, input: &Input, stored: Option<State>) -> Outcome {
    let count = stored.map_or(0, |s| s.compactions);
    match (event, input.source) {
        (Event::SessionStart, Source::Compact) => {
            let compactions = count.saturating_add(1);
            Outcome {
                store: Store::Write(State { compactions }),
                counted: true,
                remind: Some(compactions),
            }
        }
        (Event::SessionStart, Source::Fresh) => Outcome {
            store: if stored.is_some() {
                Store::Remove
            } else {
                Store::Keep
            },
            counted: false,
            remind: None,
        },
        (Event::UserPrompt, _) => Outcome {
            store: Store::Keep,
            counted: false,
            remind: (count > 0).then_some(count),
        },
        (Event::SessionEnd, _) => Outcome {
            store: if stored.is_some() {
                Store::Remove
            } else {
                Store::Keep
            },
            counted: false,
            remind: None,
        },
    }
}

/// What the reminder says about handing the task over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    /// The human authorized handoffs (`pair.handoffAuthorized`).
    pub authorized: bool,
    /// The active run the compaction was recorded on, if any.
    pub run_id: Option<String>,
    /// Git is in the middle of something (a rebase, a merge…): each, described.
    pub in_progress: Vec<String>,
}

/// The text injected into the agent's context: `CONTEXT HANDOFF HEALTH CHECK`, the count, and
/// what to do, in commands the agent can run as written (no `<…>` placeholders: Codex
/// XML-escapes them and a literal model copies them).
pub fn reminder(compactions: u32, handoff: &Handoff) -> String {
    let plural = if compactions == 1 { "" } else { "s" };
    let mut text = format!(
        "CONTEXT HANDOFF HEALTH CHECK\nContext compactions observed in this session: {compactions}.\n\
         Your context was compacted{}: details from before it may be gone. Before you go on, \
         re-read the task's state (`git pair status`, `git pair handoff`) rather than trusting \
         the summary.\n",
        if compactions > 1 {
            format!(" {compactions} time{plural}")
        } else {
            String::new()
        }
    );
    let create = "`git pair checkpoint create --authorized --next \"what comes next\" --goal \"the task\"` (add --criterion, --verified, --unverified and --check as they apply)";
    let assessment = if !handoff.in_progress.is_empty() {
        format!(
            "Assessment: handoff-deferred ({}): finish or abort that first; do not hand over now.",
            handoff.in_progress.join("; ")
        )
    } else if compactions < COMPACTIONS_FOR_HANDOFF {
        format!(
            "Assessment: continue ({COMPACTIONS_FOR_HANDOFF} compactions make a handoff due). Keep working."
        )
    } else if handoff.authorized {
        format!(
            "Assessment: handoff-ready (authorized, {compactions} compactions observed). Finish the step you are on, then record a checkpoint with {create}, then run `git pair checkpoint show` with the id it prints and --prompt, and give the user that prompt."
        )
    } else {
        format!(
            "Assessment: a handoff is due ({compactions} compactions observed) but not authorized. Ask the user whether to hand the task to a fresh context; only if they agree, record a checkpoint with {create}."
        )
    };
    text.push_str(&assessment);
    if let Some(run_id) = &handoff.run_id {
        text.push_str(&format!(
            "\nThe compaction is recorded on git pair run {run_id}."
        ));
    }
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude(event: &str, extra: &str) -> String {
        format!(
            r#"{{"session_id":"0b6f-claude","transcript_path":"/home/u/.claude/projects/-repo/0b6f.jsonl","cwd":"/repo","hook_event_name":"{event}"{extra}}}"#
        )
    }

    fn codex_start(source: &str) -> String {
        format!(
            r#"{{"session_id":"019a-codex","transcript_path":null,"cwd":"/repo","hook_event_name":"SessionStart","model":"gpt-6.2-sol","permission_mode":"default","source":"{source}"}}"#
        )
    }

    fn input(event: Event, stdin: &str) -> Input {
        parse_input(event, stdin.as_bytes()).expect("a valid hook input")
    }

    fn state(compactions: u32) -> Option<State> {
        Some(State { compactions })
    }

    #[test]
    fn a_compaction_counts_and_reminds_with_the_new_count() {
        for stdin in [
            claude("SessionStart", r#","source":"compact""#),
            codex_start("compact"),
        ] {
            let input = input(Event::SessionStart, &stdin);
            assert_eq!(input.source, Source::Compact);
            let first = decide(Event::SessionStart, &input, None);
            assert_eq!(first.store, Store::Write(State { compactions: 1 }));
            assert!(first.counted);
            assert_eq!(first.remind, Some(1));
            let second = decide(Event::SessionStart, &input, state(1));
            assert_eq!(second.store, Store::Write(State { compactions: 2 }));
            assert_eq!(second.remind, Some(2));
        }
    }

    #[test]
    fn user_turns_repeat_the_reminder_without_counting() {
        let prompt = input(
            Event::UserPrompt,
            &claude("UserPromptSubmit", r#","prompt":"go on""#),
        );
        assert_eq!(decide(Event::UserPrompt, &prompt, None), Outcome::nothing());
        assert_eq!(
            decide(Event::UserPrompt, &prompt, state(0)),
            Outcome::nothing()
        );
        for n in [1, 2, 7] {
            let outcome = decide(Event::UserPrompt, &prompt, state(n));
            assert_eq!(outcome.store, Store::Keep);
            assert!(!outcome.counted);
            assert_eq!(outcome.remind, Some(n));
        }
    }

    #[test]
    fn fresh_starts_and_the_end_reset_the_count() {
        for source in ["startup", "resume", "clear", "fork", "something-new"] {
            let start = input(Event::SessionStart, &codex_start(source));
            assert_eq!(start.source, Source::Fresh, "{source}");
            let outcome = decide(Event::SessionStart, &start, state(3));
            assert_eq!(outcome.store, Store::Remove, "{source}");
            assert_eq!(outcome.remind, None);
            assert_eq!(decide(Event::SessionStart, &start, None).store, Store::Keep);
        }
        let end = input(
            Event::SessionEnd,
            &claude("SessionEnd", r#","reason":"prompt_input_exit""#),
        );
        assert_eq!(
            decide(Event::SessionEnd, &end, state(2)).store,
            Store::Remove
        );
        assert_eq!(decide(Event::SessionEnd, &end, None), Outcome::nothing());
    }

    #[test]
    fn untrustworthy_input_is_refused() {
        for stdin in [
            "",
            "not json",
            "[]",
            r#"{"hook_event_name":"SessionStart","source":"compact"}"#,
            r#"{"session_id":"","hook_event_name":"SessionStart","source":"compact"}"#,
            r#"{"session_id":7,"hook_event_name":"SessionStart","source":"compact"}"#,
            // Another event than the command is for.
            r#"{"session_id":"s","hook_event_name":"Stop","source":"compact"}"#,
        ] {
            assert_eq!(
                parse_input(Event::SessionStart, stdin.as_bytes()),
                None,
                "{stdin}"
            );
        }
        // No event name at all is accepted (the command names the event).
        assert!(parse_input(Event::UserPrompt, br#"{"session_id":"s"}"#).is_some());
    }

    #[test]
    fn the_key_is_a_hash_of_the_id_never_the_id() {
        let key = session_key("0b6f-claude");
        assert_eq!(key.len(), 32);
        assert!(key.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(!key.contains("0b6f"));
        assert_eq!(key, session_key("0b6f-claude"));
        assert_ne!(key, session_key("0b6f-claudf"));
        // The stored state is a count and nothing else.
        let bytes = State { compactions: 2 }.to_bytes();
        assert_eq!(bytes, b"{\"compactions\":2}\n");
        assert_eq!(State::parse(&bytes), state(2));
        assert_eq!(State::parse(b"{\"compactions\":2,\"prompt\":\"x\"}"), None);
        assert_eq!(State::parse(b"garbage"), None);
    }

    #[test]
    fn the_reminder_says_the_count_and_what_to_do() {
        let not_authorized = Handoff {
            authorized: false,
            run_id: None,
            in_progress: Vec::new(),
        };
        let one = reminder(1, &not_authorized);
        assert!(one.starts_with("CONTEXT HANDOFF HEALTH CHECK\n"), "{one}");
        assert!(one.contains("observed in this session: 1."), "{one}");
        assert!(one.contains("Assessment: continue"), "{one}");
        let two = reminder(2, &not_authorized);
        assert!(two.contains("observed in this session: 2."), "{two}");
        assert!(two.contains("but not authorized"), "{two}");
        assert!(!two.contains("handoff-ready"), "{two}");
        let authorized = Handoff {
            authorized: true,
            run_id: Some("20261129-231500-a1b2c3".into()),
            in_progress: Vec::new(),
        };
        let ready = reminder(2, &authorized);
        assert!(ready.contains("Assessment: handoff-ready"), "{ready}");
        assert!(
            ready.contains("git pair checkpoint create --authorized"),
            "{ready}"
        );
        assert!(ready.contains("run 20261129-231500-a1b2c3"), "{ready}");
        // Authorized but under two compactions: not yet.
        assert!(reminder(1, &authorized).contains("Assessment: continue"));
        let deferred = reminder(
            2,
            &Handoff {
                in_progress: vec!["a rebase is in progress".into()],
                ..authorized
            },
        );
        assert!(
            deferred.contains("handoff-deferred (a rebase is in progress)"),
            "{deferred}"
        );
        for text in [one, two, ready, deferred] {
            assert!(!text.contains('<') && !text.contains('>'), "{text}");
        }
    }
}
