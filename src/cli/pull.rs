//! `git pair pull [REMOTE]`: fetch a remote's git pair state and merge it into the local runs.

use super::{CommandError, Context, Report, Ui};
use crate::ops;
use crate::sync;

/// Fetch runs and notes from a remote and merge them into the local ones.
///
/// Fetches refs/pair/* and refs/notes/pair into refs/pair-remotes/<remote>/ (your
/// remote.* configuration is not changed), then merges: a run only the remote has is
/// created, a run behind is fast-forwarded, a run changed on both machines gets a merge
/// commit holding the records of both (records written concurrently are both kept and
/// flagged in `git pair status`). Notes merge by sorted line union. A run the remote has a
/// tombstone for (it was dropped: git pair drop) is never created, and a local copy of it is
/// removed. HANDOFF.md is then re-rendered for this branch's active run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A configured remote, a URL or a path.
    #[arg(value_name = "remote", default_value = sync::DEFAULT_REMOTE)]
    pub remote: String,
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    let pulled = ops::sync::pull(ctx, &args.remote, &|message| ui.progress(message))?;
    let mut report = Report::rendered(&pulled, crate::render::sync::pull);
    report.notes.extend(pulled.handoff_warning);
    Ok(report)
}
