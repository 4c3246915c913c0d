//! The `checkpoint` reports: create, show, verify, restore, archive and compaction, each as
//! its `--json` object.

use serde::Serialize;

use crate::model::{
    Assessment, CheckRun, Checkpoint, CheckpointId, CheckpointState, Mismatch, RunId, VerifyResult,
};

/// A recorded check as the reports show it: the command and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckSummary {
    pub command: String,
    pub exit_code: Option<i32>,
    pub end: String,
    /// `exit N`, or how it ended otherwise (`timed-out`, …).
    pub outcome: String,
}

impl From<&CheckRun> for CheckSummary {
    fn from(check: &CheckRun) -> Self {
        CheckSummary {
            command: check.command.clone(),
            exit_code: check.exit_code,
            end: check.end.clone(),
            outcome: check.outcome(),
        }
    }
}

/// A stored checkpoint (`checkpoint create`).
#[derive(Debug, Clone, Serialize)]
pub struct Created {
    pub id: CheckpointId,
    pub assessment: Assessment,
    /// Size of the stored packet (the record), in bytes.
    pub bytes: usize,
    pub run_id: RunId,
    /// No run was active: the checkpoint is stored in a run of its own that only carries it
    /// (never the branch's active run).
    pub carrier: bool,
    pub reasons: Vec<String>,
    /// The work tree's status fingerprint.
    pub status: String,
    pub check: Option<CheckSummary>,
}

/// A checkpoint as stored, and where it stands (`checkpoint show`).
#[derive(Debug, Clone, Serialize)]
pub struct Shown {
    pub id: CheckpointId,
    pub run_id: RunId,
    /// When it was recorded (RFC 3339).
    pub at: String,
    pub state: CheckpointState,
    pub assessment: Assessment,
    pub packet: Checkpoint,
    /// With `--prompt`: the destination prompt (the only human output then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// A recorded verification (`checkpoint verify`).
#[derive(Debug, Clone, Serialize)]
pub struct Verified {
    pub result: VerifyResult,
    pub mismatches: Vec<Mismatch>,
    pub id: CheckpointId,
    pub run_id: RunId,
    /// The check as re-run here.
    pub check: Option<CheckSummary>,
    /// Always true: the result is recorded either way.
    pub recorded: bool,
    /// On a regression: the one `error:` line (the command exits 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A restored checkpoint (`checkpoint restore`).
#[derive(Debug, Clone, Serialize)]
pub struct Restored {
    pub id: CheckpointId,
    pub run_id: RunId,
    pub head: String,
    /// The branch checked out, or `HEAD` when detached.
    pub branch: String,
    pub checkout: CheckoutKind,
    /// The work tree's snapshot now equals the checkpoint's.
    pub status_matches: bool,
    /// The checkpoint's run became this clone's own now (false: it was already).
    pub adopted: bool,
    /// The recorded branch, when it exists here pointing elsewhere (HEAD is then detached).
    #[serde(skip)]
    pub branch_elsewhere: Option<String>,
}

/// How HEAD was checked out by a restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckoutKind {
    /// The recorded branch, which points at the commit.
    Branch,
    /// The recorded branch, created at the commit.
    NewBranch,
    /// HEAD detached at the commit.
    Detached,
}

/// An archived checkpoint (`checkpoint archive`).
#[derive(Debug, Clone, Serialize)]
pub struct Archived {
    /// Always `SOURCE_ARCHIVED_CONFIRMED`.
    pub state: CheckpointState,
    pub id: CheckpointId,
    pub run_id: RunId,
    /// It was archived before: nothing new was recorded.
    pub already: bool,
}

/// A counted compaction (`checkpoint compaction`).
#[derive(Debug, Clone, Serialize)]
pub struct Compacted {
    /// Compactions observed in the run's current context, this one included.
    pub count: u32,
    pub assessment: Assessment,
    pub reasons: Vec<String>,
    pub run_id: RunId,
}
