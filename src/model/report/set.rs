//! `set`'s report: a run setting as in force after the change.

use serde::Serialize;
use serde_json::Value;

use crate::model::RunId;

/// A setting changed by `git pair set` (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct SettingSet {
    pub run_id: RunId,
    pub key: &'static str,
    pub value: Value,
    pub from: String,
}
