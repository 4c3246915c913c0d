//! `git pair finish`: close the run, render the PR body, record a PR number.

use serde_json::json;

use super::{CommandError, Context, Report, Ui};
use crate::model::Verdict;
use crate::ops;
use crate::ops::finish::NoteState;

/// Close the run and render its PR body from the stored records.
///
/// APPROVED (the default) needs the last review to be APPROVED; --force closes anyway and is
/// recorded as an override that the PR body shows. Writes the body to .git/pair/pr/<run>.md
/// (never into the work tree) and prints its path; commit and push your work the normal way,
/// then open the PR with it (--open-pr does that through `gh`). A human merges; the tool never
/// does. On a finished run, --pr N records the PR number (idempotent) and nothing else.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The outcome to record: APPROVED (default) or CHANGES_REQUESTED (closing unapproved).
    #[arg(long, value_name = "verdict", value_parser = ["APPROVED", "CHANGES_REQUESTED"])]
    pub verdict: Option<String>,
    /// Record the number of the PR opened for this run.
    #[arg(long, value_name = "n")]
    pub pr: Option<u64>,
    /// Finish APPROVED without an approving last review (recorded as an override).
    #[arg(long)]
    pub force: bool,
    /// Open the PR with `gh pr create --body-file …` (needs the GitHub CLI).
    #[arg(long)]
    pub open_pr: bool,
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    let verdict = match args.verdict.as_deref() {
        Some("CHANGES_REQUESTED") => Some(Verdict::ChangesRequested),
        Some(_) => Some(Verdict::Approved),
        None => None,
    };
    let done = ops::finish::finish(
        ctx,
        &ops::finish::Request {
            verdict,
            pr: args.pr,
            force: args.force,
            open_pr: args.open_pr,
        },
        &|message| ui.progress(message),
    )?;
    let mut notes = Vec::new();
    if done.finished_now && done.override_ {
        notes.push("note: finished with --force; the PR body shows the override".to_owned());
    }
    if let Some(n) = done.pr_already {
        notes.push(format!(
            "note: run {} already has PR #{n}; not opening another",
            done.run_id
        ));
    }
    let note_commit = match &done.note {
        NoteState::Attached(c) => {
            notes.push(format!(
                "note: review note attached to commit {c} (git log --notes=pair shows it)"
            ));
            Some(c.to_string())
        }
        NoteState::AlreadyAttached(c) => {
            notes.push(format!(
                "note: commit {c} already carries this run's review note (refs/notes/pair)"
            ));
            Some(c.to_string())
        }
        NoteState::NotYet | NoteState::NothingReviewed => {
            notes.push(
                "note: HEAD does not hold the reviewed work yet; after you commit it, run git pair finish again to attach the review note (refs/notes/pair)"
                    .to_owned(),
            );
            None
        }
    };
    let verdict = done.verdict.map(Verdict::as_str);
    let mut report = Report::new(
        json!({
            "run_id": done.run_id.as_str(),
            "pr_body_path": done.pr_body_path.display().to_string(),
            "verdict": verdict,
            "pr": done.pr,
            "override": done.override_,
            "note_commit": note_commit,
        }),
        format!(
            "Finished run {}: {}\nPR body: {}\nnext: commit and push your work, then open the PR with that body (or git pair finish --open-pr)\n",
            done.run_id,
            verdict.unwrap_or("?"),
            done.pr_body_path.display()
        ),
    );
    report.notes = notes;
    Ok(report)
}
