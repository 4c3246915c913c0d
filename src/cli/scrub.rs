//! `git pair scrub <run> <path>`: remove a file from the unpublished part of a run.

use super::{CommandError, Context, Report};
use crate::ops;

/// Remove a file from the part of a run no remote has yet, so push works again.
///
/// When push refuses because a run stores a file that must not leave the machine (a secret,
/// a file a review flagged [secret], a binary you will not publish), scrub writes the run's
/// unpublished commits again with every stored snapshot's copy of that file (reviewed
/// snapshots and checkpoint snapshots) replaced by a one-line placeholder. Records, commit
/// messages and every other file stay as they were; the run's ref moves by compare-and-swap.
/// The path is the file's path in the work tree, as push names it.
///
/// A file that a commit some remote already holds stores (as last fetched or pushed) is
/// refused: it is published, and only git pair drop <run> --remote <remote> removes it there.
/// Stored review material (diff.patch, prompt.md) is not rewritten; push still scans it.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run id (see git pair list).
    #[arg(value_name = "run")]
    pub run_id: String,
    /// The file's path in the work tree.
    #[arg(value_name = "path")]
    pub path: String,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let scrubbed = ops::scrub::scrub(ctx, &args.run_id, &args.path)?;
    Ok(Report::rendered(&scrubbed, crate::render::scrub::human))
}
