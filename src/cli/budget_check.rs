//! `git pair budget-check`: the run's spend against its budget; exit 2 at alert.

use serde_json::json;

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
    let (run_id, spend) = crate::ops::status::budget(ctx)?;
    let level = spend.level.map(|l| match l {
        crate::cost::Level::Warn => "warn",
        crate::cost::Level::Alert => "alert",
    });
    let spent = super::render::usd(spend.usd(), 2);
    let mut report = Report::new(
        json!({
            "level": level,
            "spent": super::render::usd_json(spend.usd()),
            "limit": spend.limit_usd,
            "run_id": run_id.as_str(),
            "unknown_models": spend.unknown_models,
        }),
        match (spend.limit_usd, level) {
            (None, _) => format!("spent {spent} (no budget set)\n"),
            (Some(limit), None) => format!("spent {spent} of ${limit:.2}\n"),
            (Some(limit), Some(level)) => format!("{level}: spent {spent} of ${limit:.2}\n"),
        },
    );
    if !spend.unknown_models.is_empty() {
        report = report.note(format!(
            "warning: no price for model(s) {}: their tokens are not in the figure (add them with pair.pricingFile)",
            spend.unknown_models.join(", ")
        ));
    }
    if level == Some("alert") {
        report = report.note("budget spent: stop and ask the human before going on");
        report.exit = EXIT_BUDGET_ALERT;
    }
    Ok(report)
}
