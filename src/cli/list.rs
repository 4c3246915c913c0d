//! `git pair list`: every run in this repository, newest first.

use super::{CommandError, Context, Report};

/// List the runs stored in this repository, newest first.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(ctx: &Context, _args: &Args) -> Result<Report, CommandError> {
    let runs = crate::ops::show::runs(ctx)?;
    Ok(Report::rendered(&runs, crate::render::list::human))
}
