//! `abandon`'s report: the run closed without a verdict.

use serde::Serialize;

use crate::model::RunId;

/// A run closed by `git pair abandon` (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct Abandoned {
    pub run_id: RunId,
    /// Always `abandoned`.
    pub outcome: &'static str,
    /// Always `done`.
    pub next_action: &'static str,
}

impl Abandoned {
    /// The report of `run_id`'s close.
    pub fn new(run_id: RunId) -> Self {
        Abandoned {
            run_id,
            outcome: "abandoned",
            next_action: "done",
        }
    }
}
