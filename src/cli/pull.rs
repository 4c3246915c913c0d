//! `git pair pull [REMOTE]`: fetch a remote's git pair state and merge it into the local runs.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{CommandError, Context, Report, Ui};
use crate::store::{Counts, Integration};
use crate::sync::{self, PullReport, Remote};

/// Fetch runs and notes from a remote and merge them into the local ones.
///
/// Fetches refs/pair/* and refs/notes/pair into refs/pair-remotes/<remote>/ (your
/// remote.* configuration is not changed), then merges: a run only the remote has is
/// created, a run behind is fast-forwarded, a run changed on both machines gets a merge
/// commit holding the records of both (records written concurrently are both kept and
/// flagged in `git pair status`). Notes merge by sorted line union. HANDOFF.md is then
/// re-rendered for this branch's active run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A configured remote, a URL or a path.
    #[arg(value_name = "remote", default_value = sync::DEFAULT_REMOTE)]
    pub remote: String,
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    let remote = Remote::resolve(&ctx.repo, &args.remote)?;
    ui.progress(&format!("fetching git pair state from {}…", remote.name));
    let pulled = sync::pull(&ctx.repo, &remote)?;
    let (handoff, warning) = refresh_handoff(ctx, &pulled);
    let json = json!({
        "remote": remote.name,
        "runs": counts_json(&pulled.runs),
        "notes": integration_name(pulled.notes),
        "remote_runs": pulled.remote_runs,
        "handoff_path": handoff.map(|p| p.display().to_string()),
    });
    let mut report = Report::new(json, pull_summary(&remote.name, &pulled));
    if let Some(warning) = warning {
        report = report.note(warning);
    }
    Ok(report)
}

/// Re-renders HANDOFF.md for the branch's active run when a pull moved any run: the second
/// machine then shows the same transcript and `next_action` as the first. A failure here
/// does not undo the pull; it becomes a warning.
pub(super) fn refresh_handoff(
    ctx: &Context,
    pulled: &PullReport,
) -> (Option<PathBuf>, Option<String>) {
    if pulled.changed.is_empty() || !ctx.options.handoff_file || ctx.repo.work_dir().is_err() {
        return (None, None);
    }
    let Ok(run_id) = ctx.run_id(None) else {
        return (None, None);
    };
    let result = crate::view::ensure_excluded(&ctx.repo)
        .map_err(CommandError::from)
        .and_then(|()| ctx.refresh_handoff(&run_id));
    match result {
        Ok(path) => (path, None),
        Err(err) => (
            None,
            Some(format!(
                "warning: could not refresh HANDOFF.md: {}",
                err.message
            )),
        ),
    }
}

/// `runs` as JSON: how many runs each kind of merge touched.
pub(super) fn counts_json(counts: &Counts) -> Value {
    json!({
        "created": counts.created,
        "fast_forwarded": counts.fast_forwarded,
        "merged": counts.merged,
        "unchanged": counts.unchanged,
        "local_ahead": counts.local_ahead,
    })
}

/// What happened to `refs/notes/pair`, as JSON (null: the remote has no notes).
pub(super) fn integration_name(integration: Option<Integration>) -> Value {
    match integration {
        None => Value::Null,
        Some(Integration::Unchanged) => "unchanged".into(),
        Some(Integration::LocalAhead) => "local_ahead".into(),
        Some(Integration::Created) => "created".into(),
        Some(Integration::FastForwarded) => "fast_forwarded".into(),
        Some(Integration::Merged) => "merged".into(),
    }
}

/// One line for humans: what moved, or that nothing did.
pub(super) fn runs_phrase(counts: &Counts, notes: Option<Integration>) -> Option<String> {
    let mut parts = Vec::new();
    let runs = |n: usize| if n == 1 { "run" } else { "runs" };
    if counts.created > 0 {
        parts.push(format!("{} new {}", counts.created, runs(counts.created)));
    }
    if counts.fast_forwarded > 0 {
        parts.push(format!(
            "{} {} updated",
            counts.fast_forwarded,
            runs(counts.fast_forwarded)
        ));
    }
    if counts.merged > 0 {
        parts.push(format!(
            "{} {} merged with local changes",
            counts.merged,
            runs(counts.merged)
        ));
    }
    match notes {
        Some(Integration::Created | Integration::FastForwarded) => {
            parts.push("notes updated".into())
        }
        Some(Integration::Merged) => parts.push("notes merged".into()),
        _ => {}
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn pull_summary(remote: &str, pulled: &PullReport) -> String {
    if pulled.remote_runs == 0 && pulled.notes.is_none() {
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

impl From<sync::Error> for CommandError {
    fn from(err: sync::Error) -> Self {
        use sync::Error as E;
        let message = super::error::single_line(&err.to_string());
        match err {
            E::Store(err) => err.into(),
            E::NoSuchRemote { .. } => CommandError::failed(message).with_hint(
                "git remote -v lists the configured remotes; a URL or a path works too",
            ),
            E::BadRemote { .. } => CommandError::failed(message)
                .with_hint("name a configured remote (git remote -v), a URL or a path"),
            E::Fetch { .. } => CommandError::failed(message).with_hint(
                "nothing local was changed; check the remote's URL (git remote -v), the network and your credentials",
            ),
            E::Push { .. } => CommandError::failed(message).with_hint(
                "local state is unchanged; check the remote's URL, your access rights and any server-side hook",
            ),
            E::PushRejected { .. } => CommandError::failed(message)
                .with_hint("local state is intact; run git pair push again"),
            E::Spawn { .. } => {
                CommandError::failed(message).with_hint("git pair needs git on PATH to sync")
            }
        }
    }
}
