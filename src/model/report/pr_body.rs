//! `pr-body`'s report: the rendered PR body, or the description file it updated.

use serde::Serialize;

use crate::model::RunId;

/// The PR body (`git pair pr-body --json`); with `--update`, the file rewritten.
#[derive(Debug, Clone, Serialize)]
pub struct PrBody {
    pub run_id: RunId,
    /// The description file `--update` rewrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The body, or the whole updated description.
    pub body: String,
}
