//! The human view of `adopt`'s report.

use std::io::{Result, Write};

use crate::model::report::adopt::Adopted;

/// Whose the run is now, whether it is the active run, and what comes next.
pub fn human(a: &Adopted, out: &mut dyn Write) -> Result<()> {
    // Stored text from another clone: no control character reaches the terminal.
    let branch = a.branch.escape_debug();
    if a.adopted {
        writeln!(out, "Adopted run {}: it is this clone's own now", a.run_id)?;
    } else {
        writeln!(out, "Run {} is this clone's own already", a.run_id)?;
    }
    if a.active {
        writeln!(out, "It is the active run on branch '{branch}'")?;
        if let Some(path) = &a.handoff_path {
            writeln!(out, "Transcript: {path}")?;
        }
        writeln!(out, "next: {} (git pair status)", a.next_action)
    } else if a.current_branch != a.branch {
        writeln!(
            out,
            "next: continue it on its branch: git switch {branch} (then git pair status)"
        )
    } else {
        writeln!(out, "next: git pair status")
    }
}
