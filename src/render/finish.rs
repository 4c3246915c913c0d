//! The human view of `finish`'s report.

use std::io::{Result, Write};

use crate::model::report::finish::Finished;

/// The outcome, where the PR body is, and the next step.
pub fn human(f: &Finished, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "Finished run {}: {}",
        f.run_id,
        f.verdict.unwrap_or("?")
    )?;
    writeln!(out, "PR body: {}", f.pr_body_path)?;
    writeln!(
        out,
        "next: commit and push your work, then open the PR with that body (or git pair finish --open-pr)"
    )
}
