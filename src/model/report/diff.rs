//! `diff`'s report: what changed between two reviewed snapshots.

use serde::Serialize;

use crate::model::RunId;

/// The `git diff` text between two rounds' snapshots (`git pair diff --json`).
#[derive(Debug, Clone, Serialize)]
pub struct RoundDiff {
    pub run_id: RunId,
    pub round: u32,
    /// The earlier round compared with; `None`: the run's base.
    pub since_round: Option<u32>,
    /// How many files differ.
    pub files: usize,
    pub diff: String,
}
