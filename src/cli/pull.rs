//! `git pair pull [REMOTE]`: fetch a remote's git pair state and merge it into the local runs.

use serde_json::json;

use super::render::{counts_json, integration_name, removed_json, removed_lines, runs_phrase};
use super::{CommandError, Context, Report, Ui};
use crate::ops;
use crate::sync::{self, PullReport};

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
    let remote = &pulled.remote.name;
    let json = json!({
        "remote": remote,
        "runs": counts_json(&pulled.report.runs),
        "notes": integration_name(pulled.report.notes),
        "remote_runs": pulled.report.remote_runs,
        "removed": removed_json(&pulled.report),
        "handoff_path": pulled.handoff_path.as_ref().map(|p| p.display().to_string()),
    });
    let mut human = pull_summary(remote, &pulled.report);
    human.push_str(&removed_lines(remote, &pulled.report));
    let mut report = Report::new(json, human);
    if let Some(warning) = pulled.handoff_warning {
        report = report.note(warning);
    }
    Ok(report)
}

fn pull_summary(remote: &str, pulled: &PullReport) -> String {
    if pulled.remote_runs == 0 && pulled.notes.is_none() && pulled.tombstones == 0 {
        return format!("{remote} has no git pair state yet; nothing to pull\n");
    }
    match runs_phrase(&pulled.runs, pulled.notes) {
        Some(phrase) => format!("Pulled from {remote}: {phrase}\n"),
        None => format!(
            "Already up to date with {remote} ({} {})\n",
            pulled.remote_runs,
            if pulled.remote_runs == 1 {
                "run"
            } else {
                "runs"
            }
        ),
    }
}
