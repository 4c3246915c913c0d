//! The `git pair hook <name>` reports: what a hook found or did, as its `--json` object.
//! Hooks print nothing on stdout without `--json` (a passing hook is silent), except the
//! agent Stop hook, whose stdout is its decision.

use serde::Serialize;

use crate::model::RunId;

/// `pre-commit` let the commit through (a refusal is an error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PreCommit {
    /// Always true: the commit may go on.
    pub ok: bool,
    /// Why the gate is open; null without `--gate`.
    pub gate: Option<GateOpen>,
}

/// Why the commit gate let a commit through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GateOpen {
    /// No unfinished run on this branch: nothing gates commits.
    NoActiveRun,
    /// The staged tree is the approved snapshot.
    Approved,
}

/// What `commit-msg` did to the message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitMsg {
    /// Null: the index is not approved work, the message is untouched.
    pub trailers: Option<Trailers>,
    /// The approved run and round the trailers name (absent when `trailers` is null).
    #[serde(flatten)]
    pub approved: Option<ApprovedRound>,
}

/// The trailers' state after `commit-msg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trailers {
    /// Added now.
    Added,
    /// The message already carried them (an amend, a second run of the hook).
    AlreadyThere,
}

/// The run and round whose approval a commit carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApprovedRound {
    pub run_id: RunId,
    pub round: u32,
}

/// What `post-commit` did about the run's note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PostCommit {
    /// Null: no run on this branch.
    pub note: Option<NoteStatus>,
    /// The run and the commit (absent when `note` is null).
    #[serde(flatten)]
    pub on: Option<NoteOn>,
}

/// The run's note on the new commit, as it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoteStatus {
    /// Written now.
    Attached,
    /// The commit's note already held exactly this line.
    AlreadyAttached,
    /// HEAD does not hold the vouched-for snapshot.
    NotApprovedWork,
    /// The run vouches for no snapshot.
    NothingReviewed,
}

/// Which run's note, on which commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NoteOn {
    pub run_id: RunId,
    /// The commit the note is on (null when none was written).
    pub commit: Option<String>,
}

/// A hook that must not fail the git command failed: its error, as a warning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    pub warning: String,
}

/// The agent Stop hook's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum AgentStop {
    /// Let the agent stop: print nothing at all.
    Allow {},
    /// Keep the agent going; `reason` reaches the model as its next message.
    Block { decision: Block, reason: String },
    /// Let the agent stop, saying why (shown by the agent CLI).
    Inform {
        #[serde(rename = "systemMessage")]
        system_message: String,
    },
}

/// The one word of a blocking decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Block {
    Block,
}

/// A lifecycle hook's answer (`session-start`, `user-prompt`, `session-end`), in the shape
/// both Claude Code and Codex read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum SessionHook {
    /// Nothing to add: print nothing at all.
    Quiet {},
    /// Text added to the agent's context.
    Context {
        #[serde(rename = "hookSpecificOutput")]
        hook_specific_output: HookSpecificOutput,
    },
}

/// `hookSpecificOutput` of a SessionStart or UserPromptSubmit hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecificOutput {
    /// `SessionStart` or `UserPromptSubmit`.
    pub hook_event_name: String,
    /// The text the agent's next turn starts with.
    pub additional_context: String,
}
