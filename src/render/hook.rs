//! What the hooks say: a passing git hook prints nothing on stdout (its messages go to
//! stderr as notes), and the agent Stop hook prints its decision or nothing.

use std::io::Write;

use crate::model::report::hook::{
    AgentStop, CommitMsg, NoteStatus, PostCommit, SessionHook, Trailers, Warning,
};

/// A git hook's stdout: nothing (a hook that passes says nothing).
pub fn nothing<T>(_report: &T, _out: &mut dyn Write) -> std::io::Result<()> {
    Ok(())
}

/// The Stop hook's stdout: one line `{"decision":"block","reason":"…"}` to block, nothing to
/// let the agent stop, one line `{"systemMessage":"…"}` to let it stop saying why.
pub fn agent_stop(report: &AgentStop, out: &mut dyn Write) -> std::io::Result<()> {
    match report {
        AgentStop::Allow {} => Ok(()),
        AgentStop::Block { .. } | AgentStop::Inform { .. } => {
            let line = serde_json::to_string(report).expect("a decision always serializes");
            writeln!(out, "{line}")
        }
    }
}

/// A lifecycle hook's stdout: one JSON object to add context, or nothing.
pub fn session_hook(report: &SessionHook, out: &mut dyn Write) -> std::io::Result<()> {
    match report {
        SessionHook::Quiet {} => Ok(()),
        SessionHook::Context { .. } => {
            let line = serde_json::to_string(report).expect("a hook answer always serializes");
            writeln!(out, "{line}")
        }
    }
}

/// The stderr line of a `commit-msg` that added the trailers.
pub fn commit_msg_note(report: &CommitMsg) -> Option<String> {
    match (&report.trailers, &report.approved) {
        (Some(Trailers::Added), Some(approved)) => Some(format!(
            "git pair: added Pair-Run and Reviewed-by trailers (run {}, round {})",
            approved.run_id, approved.round
        )),
        _ => None,
    }
}

/// The stderr line of a `post-commit` that wrote the run's note.
pub fn post_commit_note(report: &PostCommit) -> Option<String> {
    match (&report.note, &report.on) {
        (Some(NoteStatus::Attached), Some(on)) => {
            let commit = on.commit.as_deref().unwrap_or_default();
            Some(format!(
                "git pair: review note of run {} written on {} (refs/notes/pair)",
                on.run_id,
                commit.get(..12).unwrap_or(commit)
            ))
        }
        (Some(NoteStatus::NotApprovedWork), Some(on)) => Some(format!(
            "git pair: this commit is not the work run {} approved, so it carries no review note and `git pair verify` (the team gate) will call it unreviewed; `git pair gate` names the paths that differ",
            on.run_id
        )),
        _ => None,
    }
}

/// The stderr line of a hook that failed without failing the git command.
pub fn warning_note(hook: &str, report: &Warning) -> String {
    format!(
        "warning: git pair {hook} hook: {} (the commit is not affected)",
        report.warning
    )
}
