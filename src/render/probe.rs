//! The human view of `probe`: every realization here, then each configured reviewer's
//! candidates and what binds.

use std::io::Write;

use crate::model::report::probe::Probe;

/// `git pair probe`'s text (also printed when nothing binds, before the error).
pub fn human(report: &Probe, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "realizations here:")?;
    for c in &report.realizations {
        writeln!(
            out,
            "  {:<8} {}  {}",
            c.name,
            if c.binds { "ok    " } else { "no    " },
            c.reason
        )?;
    }
    for reviewer in &report.reviewers {
        let name = &reviewer.configured;
        writeln!(out, "reviewer {name}:")?;
        for c in &reviewer.probed {
            writeln!(
                out,
                "  {:<8} {}  {}",
                c.name,
                if c.binds { "binds " } else { "no    " },
                c.reason
            )?;
        }
        match &reviewer.winner {
            Some(w) if reviewer.fallback_used => {
                writeln!(out, "  → {w} (fallback: {name} is not available)")?
            }
            Some(w) => writeln!(out, "  → {w}")?,
            None => writeln!(out, "  → nothing binds")?,
        }
    }
    Ok(())
}
