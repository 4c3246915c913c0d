//! The human view of `finish`'s report.

use std::io::{Result, Write};

use crate::model::report::finish::{Finished, Note};

/// The outcome, where the PR body is, and the next step.
pub fn human(f: &Finished, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "Finished run {}: {}",
        f.run_id,
        f.verdict.unwrap_or("?")
    )?;
    writeln!(out, "PR body: {}", f.pr_body_path)?;
    writeln!(out, "next: {}", next(f))
}

/// What is left to do after `finish`, by where things stand: closed without approval, the
/// approved work committed or not, a PR recorded or not. The review records always need
/// `git pair push`: CI's `verify` reads them from the remote.
fn next(f: &Finished) -> String {
    if f.verdict != Some("APPROVED") {
        return "nothing to open: the run is closed without an approval (new work needs a new run: git pair start --task \"…\")".to_owned();
    }
    let committed = matches!(f.note, Note::Attached | Note::AlreadyAttached);
    let publish = "push the branch (git push) and the review records (git pair push)";
    match (committed, f.pr) {
        (false, Some(n)) => {
            format!("commit exactly the approved work, then {publish}; PR #{n} is recorded")
        }
        (false, None) => format!(
            "commit exactly the approved work, then {publish}, and open the PR with that body (or git pair finish --open-pr)"
        ),
        (true, Some(n)) => format!("{publish}; PR #{n} is recorded"),
        (true, None) => {
            format!("{publish}, then open the PR with that body (or git pair finish --open-pr)")
        }
    }
}
