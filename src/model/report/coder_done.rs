//! `coder-done`'s report: the recorded round.

use serde::Serialize;

use crate::model::RunId;

/// The coder round `coder-done` recorded (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct CoderDone {
    pub round: u32,
    pub run_id: RunId,
    /// Things worth saying that did not stop the record (a cost that could not be measured).
    #[serde(skip)]
    pub warnings: Vec<String>,
}
