//! `git pair budget-check`: the run's spend against its budget; exit 2 at alert.

use super::error::EXIT_BUDGET_ALERT;
use super::{CommandError, Context, Report};

/// Check the run's spend against its budget (pair.budgetUsd / start --budget-usd).
///
/// Prints {"level": null|"warn"|"alert", "spent": usd, "limit": usd|null}. Exits 2 at alert:
/// stop and ask the human. Spend is read from the agents' own session logs (Claude Code,
/// Codex) for every session the run recorded, and never drops below what the run stored.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(ctx: &Context, _args: &Args) -> Result<Report, CommandError> {
    let checked = crate::ops::status::budget(ctx)?;
    let mut report = Report::rendered(&checked, crate::render::budget_check::human);
    if !checked.unknown_models.is_empty() {
        report = report.note(format!(
            "warning: no price for model(s) {}: their spend is unknown, not in the figure (add them with pair.pricingFile; the stored tokens are priced then)",
            checked.unknown_models.join(", ")
        ));
    }
    if checked.level == Some("alert") {
        report = report.note("budget spent: stop and ask the human before going on");
        report.exit = EXIT_BUDGET_ALERT;
    }
    Ok(report)
}
