//! Sharing state between machines (SPEC §8): `push` and `pull` through [`crate::sync`], then
//! the HANDOFF view refreshed for this branch's active run when a pull moved any run.

use std::path::PathBuf;

use super::{Context, Error};
use crate::sync::{PullReport, PushReport, Remote};

/// What a pull or push did, and where the refreshed view is.
#[derive(Debug)]
pub struct Synced<R> {
    pub remote: Remote,
    pub report: R,
    pub handoff_path: Option<PathBuf>,
    /// The view could not be refreshed (the sync itself succeeded).
    pub handoff_warning: Option<String>,
}

/// Fetches `remote`'s state and merges it into the local runs and notes.
pub fn pull(
    ctx: &Context,
    remote: &str,
    progress: &dyn Fn(&str),
) -> Result<Synced<PullReport>, Error> {
    let remote = Remote::resolve(&ctx.repo, remote)?;
    let _one_at_a_time = ctx.repo.lock_sync(&remote.staging)?;
    progress(&format!("fetching git pair state from {}…", remote.name));
    let report = crate::sync::pull(&ctx.repo, &remote)?;
    let (handoff_path, handoff_warning) = refresh_handoff(ctx, &report);
    Ok(Synced {
        remote,
        report,
        handoff_path,
        handoff_warning,
    })
}

/// Publishes the local runs and notes to `remote`, never forcing.
pub fn push(
    ctx: &Context,
    remote: &str,
    progress: &dyn Fn(&str),
) -> Result<Synced<PushReport>, Error> {
    let remote = Remote::resolve(&ctx.repo, remote)?;
    let _one_at_a_time = ctx.repo.lock_sync(&remote.staging)?;
    progress(&format!("pushing git pair state to {}…", remote.name));
    let report = crate::sync::push(&ctx.repo, &remote)?;
    let (handoff_path, handoff_warning) = refresh_handoff(ctx, &report.pulled);
    Ok(Synced {
        remote,
        report,
        handoff_path,
        handoff_warning,
    })
}

/// Re-renders the HANDOFF view for the branch's active run when a pull moved any run: the
/// second machine then shows the same transcript and `next_action` as the first. A failure
/// here does not undo the pull; it becomes a warning.
fn refresh_handoff(ctx: &Context, pulled: &PullReport) -> (Option<PathBuf>, Option<String>) {
    if pulled.changed.is_empty() || !ctx.options.handoff_file || ctx.repo.work_dir().is_err() {
        return (None, None);
    }
    let Ok(run_id) = super::select::active(ctx, None) else {
        return (None, None);
    };
    let result = ctx.refresh_handoff(&run_id);
    match result {
        Ok(path) => (path, None),
        Err(err) => (
            None,
            Some(format!("warning: could not refresh HANDOFF.md: {err}")),
        ),
    }
}
