//! `git pair set`: change a run's own setting, or hand it back to `git config`.

use super::{CommandError, Context, Report};
use crate::ops;

/// Change a setting of the active run (recorded), or with --unset let it follow git config.
///
/// Keys: reviewer, reviewers (comma-separated panel), coder, max-rounds, budget-usd,
/// review-timeout (seconds). A setting given as a flag to `start` or set here belongs to the
/// run; every other one follows `git config pair.*` as it is when used. `git pair status`
/// shows each value and where it came from. A value that does not parse, or a reviewer name
/// no realization defines, is refused and nothing is recorded.
///
/// Which reviewer runs, first match wins: review --reviewer-cmd, the run's own reviewer (start
/// --reviewer, git pair set reviewer), pair.reviewer, pair.reviewerCommand, then codex.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The setting: reviewer, reviewers, coder, max-rounds, budget-usd, review-timeout.
    pub key: String,
    /// The new value (omit with --unset).
    #[arg(required_unless_present = "unset", allow_negative_numbers = true)]
    pub value: Option<String>,
    /// Stop owning the setting: it follows git config again.
    #[arg(long, conflicts_with = "value")]
    pub unset: bool,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let value = if args.unset {
        None
    } else {
        args.value.as_deref()
    };
    let now = ops::settings::set(ctx, &args.key, value)?;
    Ok(Report::rendered(&now, crate::render::set::human))
}
