//! `handoff`'s report: the run's transcript (HANDOFF.md's content).

use serde::Serialize;

use crate::model::RunId;

/// The transcript and where its view lives (`git pair handoff --json`).
#[derive(Debug, Clone, Serialize)]
pub struct Handoff {
    pub run_id: RunId,
    pub handoff_path: Option<String>,
    pub text: String,
}
