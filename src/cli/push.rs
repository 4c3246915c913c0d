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
/// Then either drop the run for good (git pair drop <run>; start a fresh one), remove the
/// file from the run's unpublished part (git pair scrub <run> <path>), or, for a known false
/// positive, allow it: --allow-secret <kind>:<path> (recorded in the run). A file the scanner
/// cannot read (binary, or over the scan limit) is refused the same way unless allowed with
/// --allow-unscanned <path> (recorded); a file a review flagged [secret] is never published.
///
/// No commit outside refs/pair that the remote lacks is published: a run's base and the
/// history behind it stay private until you push your branch. A run written by an older
/// git pair holds its base in its chain; push it with --with-base to publish (and scan) that
/// history too. Runs dropped here (tombstones) are deleted on the remote.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A configured remote, a URL or a path.
    #[arg(value_name = "remote", default_value = sync::DEFAULT_REMOTE)]
    pub remote: String,
    /// Publish a finding of this kind at this path anyway: a known false positive
    /// (e.g. generic-secret:tests/fixtures/app.env). Recorded in the run. Repeatable.
    #[arg(long = "allow-secret", value_name = "kind:path")]
    pub allow_secret: Vec<String>,
    /// Publish this binary or large file unscanned anyway (its work-tree path, or its path
    /// in the run for stored material). Recorded in the run. Repeatable.
    #[arg(long = "allow-unscanned", value_name = "path")]
    pub allow_unscanned: Vec<String>,
    /// Also publish (scanned like the rest) the project commits a run's chain holds that the
    /// remote lacks: its base and the history behind it.
    #[arg(long = "with-base")]
    pub with_base: bool,
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    let request = ops::sync::PushRequest {
        allow_secret: args.allow_secret.clone(),
        allow_unscanned: args.allow_unscanned.clone(),
        with_base: args.with_base,
    };
    let pushed = ops::sync::push(ctx, &args.remote, &request, &|message| ui.progress(message))?;
    let mut report = Report::rendered(&pushed, crate::render::sync::push);
    report.notes.extend(pushed.handoff_warning);
    Ok(report)
}
