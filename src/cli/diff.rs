//! `git pair diff`: what changed between two reviewed snapshots of a run.

use super::{CommandError, Context, Report};
use crate::ops;

/// Show what changed between two reviewed snapshots — "what changed since my last review".
///
/// Compares round N's reviewed snapshot with round M's (--since-round; default N-1, or the
/// run's base for round 1). The output is `git diff` text.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run id (see git pair list); `--run <id>` names it too.
    pub run_id: Option<String>,
    /// The reviewed round to show.
    #[arg(long, value_name = "n")]
    pub round: u32,
    /// Compare with this earlier reviewed round (default: the one before).
    #[arg(long, value_name = "m")]
    pub since_round: Option<u32>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let state = ops::show::run(ctx, args.run_id.as_deref())?;
    let diff = ops::show::diff(ctx, &state, args.round, args.since_round)?;
    Ok(Report::rendered(&diff, crate::render::diff::human).raw())
}
