//! `git pair gate`: the commit gate as a command, for scripts and CI.

use super::{CommandError, Context, Report};
use crate::ops;

/// Check the commit gate: may the staged tree be committed?
///
/// Open (exit 0) when no run is active on this branch, or when the staged tree (the index as
/// a tree) is exactly the snapshot the active run's reviewer last APPROVED. Closed (exit 1)
/// otherwise: the error names the run and the first paths that differ. The same check as the
/// pre-commit hook installed with `git pair hooks install --gate`. Nothing is written.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(ctx: &Context, _args: &Args) -> Result<Report, CommandError> {
    let gate = ops::gate::check(ctx)?;
    Ok(Report::rendered(&gate, crate::render::gate::human))
}
