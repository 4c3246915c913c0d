//! `budget-check`'s report: the run's spend against its budget.

use serde::Serialize;
use serde_json::Value;

use crate::model::RunId;

/// The spend graded against the budget (`git pair budget-check --json`).
#[derive(Debug, Clone, Serialize)]
pub struct BudgetCheck {
    /// `warn`, `alert`, or `None` below the warning line.
    pub level: Option<&'static str>,
    /// Rounded to 1/100 of a cent; null when never measured or when none of it has a price.
    /// With `unpriced_models`, only the priced part (a lower bound).
    pub spent: Value,
    pub limit: Option<f64>,
    pub run_id: RunId,
    /// Models whose tokens have no price (the level is then at least `warn`).
    pub unknown_models: Vec<String>,
    /// The same list, by the name every report uses.
    pub unpriced_models: Vec<String>,
    /// The spend as measured (unrounded), for the human view.
    #[serde(skip)]
    pub spent_usd: Option<f64>,
}
