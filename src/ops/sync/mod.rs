//! Sharing state between machines (SPEC §8): `push` and `pull` through [`crate::sync`], then
//! the HANDOFF view refreshed for this branch's active run when a pull moved any run. A push
//! is guarded by the secret scan of what it would publish ([`scan`]); runs a pull
//! removed (dropped elsewhere) lose their rendered views too.

pub mod findings;
pub mod scan;

use std::path::PathBuf;

use super::{Context, Error};
use crate::sync::{PullReport, PushReport, Remote, Scope};
use scan::{Guard, ScanSummary};

/// What a pull or push did, and where the refreshed view is.
#[derive(Debug)]
pub struct Synced<R> {
    pub remote: Remote,
    pub report: R,
    pub handoff_path: Option<PathBuf>,
    /// The view could not be refreshed (the sync itself succeeded).
    pub handoff_warning: Option<String>,
    /// What the push's secret scan covered (push only).
    pub scan: Option<ScanSummary>,
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
    forget_removed(ctx, &report)?;
    let (handoff_path, handoff_warning) = refresh_handoff(ctx, &report);
    Ok(Synced {
        remote,
        report,
        handoff_path,
        handoff_warning,
        scan: None,
    })
}

/// Publishes the local runs, tombstones and notes to `remote`, never forcing, after scanning
/// what it would publish for secrets: any finding `allow` (`--allow-secret <kind>:<path>`)
/// or the run's recorded allowances do not cover refuses the push, publishing nothing.
pub fn push(
    ctx: &Context,
    remote: &str,
    allow: &[String],
    progress: &dyn Fn(&str),
) -> Result<Synced<PushReport>, Error> {
    let remote = Remote::resolve(&ctx.repo, remote)?;
    // The shipped table compiles on first use: a push with nothing new compiles nothing.
    let scanner = ctx.scanner()?;
    let allow = allow
        .iter()
        .map(|a| scan::parse_allowance(a, &scanner))
        .collect::<Result<Vec<_>, _>>()?;
    let _one_at_a_time = ctx.repo.lock_sync(&remote.staging)?;
    progress(&format!("pushing git pair state to {}…", remote.name));
    let mut guard = Guard::new(&ctx.repo, scanner, allow);
    let report = guard.push(&remote, &Scope::Everything)?;
    forget_removed(ctx, &report.pulled)?;
    let (handoff_path, handoff_warning) = refresh_handoff(ctx, &report.pulled);
    Ok(Synced {
        remote,
        report,
        handoff_path,
        handoff_warning,
        scan: Some(guard.summary),
    })
}

/// Removes the rendered views of runs a pull removed (their tombstone arrived).
fn forget_removed(ctx: &Context, pulled: &PullReport) -> Result<(), Error> {
    for run_id in &pulled.removed {
        crate::ops::common::view::forget(&ctx.repo, run_id)?;
        let _ = std::fs::remove_file(super::common::pr::body_path(ctx, run_id));
    }
    Ok(())
}

/// Re-renders the HANDOFF view for the branch's active run when a pull moved any run: the
/// second machine then shows the same transcript and `next_action` as the first. A failure
/// here does not undo the pull; it becomes a warning.
fn refresh_handoff(ctx: &Context, pulled: &PullReport) -> (Option<PathBuf>, Option<String>) {
    if pulled.changed.is_empty() || !ctx.options.handoff_file || ctx.repo.work_dir().is_err() {
        return (None, None);
    }
    let Ok(run_id) = super::common::select::active(ctx, None) else {
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
