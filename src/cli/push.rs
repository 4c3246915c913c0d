//! `git pair push [REMOTE]`: publish local runs and notes, never forcing.

use super::{CommandError, Context, Report, Ui};
use crate::ops;
use crate::sync;

/// Push runs and notes to a remote without ever forcing, and never a secret.
///
/// Sends refs/pair/runs/* and refs/notes/pair that the remote lacks or holds older
/// versions of, in one atomic push where each ref is a compare-and-swap against what was
/// last fetched. If someone pushed first, it pulls, merges (like git pair pull) and tries
/// again, a few times. Your remote.* configuration is not changed.
///
/// Before sending, everything new to the remote (records, stored prompts, diffs and outputs,
/// reviewed snapshots, notes) is scanned for secrets; on a finding nothing is published.
/// Then either drop the run for good (git pair drop <run>; start a fresh one), or, for a
/// known false positive, allow it: --allow-secret <kind>:<path> (recorded in the run).
/// Runs dropped here (tombstones) are deleted on the remote.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A configured remote, a URL or a path.
    #[arg(value_name = "remote", default_value = sync::DEFAULT_REMOTE)]
    pub remote: String,
    /// Publish a finding of this kind at this path anyway: a known false positive
    /// (e.g. generic-secret:tests/fixtures/app.env). Recorded in the run. Repeatable.
    #[arg(long = "allow-secret", value_name = "kind:path")]
    pub allow_secret: Vec<String>,
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    let pushed = ops::sync::push(ctx, &args.remote, &args.allow_secret, &|message| {
        ui.progress(message)
    })?;
    let mut report = Report::rendered(&pushed, crate::render::sync::push);
    report.notes.extend(pushed.handoff_warning);
    Ok(report)
}
