//! `git pair status`: the run's state and the one thing to do next.

use super::{CommandError, Context, Report};
use crate::ops;

/// Show the run's state and `next_action`, the one thing to do next.
///
/// next_action is one of: code, review, finish, review:pr, stop:round-cap, stop:budget,
/// stop:stalled, stop:partial, resume:review, wait:review, done. Agents follow it; `stop:*`
/// means ask the human. review:pr: the run's PR awaits its final review
/// (pair.prFinalRound): git pair review --pr N.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(ctx: &Context, _args: &Args) -> Result<Report, CommandError> {
    let status = ops::status::status(ctx)?;
    Ok(Report::rendered(&status, crate::render::status::human))
}
