//! `git pair finish`: close the run, render the PR body, record a PR number.

use super::{CommandError, Context, Report, Ui};
use crate::model::Verdict;
use crate::ops;
use crate::ops::finish::Note;

/// Close the run and render its PR body from the stored records.
///
/// APPROVED (the default) needs the last review to be APPROVED; --force closes anyway and is
/// recorded as an override that the PR body shows. Writes the body to .git/pair/pr/<run>.md
/// (never into the work tree) and prints its path; commit and push your work the normal way,
/// then open the PR with it (--open-pr does that through `gh`). A human merges; the tool never
/// does. On a finished run, --pr N records the PR number (idempotent) and nothing else.
///
/// CI's `git pair verify` reads the review records from the remote: publish them with
/// --push (what `git pair push` does, after finishing; best after committing the approved
/// work, so the commit's review note goes too), or run `git pair push` yourself.
///
/// An approval is partial when some file of the change reached no reviewer (binary content,
/// a file over pair.maxFileBytes): it opens no commit gate and passes no `verify`, and finish
/// closes it only with --accept-partial (recorded, and shown in the PR body).
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
    /// Finish on a partial approval (files no reviewer saw), recorded and shown in the PR body.
    #[arg(long)]
    pub accept_partial: bool,
    /// Open the PR with `gh pr create --body-file …` (needs the GitHub CLI).
    #[arg(long)]
    pub open_pr: bool,
    /// Then publish the run's records and notes as `git pair push [REMOTE]` does (default
    /// origin); a refused push leaves the run finished.
    #[arg(
        long,
        value_name = "remote",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = crate::sync::DEFAULT_REMOTE
    )]
    pub push: Option<String>,
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
            accept_partial: args.accept_partial,
            open_pr: args.open_pr,
            push: args.push.clone(),
        },
        &|message| ui.progress(message),
    )?;
    let mut report = Report::rendered(&done, crate::render::finish::human);
    if let Some(warning) = done.push.as_ref().and_then(|p| p.handoff_warning.clone()) {
        report = report.note(warning);
    }
    if done.finished_now && done.override_ {
        report = report.note("note: finished with --force; the PR body shows the override");
    }
    if let Some(n) = done.pr_already {
        report = report.note(format!(
            "note: run {} already has PR #{n}; not opening another",
            done.run_id
        ));
    }
    let commit = done.note_commit.as_deref().unwrap_or_default();
    Ok(report.note(match done.note {
        Note::Attached => format!(
            "note: review note attached to commit {commit} (git log --notes=pair shows it)"
        ),
        Note::AlreadyAttached => format!(
            "note: commit {commit} already carries this run's review note (refs/notes/pair)"
        ),
        Note::NotYet => "note: HEAD does not hold the reviewed work yet; after you commit it, run git pair finish again to attach the review note (refs/notes/pair)".to_owned(),
    }))
}
