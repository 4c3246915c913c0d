//! `show`'s report: a run's manifest, one round's records, or one round's stored material.

use serde::Serialize;
use serde_json::Value;

use crate::model::{Manifest, Record, RunId};

/// What `git pair show` prints (`--json`: the manifest, the round, or the material).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Show {
    Run(RunView),
    Round(RoundView),
    Material(MaterialView),
}

/// A whole run: its manifest as JSON, its transcript for people.
#[derive(Debug, Clone)]
pub struct RunView {
    /// Boxed: a manifest dwarfs the other views.
    pub manifest: Box<Manifest>,
    pub transcript: String,
}

impl Serialize for RunView {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // The manifest alone is the contract: the transcript is the human view.
        self.manifest.serialize(s)
    }
}

/// One round's records.
#[derive(Debug, Clone, Serialize)]
pub struct RoundView {
    pub run_id: RunId,
    pub round: u32,
    /// Each record as stored (its JSON).
    pub records: Vec<Value>,
    /// Each record with the projection as of that record, for the transcript sections.
    #[serde(skip)]
    pub sections: Vec<(Record, Manifest)>,
}

/// One round's stored material; exactly one of `diff`, `prompt`, `output` is set.
#[derive(Debug, Clone, Serialize)]
pub struct MaterialView {
    pub run_id: RunId,
    pub round: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

impl MaterialView {
    /// The material's text, whichever it is.
    pub fn text(&self) -> &str {
        self.diff
            .as_deref()
            .or(self.prompt.as_deref())
            .or(self.output.as_deref())
            .unwrap_or_default()
    }
}
