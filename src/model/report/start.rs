//! `start`'s report: the run that was created.

use serde::Serialize;

use crate::model::RunId;

/// The run `start` created (`git pair start --json`).
#[derive(Debug, Clone, Serialize)]
pub struct Started {
    pub run_id: RunId,
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// Where the HANDOFF view was written; `None` when there is no work tree.
    pub handoff_path: Option<String>,
    pub max_rounds: u32,
    pub coder: String,
    pub reviewer: String,
    /// The base commit id (hex).
    pub base: String,
    pub branch: String,
    /// The unfinished run `--replace` abandoned.
    pub replaced: Option<RunId>,
    /// The task as recorded (secrets redacted).
    #[serde(skip)]
    pub task: String,
}
