//! `git pair drop <run>`: remove a run for good, locally and on a remote, leaving a tombstone.

use serde_json::json;

use super::{CommandError, Context, Report, Ui};
use crate::ops;

/// Remove a run for good (for instance one that holds a secret).
///
/// Deletes refs/pair/runs/<run>, every staged copy of it from earlier pulls, its lines in
/// refs/notes/pair and its rendered views, and leaves a tombstone refs/pair/dropped/<run>
/// that travels with push and pull: no pull brings the run back, and a clone that still has
/// it removes its copy when it pulls the tombstone. With --remote, the run is deleted there
/// too (the next git pair push does the same). `git gc --prune=now` then removes the objects
/// only the run held. The active run (unfinished, on this branch) needs --force.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run to drop (see git pair list).
    #[arg(value_name = "run")]
    pub run: String,
    /// Also delete the run on this remote (a configured remote, a URL or a path) now.
    #[arg(long, value_name = "remote")]
    pub remote: Option<String>,
    /// Drop the active run (unfinished, on this branch) too.
    #[arg(long)]
    pub force: bool,
    /// Why (kept in the tombstone, which is shared; never put a secret here).
    #[arg(long, value_name = "text")]
    pub reason: Option<String>,
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    let request = ops::drop::Request {
        run: args.run.clone(),
        remote: args.remote.clone(),
        force: args.force,
        reason: args.reason.clone(),
    };
    let dropped = ops::drop::drop(ctx, &request, &|message| ui.progress(message))?;
    let run_id = dropped.run_id.as_str();
    let files: Vec<String> = dropped
        .files
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let remote_json = dropped.remote.as_ref().map(|(name, report)| {
        json!({
            "remote": name,
            "deleted": report.removed_runs.iter().any(|r| r == &dropped.run_id),
            "tombstone_pushed": report.pushed_tombstones > 0,
            "notes_pushed": report.pushed_notes,
        })
    });
    let json = json!({
        "run_id": run_id,
        "was_local": dropped.was_local,
        "tombstone": dropped.tombstone.0,
        "tombstone_created": dropped.tombstone_created,
        "removed_refs": dropped.removed.refs,
        "removed_note_lines": dropped.removed.note_lines,
        "removed_files": files,
        "remote": remote_json,
    });
    let mut human = if dropped.was_local {
        format!("Dropped run {run_id}\n")
    } else {
        format!("Run {run_id} was not here; dropping it elsewhere\n")
    };
    for name in &dropped.removed.refs {
        human.push_str(&format!("  removed ref {name}\n"));
    }
    if dropped.removed.note_lines > 0 {
        human.push_str(&format!(
            "  removed {} line{} from refs/notes/pair\n",
            dropped.removed.note_lines,
            if dropped.removed.note_lines == 1 {
                ""
            } else {
                "s"
            }
        ));
    }
    for file in &files {
        human.push_str(&format!("  removed {file}\n"));
    }
    human.push_str(&format!(
        "  tombstone {} ({})\n",
        dropped.tombstone.0,
        if dropped.tombstone_created {
            "left now"
        } else {
            "already there"
        }
    ));
    match &dropped.remote {
        Some((name, report)) => {
            if report.removed_runs.iter().any(|r| r == &dropped.run_id) {
                human.push_str(&format!("  deleted on {name}\n"));
            } else {
                human.push_str(&format!("  {name} did not have it\n"));
            }
            if report.pushed_tombstones > 0 {
                human.push_str(&format!("  tombstone pushed to {name}\n"));
            }
        }
        None => human.push_str(
            "  (the next git pair push deletes it on the remote too; or now: --remote <remote>)\n",
        ),
    }
    human.push_str("To remove its objects from this repository now: git gc --prune=now\n");
    Ok(Report::new(json, human))
}
