//! The human view of `start`'s report.

use std::io::{Result, Write};

use crate::model::report::start::Started;

/// The run started, its settings and the next step.
pub fn human(report: &Started, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "Started run {} on {} (base {})",
        report.run_id,
        report.branch,
        &report.base[..12.min(report.base.len())]
    )?;
    writeln!(out, "task: {}", report.task)?;
    writeln!(
        out,
        "coder: {} · reviewer: {} · max rounds: {}",
        report.coder, report.reviewer, report.max_rounds
    )?;
    writeln!(
        out,
        "next: let the coder work, then: git pair coder-done --summary \"…\""
    )
}
