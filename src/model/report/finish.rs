//! `finish`'s report: the closed run, its PR body and where its review note went.

use serde::Serialize;

use crate::model::RunId;

/// The finished run (`git pair finish --json`).
#[derive(Debug, Clone, Serialize)]
pub struct Finished {
    pub run_id: RunId,
    pub pr_body_path: String,
    pub verdict: Option<&'static str>,
    pub pr: Option<u64>,
    #[serde(rename = "override")]
    pub override_: bool,
    /// The commit that carries the run's review note (hex), once attached.
    pub note_commit: Option<String>,
    /// This call recorded the finish (false: the run was finished before).
    #[serde(skip)]
    pub finished_now: bool,
    /// `--open-pr` on a run that already had this PR: nothing opened.
    #[serde(skip)]
    pub pr_already: Option<u64>,
    /// Where the review note stands.
    #[serde(skip)]
    pub note: Note,
    /// `--push`: what publishing the records did (absent without `--push`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push: Option<crate::model::report::sync::Push>,
    /// `due` when the PR was recorded for its final round (`pair.prFinalRound`) and the run
    /// stays open for it (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pr_round: Option<&'static str>,
}

/// Where the run's review note stands after `finish`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// Attached to `note_commit` now.
    Attached,
    /// `note_commit` already carried it.
    AlreadyAttached,
    /// HEAD does not hold the reviewed work yet (or nothing was reviewed).
    NotYet,
}
