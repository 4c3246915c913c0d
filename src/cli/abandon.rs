//! `git pair abandon`: close the active run without a verdict.

use super::{CommandError, Context, Report};
use crate::ops;

/// Close the active run with the outcome `abandoned` (its next_action becomes `done`).
///
/// Nothing is deleted: the run's records stay (`git pair show <run>`); only a run's close is
/// recorded. To start over on this branch: `git pair start --task "…"` (or `start --replace`,
/// which abandons and starts in one step).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Why the run is abandoned (recorded, shown in the transcript).
    #[arg(long, value_name = "text")]
    pub reason: Option<String>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let abandoned = ops::finish::abandon(ctx, args.reason.clone())?;
    Ok(Report::rendered(&abandoned, crate::render::abandon::human))
}
