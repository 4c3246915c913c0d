//! The human view of `scrub`'s report.

use std::io::{Result, Write};

use crate::model::report::scrub::Scrubbed;

/// What was replaced, and what comes next.
pub fn human(s: &Scrubbed, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "Scrubbed {} from run {}: {} stored cop{} replaced, {} commit{} written again",
        s.path.escape_debug(),
        s.run_id,
        s.replaced.len(),
        if s.replaced.len() == 1 { "y" } else { "ies" },
        s.commits_rewritten,
        if s.commits_rewritten == 1 { "" } else { "s" }
    )?;
    for place in &s.replaced {
        writeln!(out, "  {}", place.escape_debug())?;
    }
    writeln!(
        out,
        "The old objects go with git gc once no reflog names them; records are unchanged. next: git pair push"
    )
}
