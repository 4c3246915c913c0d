//! `git pair gate`: the commit gate as a command, for scripts and CI.

use serde_json::json;

use super::{CommandError, Context, Report};
use crate::ops;
use crate::ops::gate::Open;

/// Check the commit gate: may the staged tree be committed?
///
/// Open (exit 0) when no run is active on this branch, or when the staged tree (the index as
/// a tree) is exactly the snapshot the active run's reviewer last APPROVED. Closed (exit 1)
/// otherwise: the error names the run and the first paths that differ. The same check as the
/// pre-commit hook installed with `git pair hooks install --gate`. Nothing is written.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(ctx: &Context, _args: &Args) -> Result<Report, CommandError> {
    Ok(match ops::gate::check(ctx)? {
        Open::NoActiveRun { branch } => Report::new(
            json!({"open": true, "reason": "no-active-run", "branch": branch}),
            format!("open: no active run on branch '{branch}'\n"),
        ),
        Open::Approved(approval) => Report::new(
            json!({
                "open": true,
                "reason": "approved",
                "run_id": approval.run_id.as_str(),
                "round": approval.round,
                "reviewer": approval.reviewer,
                "tree": approval.snapshot.to_string(),
            }),
            format!(
                "open: the staged tree is the snapshot run {} approved in round {} ({})\n",
                approval.run_id, approval.round, approval.reviewer
            ),
        ),
    })
}
