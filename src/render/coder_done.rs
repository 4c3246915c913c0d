//! The human view of `coder-done`'s report.

use std::io::{Result, Write};

use crate::model::report::coder_done::CoderDone;

/// The round recorded and the next step.
pub fn human(d: &CoderDone, out: &mut dyn Write) -> Result<()> {
    writeln!(out, "Recorded coder round {} of run {}", d.round, d.run_id)?;
    writeln!(out, "next: git pair review")
}
