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
    /// The run's spend as `status` measures it: `None` when nothing was measured (then
    /// `spent_usd` is `null`, as in `status`, never a `0.0` that reads as free).
    pub spent_usd: Option<f64>,
}

impl Serialize for RunView {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        // The manifest alone is the contract (the transcript is the human view), with the
        // spend as measured.
        let mut value = serde_json::to_value(&*self.manifest).map_err(S::Error::custom)?;
        if let Some(object) = value.as_object_mut() {
            object.insert(
                "spent_usd".to_owned(),
                self.spent_usd
                    .map_or(Value::Null, |usd| crate::util::round_usd(usd).into()),
            );
        }
        value.serialize(s)
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
