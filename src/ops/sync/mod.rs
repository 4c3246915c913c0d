//! Sharing state between machines (SPEC §8): `push` and `pull` through [`crate::sync`], then
//! the HANDOFF view refreshed for this branch's active run when a pull moved any run. A push
//! is guarded by the secret scan of what it would publish ([`scan`]); runs a pull
//! removed (dropped elsewhere) lose their rendered views too.

pub mod findings;
pub mod scan;

use std::path::PathBuf;

use super::{Context, Error};
use crate::model::RunId;
use crate::model::report::sync as report;
use crate::store::{Counts, Integration};
use crate::sync::{PullReport, Remote, Scope};
use scan::{Guard, ScanSummary};

/// Fetches `remote`'s state and merges it into the local runs and notes.
pub fn pull(ctx: &Context, remote: &str, progress: &dyn Fn(&str)) -> Result<report::Pull, Error> {
    let remote = Remote::resolve(&ctx.repo, remote)?;
    let _one_at_a_time = ctx.repo.lock_sync(&remote.staging)?;
    progress(&format!("fetching git pair state from {}…", remote.name));
    let keep = keep_active(ctx);
    let pulled = crate::sync::pull(&ctx.repo, &remote, &keep)?;
    forget_removed(ctx, &pulled)?;
    let (handoff_path, handoff_warning) = refresh_handoff(ctx, &pulled);
    Ok(report::Pull {
        remote: remote.name,
        runs: run_counts(&pulled.runs),
        notes: pulled.notes.map(merged),
        remote_runs: pulled.remote_runs,
        removed: removed_runs(&pulled),
        handoff_path: handoff_path.map(|p| p.display().to_string()),
        handoff_warning,
    })
}

/// What `push` was asked for beyond the remote.
#[derive(Debug, Clone, Default)]
pub struct PushRequest {
    /// `--allow-secret <kind>:<path>`.
    pub allow_secret: Vec<String>,
    /// `--allow-unscanned <path>`.
    pub allow_unscanned: Vec<String>,
    /// `--with-base`.
    pub with_base: bool,
}

/// Publishes the local runs, tombstones and notes to `remote`, never forcing, after scanning
/// what it would publish: a secret, a blob the scanner cannot read, a blob a review flagged
/// `[secret]` or project history the remote lacks refuses the push, publishing nothing,
/// unless `request` (or the run's recorded allowances) allows it.
pub fn push(
    ctx: &Context,
    remote: &str,
    request: &PushRequest,
    progress: &dyn Fn(&str),
) -> Result<report::Push, Error> {
    let remote = Remote::resolve(&ctx.repo, remote)?;
    // The shipped table compiles on first use: a push with nothing new compiles nothing.
    let scanner = ctx.scanner()?;
    let mut allow = request
        .allow_secret
        .iter()
        .map(|a| scan::parse_allowance(a, &scanner))
        .collect::<Result<Vec<_>, _>>()?;
    for path in &request.allow_unscanned {
        allow.push(scan::unscanned_allowance(path)?);
    }
    let flags = scan::Flags {
        allow,
        with_base: request.with_base,
    };
    let _one_at_a_time = ctx.repo.lock_sync(&remote.staging)?;
    progress(&format!("pushing git pair state to {}…", remote.name));
    let mut guard = Guard::new(&ctx.repo, scanner, flags);
    let keep = keep_active(ctx);
    let pushed = guard.push(&remote, &Scope::Everything, &keep)?;
    forget_removed(ctx, &pushed.pulled)?;
    let (handoff_path, handoff_warning) = refresh_handoff(ctx, &pushed.pulled);
    let scan: ScanSummary = guard.summary;
    Ok(report::Push {
        remote: remote.name,
        pushed: pushed.pushed_runs + usize::from(pushed.pushed_notes) + pushed.pushed_tombstones,
        pushed_runs: pushed.pushed_runs,
        pushed_notes: pushed.pushed_notes,
        pushed_tombstones: pushed.pushed_tombstones,
        removed_runs: pushed.removed_runs.clone(),
        attempts: pushed.attempts,
        runs: run_counts(&pushed.pulled.runs),
        notes: pushed.pulled.notes.map(merged),
        removed: removed_runs(&pushed.pulled),
        scanned: report::Scanned {
            commits: scan.commits,
            blobs: scan.blobs,
            bytes: scan.bytes,
            skipped: scan.skipped,
        },
        allowed: scan.allowed,
        allowances_recorded: scan.recorded,
        handoff_path: handoff_path.map(|p| p.display().to_string()),
        handoff_warning,
    })
}

/// Which runs a fetched tombstone must not remove: this clone's unfinished runs (its active
/// work, which a local `drop` also removes only with `--force`). A run that cannot be read is
/// kept too (fail closed: a tombstone deletes only what is surely not active here).
pub fn keep_active(ctx: &Context) -> impl Fn(&RunId) -> bool + '_ {
    let owners = crate::ops::common::select::Owners::new(&ctx.repo);
    move |run_id: &RunId| {
        let Ok(state) = ctx.repo.load(run_id) else {
            return true;
        };
        let m = &state.manifest;
        !m.is_finished()
            && owners
                .belongs_here(run_id, m.claimed, &m.cwd)
                .unwrap_or(true)
    }
}

/// The report's tally of what merging touched.
pub fn run_counts(counts: &Counts) -> report::RunCounts {
    report::RunCounts {
        created: counts.created,
        fast_forwarded: counts.fast_forwarded,
        merged: counts.merged,
        unchanged: counts.unchanged,
        local_ahead: counts.local_ahead,
    }
}

/// The report's name for what happened to one ref.
pub fn merged(integration: Integration) -> report::Merged {
    match integration {
        Integration::Unchanged => report::Merged::Unchanged,
        Integration::LocalAhead => report::Merged::LocalAhead,
        Integration::Created => report::Merged::Created,
        Integration::FastForwarded => report::Merged::FastForwarded,
        Integration::Merged => report::Merged::Merged,
    }
}

/// What a pull removed because tombstones arrived.
pub fn removed_runs(pulled: &PullReport) -> report::RemovedRuns {
    report::RemovedRuns {
        runs: pulled.removed.clone(),
        kept: pulled.kept_dropped.clone(),
        kept_active: pulled.kept_active.clone(),
        tombstones_learnt: pulled.tombstones,
        note_lines: pulled.removed_note_lines,
    }
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
