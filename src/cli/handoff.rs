//! `git pair handoff`: print the transcript (HANDOFF.md's content) from stored records.

use super::{CommandError, Context, Report};

/// Print the run's transcript, rendered from the stored records (the content of HANDOFF.md).
///
/// Also rewrites HANDOFF.md in the work tree when it is missing or stale.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(ctx: &Context, _args: &Args) -> Result<Report, CommandError> {
    let handoff = crate::ops::show::handoff(ctx)?;
    Ok(Report::rendered(
        &handoff,
        crate::render::transcript::handoff,
    ))
}
