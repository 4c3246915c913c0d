//! `git pair log`: a run's story on one screen.

use super::{CommandError, Context, Report};
use crate::ops;

/// Show a run's story: each round's coder summary, each review's verdict and findings (by
/// severity), how many findings the next round addressed, the outcome and the spend.
///
/// The run's commits (`git log refs/pair/runs/<id>`) are its records, one per commit; this
/// is them read as a story. `git pair show <run> --round N` has a round in full,
/// `git pair handoff` the whole transcript.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run id (default: the active run, else this branch's newest finished one).
    pub run_id: Option<String>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let log = ops::log::log(ctx, args.run_id.as_deref())?;
    Ok(Report::rendered(&log, crate::render::log::human))
}
