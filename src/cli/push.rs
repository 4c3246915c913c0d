//! `git pair push [REMOTE]`: publish local runs and notes, never forcing.

use serde_json::json;

use super::render::{counts_json, integration_name, removed_json, removed_lines, runs_phrase};
use super::{CommandError, Context, Report, Ui};
use crate::ops;
use crate::sync::{self, PushReport};

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
    let remote = &pushed.remote.name;
    let p = &pushed.report;
    let scan = pushed.scan.clone().unwrap_or_default();
    let json = json!({
        "remote": remote,
        "pushed": p.pushed_runs + usize::from(p.pushed_notes) + p.pushed_tombstones,
        "pushed_runs": p.pushed_runs,
        "pushed_notes": p.pushed_notes,
        "pushed_tombstones": p.pushed_tombstones,
        "removed_runs": p.removed_runs.iter().map(|r| r.as_str()).collect::<Vec<_>>(),
        "attempts": p.attempts,
        "runs": counts_json(&p.pulled.runs),
        "notes": integration_name(p.pulled.notes),
        "removed": removed_json(&p.pulled),
        "scanned": {
            "commits": scan.commits,
            "blobs": scan.blobs,
            "bytes": scan.bytes,
            "skipped": scan.skipped,
        },
        "allowed": scan.allowed,
        "allowances_recorded": scan.recorded,
        "handoff_path": pushed.handoff_path.as_ref().map(|p| p.display().to_string()),
    });
    let mut human = push_summary(remote, p);
    human.push_str(&removed_lines(remote, &p.pulled));
    for (run, allowed) in &scan.recorded {
        human.push_str(&format!(
            "Recorded in run {run}: secret allowed for push (known false positive): {}\n",
            allowed.join(", ")
        ));
    }
    if scan.skipped > 0 {
        human.push_str(&format!(
            "({} large or binary file{} not scanned for secrets)\n",
            scan.skipped,
            if scan.skipped == 1 { "" } else { "s" }
        ));
    }
    let mut report = Report::new(json, human);
    if let Some(warning) = pushed.handoff_warning {
        report = report.note(warning);
    }
    Ok(report)
}

fn push_summary(remote: &str, pushed: &PushReport) -> String {
    let nothing = pushed.pushed_runs == 0
        && !pushed.pushed_notes
        && pushed.pushed_tombstones == 0
        && pushed.removed_runs.is_empty();
    let mut out = if nothing {
        format!("Everything up to date on {remote}\n")
    } else {
        let mut what = Vec::new();
        if pushed.pushed_runs > 0 {
            let noun = if pushed.pushed_runs == 1 {
                "run"
            } else {
                "runs"
            };
            what.push(format!("{} {noun}", pushed.pushed_runs));
        }
        if pushed.pushed_notes {
            what.push("notes".to_owned());
        }
        if pushed.pushed_tombstones > 0 {
            what.push(format!(
                "{} tombstone{}",
                pushed.pushed_tombstones,
                if pushed.pushed_tombstones == 1 {
                    ""
                } else {
                    "s"
                }
            ));
        }
        let mut line = if what.is_empty() {
            String::new()
        } else {
            format!("Pushed {} to {remote}\n", what.join(" and "))
        };
        for run_id in &pushed.removed_runs {
            line.push_str(&format!("Deleted dropped run {run_id} on {remote}\n"));
        }
        line
    };
    if let Some(phrase) = runs_phrase(&pushed.pulled.runs, pushed.pulled.notes) {
        out.push_str(&format!("Merged from {remote} first: {phrase}\n"));
    }
    if pushed.attempts > 1 {
        out.push_str(&format!(
            "(someone pushed first; succeeded on attempt {})\n",
            pushed.attempts
        ));
    }
    out
}
