//! `list`'s report: every run in the repository, newest first.

use serde::Serialize;

use crate::model::RunId;

/// Every run (`git pair list --json`).
#[derive(Debug, Clone, Serialize)]
pub struct RunList {
    pub runs: Vec<RunLine>,
    /// Runs that cannot be read (a ref that is not a commit, a manifest that does not
    /// parse): listed here, with why, so `git pair drop <run>` can remove them.
    pub malformed_runs: Vec<super::verify::MalformedRun>,
}

/// One run, in brief.
#[derive(Debug, Clone, Serialize)]
pub struct RunLine {
    pub run_id: RunId,
    pub branch: String,
    pub task: String,
    pub round: u32,
    pub next_action: &'static str,
    pub verdict: Option<&'static str>,
    pub created_at: String,
    /// The run belongs to this clone (started, adopted or restored here); false for a run
    /// that arrived from another clone (`git pair adopt` makes it this clone's).
    pub owned: bool,
    #[serde(skip)]
    pub max_rounds: u32,
}
