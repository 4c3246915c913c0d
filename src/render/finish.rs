//! The human view of `finish`'s report.

use std::io::{Result, Write};

use crate::model::report::finish::{Finished, Note};

/// The outcome, where the PR body is, and the next step.
pub fn human(f: &Finished, out: &mut dyn Write) -> Result<()> {
    if let (Some("due"), Some(n)) = (f.pr_round, f.pr) {
        // `pair.prFinalRound`: the PR is recorded and the run stays open for its final round.
        writeln!(
            out,
            "PR #{n} recorded for run {}: its final review is due, the run stays open",
            f.run_id
        )?;
        writeln!(out, "PR body: {}", f.pr_body_path)?;
        if let Some(push) = &f.push {
            crate::render::sync::push(push, out)?;
        }
        return writeln!(
            out,
            "next: review:pr — push your commits, then git pair review --pr {n} (reviews the PR as the remote has it and posts the findings on it); then git pair finish"
        );
    }
    writeln!(
        out,
        "Finished run {}: {}",
        f.run_id,
        f.verdict.unwrap_or("?")
    )?;
    writeln!(out, "PR body: {}", f.pr_body_path)?;
    if let Some(push) = &f.push {
        crate::render::sync::push(push, out)?;
    }
    writeln!(out, "next: {}", next(f))
}

/// What is left to do after `finish`, by where things stand: closed without approval, the
/// approved work committed or not, a PR recorded or not, the records published (`--push`)
/// or not. The review records need publishing: CI's `verify` reads them from the remote.
fn next(f: &Finished) -> String {
    if f.verdict != Some("APPROVED") {
        return "nothing to open: the run is closed without an approval (new work needs a new run: git pair start --task \"…\")".to_owned();
    }
    let committed = matches!(f.note, Note::Attached | Note::AlreadyAttached);
    // Finishing again publishes where this push went.
    let push_flag = match &f.push {
        Some(p) => format!("--push={}", p.remote),
        None => "--push".to_owned(),
    };
    let publish = match (committed, f.push.is_some()) {
        (true, true) => "push the branch (git push)".to_owned(),
        (true, false) => {
            "push the branch (git push) and the review records (git pair push)".to_owned()
        }
        // Not committed: finishing again after the commit attaches its review note, and
        // `--push` publishes note and records together.
        (false, again) => format!(
            "commit exactly the approved work, then git pair finish {push_flag}{} (it attaches the commit's review note and publishes the records) and push the branch (git push)",
            if again { " again" } else { "" }
        ),
    };
    match f.pr {
        Some(n) => format!("{publish}; PR #{n} is recorded"),
        None => {
            format!("{publish}, then open the PR with that body (or git pair finish --open-pr)")
        }
    }
}
