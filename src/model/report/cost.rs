//! `cost`'s report: every run's spend, the selected run round by round and session by
//! session. (`cost --session` reports a [`crate::cost::SessionCost`] as it is.)

use serde::Serialize;
use serde_json::Value;

use crate::cost::spend::SessionLine;
use crate::model::{Role, RunId};

/// Every run's spend, newest first, and their total (`git pair cost --json`).
#[derive(Debug, Clone, Serialize)]
pub struct Costs {
    pub runs: Vec<RunCost>,
    /// Rounded to 1/100 of a cent; null when nothing was measured or priced. With
    /// `unpriced_models`, only the priced part (a lower bound).
    pub total_usd: Value,
    /// Models of any run whose tokens have no price.
    pub unpriced_models: Vec<String>,
    /// The total as measured (unrounded), for the human view.
    #[serde(skip)]
    pub total: Option<f64>,
}

/// One run's spend; the selected run also round by round.
#[derive(Debug, Clone, Serialize)]
pub struct RunCost {
    pub run_id: RunId,
    /// Rounded to 1/100 of a cent; null when never measured or when none of it has a price.
    /// With `unpriced_models`, only the priced part (a lower bound).
    pub spent_usd: Value,
    /// Models whose measured tokens have no price (their spend is not in `spent_usd`).
    pub unpriced_models: Vec<String>,
    pub budget_usd: Option<f64>,
    /// Only for the run the command acts on.
    #[serde(flatten)]
    pub detail: Option<RunDetail>,
    /// The spend as measured (unrounded), for the human view.
    #[serde(skip)]
    pub spent: Option<f64>,
    #[serde(skip)]
    pub task: String,
}

/// The selected run's rounds and sessions.
#[derive(Debug, Clone, Serialize)]
pub struct RunDetail {
    pub rounds: Vec<RoundCost>,
    pub sessions: Vec<SessionLine>,
    pub unknown_models: Vec<String>,
}

/// One round's stored cost.
#[derive(Debug, Clone, Serialize)]
pub struct RoundCost {
    pub n: u32,
    pub role: Role,
    pub tool: String,
    pub cost_usd: Option<f64>,
}
