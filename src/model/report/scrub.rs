//! `scrub`'s report: a file removed from the unpublished part of a run.

use serde::Serialize;

use crate::model::RunId;

/// `git pair scrub <run> <path>` (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct Scrubbed {
    pub run_id: RunId,
    /// The file scrubbed (its work-tree path).
    pub path: String,
    /// The run's tip before and after.
    pub old_tip: String,
    pub new_tip: String,
    /// How many of the run's commits were written again.
    pub commits_rewritten: usize,
    /// The stored copies replaced by a placeholder (paths inside the run's tree).
    pub replaced: Vec<String>,
}
