//! The `log` report: a run's story, round by round — who coded what, what each review said,
//! which findings it opened and how many the next round addressed, and what it cost.

use serde::Serialize;

/// One run's story.
#[derive(Debug, Clone, Serialize)]
pub struct RunLog {
    pub run_id: String,
    pub task: String,
    pub branch: String,
    /// The verdict the run closed with, `abandoned`, or null while it is open.
    pub outcome: Option<String>,
    pub pr: Option<u64>,
    /// Dollars measured now (the priced part when `unpriced_models` is not empty), or null.
    pub spent_usd: serde_json::Value,
    pub unpriced_models: Vec<String>,
    pub rounds: Vec<RoundLog>,
    pub next_action: &'static str,
}

/// One round: its coder records, then its reviews.
#[derive(Debug, Clone, Serialize)]
pub struct RoundLog {
    pub n: u32,
    pub coder: Vec<CoderStep>,
    pub reviews: Vec<ReviewStep>,
}

/// A coder record.
#[derive(Debug, Clone, Serialize)]
pub struct CoderStep {
    pub tool: String,
    /// The summary's first line.
    pub summary: String,
    pub findings_addressed: Option<u32>,
}

/// A review's result.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewStep {
    pub tool: String,
    pub verdict: Option<String>,
    pub outcome: String,
    /// Findings opened by this review.
    pub findings: usize,
    /// Those findings by severity (`critical`, `high`, `medium`, `low`, `none`), non-zero only.
    pub by_severity: std::collections::BTreeMap<&'static str, usize>,
    pub partial: bool,
    /// Set for the final review of this PR (`review --pr N`), not a review of the round's
    /// work tree; its material is under `pr/<n>/` in the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pr: Option<u64>,
}
