//! `adopt`'s report: a run made this clone's own.

use serde::Serialize;

use crate::model::RunId;

/// `git pair adopt <run>` (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct Adopted {
    pub run_id: RunId,
    /// The run's branch.
    pub branch: String,
    /// The run became this clone's own now; false when it was already (nothing was written).
    pub adopted: bool,
    /// It is now the active run (this clone's newest unfinished run on the current branch).
    pub active: bool,
    /// The branch checked out here (`HEAD` when detached).
    pub current_branch: String,
    /// The run's `next_action`.
    pub next_action: &'static str,
    /// Where the transcript view was written, when the run became active.
    pub handoff_path: Option<String>,
}
