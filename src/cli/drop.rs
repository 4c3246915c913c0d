//! `git pair drop <run>`: remove a run for good, locally and on a remote, leaving a tombstone.

use super::{CommandError, Context, Report, Ui};
use crate::ops;

/// Remove a run for good (for instance one that holds a secret).
///
/// Deletes refs/pair/runs/<run>, every staged copy of it from earlier pulls, its lines in
/// refs/notes/pair and its rendered views, and leaves a tombstone refs/pair/dropped/<run>
/// that travels with push and pull: no pull brings the run back, and a clone that still has
/// it removes its copy when it pulls the tombstone. With --remote, the run is deleted there
/// too (the next git pair push does the same). `git gc --prune=now` then removes the objects
/// only the run held. The active run (unfinished, on this branch) needs --force.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run to drop (see git pair list).
    #[arg(value_name = "run")]
    pub run: String,
    /// Also delete the run on this remote (a configured remote, a URL or a path) now.
    #[arg(long, value_name = "remote")]
    pub remote: Option<String>,
    /// Drop the active run (unfinished, on this branch) too.
    #[arg(long)]
    pub force: bool,
    /// Why (kept in the tombstone, which is shared; never put a secret here).
    #[arg(long, value_name = "text")]
    pub reason: Option<String>,
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    let request = ops::drop::Request {
        run: args.run.clone(),
        remote: args.remote.clone(),
        force: args.force,
        reason: args.reason.clone(),
    };
    let dropped = ops::drop::drop(ctx, &request, &|message| ui.progress(message))?;
    Ok(Report::rendered(&dropped, crate::render::drop::human))
}
