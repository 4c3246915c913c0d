//! `git pair push [REMOTE]`: publish local runs and notes, never forcing.

use serde_json::json;

use super::render::{counts_json, integration_name, runs_phrase};
use super::{CommandError, Context, Report, Ui};
use crate::ops;
use crate::sync::{self, PushReport};

/// Push runs and notes to a remote without ever forcing.
///
/// Sends refs/pair/runs/* and refs/notes/pair that the remote lacks or holds older
/// versions of, in one atomic push where each ref is a compare-and-swap against what was
/// last fetched. If someone pushed first, it pulls, merges (like git pair pull) and tries
/// again, a few times. Your remote.* configuration is not changed.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A configured remote, a URL or a path.
    #[arg(value_name = "remote", default_value = sync::DEFAULT_REMOTE)]
    pub remote: String,
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    let pushed = ops::sync::push(ctx, &args.remote, &|message| ui.progress(message))?;
    let remote = &pushed.remote.name;
    let p = &pushed.report;
    let json = json!({
        "remote": remote,
        "pushed": p.pushed_runs + usize::from(p.pushed_notes),
        "pushed_runs": p.pushed_runs,
        "pushed_notes": p.pushed_notes,
        "attempts": p.attempts,
        "runs": counts_json(&p.pulled.runs),
        "notes": integration_name(p.pulled.notes),
        "handoff_path": pushed.handoff_path.as_ref().map(|p| p.display().to_string()),
    });
    let mut report = Report::new(json, push_summary(remote, p));
    if let Some(warning) = pushed.handoff_warning {
        report = report.note(warning);
    }
    Ok(report)
}

fn push_summary(remote: &str, pushed: &PushReport) -> String {
    let mut out = if pushed.pushed_runs == 0 && !pushed.pushed_notes {
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
        format!("Pushed {} to {remote}\n", what.join(" and "))
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
