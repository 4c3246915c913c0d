//! `budget-check`'s report: the run's spend against its budget.

use serde::Serialize;
use serde_json::Value;

use crate::model::RunId;

/// The spend graded against the budget (`git pair budget-check --json`).
#[derive(Debug, Clone, Serialize)]
pub struct BudgetCheck {
    /// `warn`, `alert`, or `None` below the warning line.
    pub level: Option<&'static str>,
    /// Rounded to 1/100 of a cent; null when never measured.
    pub spent: Value,
    pub limit: Option<f64>,
    pub run_id: RunId,
    pub unknown_models: Vec<String>,
    /// The spend as measured (unrounded), for the human view.
    #[serde(skip)]
    pub spent_usd: Option<f64>,
}
