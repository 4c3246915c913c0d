//! The human view of `abandon`'s report.

use std::io::{Result, Write};

use crate::model::report::abandon::Abandoned;

/// The run abandoned and how to start over.
pub fn human(a: &Abandoned, out: &mut dyn Write) -> Result<()> {
    writeln!(out, "Abandoned run {}", a.run_id)?;
    writeln!(
        out,
        "next: done — start a new run with: git pair start --task \"…\""
    )
}
