//! `git pair verify`: the CI check — every commit of a range must hold reviewed work. Prints
//! the verdict (`render::verify`), and appends it as Markdown to a CI job summary if asked.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::error::EXIT_FAILURE;
use super::{CommandError, Context, Report, Ui};
use crate::ops::verify::{self, Request};

/// Prove that every commit of a range was reviewed: the team gate for CI.
///
/// For each commit, oldest first, finds the run that approved its tree and confirms it in
/// the run's own records (refs/pair/runs/*). The note on the commit (refs/notes/pair) or
/// its Pair-Run trailer only says where to look; a commit with neither (the note was lost
/// to an amend, rebase or squash) is found by its tree. Each commit is:
///
///   approved              a run's APPROVED review has exactly this tree
///   forced                the run was closed with `finish --force` on this tree
///                         (fails unless --allow-forced)
///   changed-after-review  a run is linked to the commit (its note, its Pair-Run trailer,
///                         or an approved run no commit holds that started on its parent,
///                         or for the range's tip ran on its branch, and changed some of
///                         the same files) but approved another tree: the differing
///                         paths are listed
///   unreviewed            no run approved this tree
///
/// A commit that adds nothing of its own passes on its parents' account: each of its
/// files must be that file in one of its parents (an empty commit, or a merge that took
/// every file from one side: no merged content, no conflict resolution, no edits). A
/// merge whose files were merged or edited passes only when a run approved its own tree.
/// Parents outside the range are the trusted base.
///
/// Exit 0 when every commit passes, 1 otherwise. In a CI clone, fetch the review records
/// first:
///
///   git fetch origin '+refs/pair/runs/*:refs/pair/runs/*' '+refs/notes/pair:refs/notes/pair'
///
/// With no run refs at all it stops with an error saying so, rather than calling every
/// commit unreviewed.
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The commits to verify: A..B (an empty side is HEAD), or one revision (that commit
    /// alone). Default: @{upstream}..HEAD, else origin/HEAD..HEAD (the remote's default
    /// branch), else origin/main..HEAD or origin/master..HEAD, whichever exists.
    #[arg(value_name = "rev-range | rev")]
    pub range: Option<String>,
    /// Let commits finished with `git pair finish --force` pass (still shown as forced).
    #[arg(long)]
    pub allow_forced: bool,
    /// Also append the result as Markdown to this file (e.g. "$GITHUB_STEP_SUMMARY").
    #[arg(long, value_name = "file")]
    pub summary: Option<PathBuf>,
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    let request = Request {
        range: args.range.clone(),
        allow_forced: args.allow_forced,
    };
    let verified = match verify::verify(ctx, &request) {
        Ok(verified) => verified,
        Err(err) => {
            let err = CommandError::from(err);
            if let Some(path) = &args.summary {
                let text = crate::render::verify::markdown_error(&err.message, err.hint.as_deref());
                append(path, text.as_bytes())?;
            }
            return Err(err);
        }
    };
    if let Some(path) = &args.summary {
        let mut text = Vec::new();
        crate::render::verify::markdown(&verified, &mut text)
            .expect("writing to a Vec cannot fail");
        append(path, &text)?;
    }
    // One line per commit: printed as it is serialized, not built twice.
    let mut report = ui.print_rendered(&verified, crate::render::verify::human)?;
    if let Some(message) = &verified.error {
        report = report.note(format!("error: {message}")).note(
            "hint: review the work (git pair review, then finish), or fetch the review records: git pair pull",
        );
        report.exit = EXIT_FAILURE;
    }
    Ok(report)
}

fn append(path: &Path, text: &[u8]) -> Result<(), CommandError> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(text))
        .map_err(|e| {
            CommandError::failed(format!(
                "cannot write the summary to {}: {e}",
                path.display()
            ))
        })
}
