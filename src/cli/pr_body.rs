//! `git pair pr-body`: print the PR body, or update the generated part of an existing one.

use super::{CommandError, Context, Report};
use crate::ops;

/// Print the PR body rendered from the run's stored records.
///
/// The generated part sits between <!-- git-pair:begin --> and <!-- git-pair:end -->. With
/// --update FILE, that part of an existing description in FILE is replaced (or appended when
/// absent) and the user's own text is kept; FILE is rewritten in place.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Update the generated part of the description in this file, in place.
    #[arg(long, value_name = "file")]
    pub update: Option<std::path::PathBuf>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let body = ops::common::pr::pr_body(ctx, args.update.as_deref())?;
    Ok(Report::rendered(&body, crate::render::transcript::pr_body))
}
