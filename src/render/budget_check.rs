//! The human view of `budget-check`'s report.

use std::io::{Result, Write};

use super::common::spend;
use crate::model::report::budget_check::BudgetCheck;

/// The spend against the limit, with the level when one is reached.
pub fn human(b: &BudgetCheck, out: &mut dyn Write) -> Result<()> {
    let spent = spend(b.spent_usd, &b.unpriced_models, 2);
    match (b.limit, b.level) {
        (None, _) => writeln!(out, "spent {spent} (no budget set)"),
        (Some(limit), None) => writeln!(out, "spent {spent} of ${limit:.2}"),
        (Some(limit), Some(level)) => writeln!(out, "{level}: spent {spent} of ${limit:.2}"),
    }
}
