//! `status`'s report: a run's state and the one thing to do next.

use serde::Serialize;
use serde::ser::SerializeMap as _;
use serde_json::Value;

use crate::model::NextAction;

/// A run's state and the one thing to do next (`git pair status --json`).
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub run_id: String,
    /// The current coder round (0 before the first).
    pub round: u32,
    pub max_rounds: u32,
    pub last_verdict: Option<&'static str>,
    pub next_action: &'static str,
    /// Rounded to 1/100 of a cent; null when never measured or when none of it has a price.
    /// With `unpriced_models`, only the priced part (a lower bound).
    pub spent_usd: Value,
    /// Models whose measured tokens have no price (their spend is not in `spent_usd`).
    pub unpriced_models: Vec<String>,
    pub budget_usd: Option<f64>,
    pub branch: String,
    pub task: String,
    pub conflicts: Vec<String>,
    pub checkpoint: Option<CheckpointBrief>,
    pub compactions: u32,
    /// The reviewer by its one name (`command:approve.sh`, `codex`): the one whose review was
    /// recorded last, else the one that would bind now.
    pub reviewer: String,
    /// A review of the run used a fallback: the configured reviewer was not available.
    pub reviewer_fallback: bool,
    pub settings: Settings,
    /// The spend as measured (unrounded), for the human view.
    #[serde(skip)]
    pub spent: Option<f64>,
    #[serde(skip)]
    pub next: NextAction,
}

/// The run's latest checkpoint, in brief.
#[derive(Debug, Clone, Serialize)]
pub struct CheckpointBrief {
    pub id: String,
    pub assessment: &'static str,
    pub state: &'static str,
    /// Made in this work tree and verified in another since: where the work went (null
    /// otherwise).
    pub handed_over: Option<HandedOverBrief>,
}

/// Where a checkpoint made here was verified (SPEC §10): this context is the retired source.
#[derive(Debug, Clone, Serialize)]
pub struct HandedOverBrief {
    pub host: String,
    pub path: String,
    /// The source was archived there (`SOURCE_ARCHIVED_CONFIRMED`).
    pub archived: bool,
}

/// Each run setting in force, in table order; serialized as an object keyed by setting.
#[derive(Debug, Clone, Default)]
pub struct Settings(pub Vec<Setting>);

/// One setting's value now and where it came from.
#[derive(Debug, Clone, Serialize)]
pub struct Setting {
    #[serde(skip)]
    pub key: &'static str,
    pub value: Value,
    pub from: String,
}

impl Serialize for Settings {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for setting in &self.0 {
            map.serialize_entry(setting.key, setting)?;
        }
        map.end()
    }
}
