//! `git pair adopt`: make a run from another clone this clone's own.

use super::{CommandError, Context, Report};
use crate::ops;

/// Continue here a run that was started in another clone.
///
/// A run belongs to the clone that started it. Runs that arrive with `git pair pull` (or a
/// fetch) are listed, shown and verified here, but never become this clone's active run, the
/// commit gate's subject or the Stop hook's subject by themselves: another clone may still be
/// working on them. `adopt` says "this work continues here": the run becomes this clone's own
/// (recorded in the local ref refs/pair-local/owned/<run>, which push and pull never carry),
/// and on its branch it is the active run.
///
/// Moving a task to another machine:
///   (machine A)  git pair push                  publish the run
///   (machine B)  git pair pull                  fetch it; `git pair list` marks it "other clone"
///   (machine B)  git switch <branch>            the run's branch, with its work
///   (machine B)  git pair adopt <run>           continue it here
///
/// `git pair checkpoint restore <id>` adopts the checkpoint's run as well. Refused: an unknown
/// run, a finished one (there is nothing to continue: start a new run), and a branch on which
/// this clone already has an unfinished run. Adopting a run that is already this clone's
/// changes nothing.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run id (see git pair list).
    #[arg(value_name = "run")]
    pub run_id: String,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let adopted = ops::adopt::adopt(ctx, &args.run_id)?;
    Ok(Report::rendered(&adopted, crate::render::adopt::human))
}
