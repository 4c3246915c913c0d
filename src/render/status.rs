//! The human view of `status`'s report.

use std::io::{Result, Write};

use super::common::{next_step, spend};
use super::escape::line;
use crate::model::report::status::Status;

/// The run's round, verdict, spend, checkpoint, conflicts, next step and settings.
pub fn human(s: &Status, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "run {} on {} — round {} of {}",
        s.run_id,
        line(&s.branch),
        s.round,
        s.max_rounds
    )?;
    writeln!(out, "task: {}", line(&s.task))?;
    if let Some(v) = s.last_verdict {
        writeln!(out, "last verdict: {v}")?;
    }
    match s.budget_usd {
        Some(limit) => writeln!(
            out,
            "spent: {} of ${limit:.2}",
            spend(s.spent, &s.unpriced_models, 2)
        )?,
        None => writeln!(out, "spent: {}", spend(s.spent, &s.unpriced_models, 2))?,
    }
    if let Some(c) = &s.checkpoint {
        writeln!(out, "checkpoint: {} ({}, {})", c.id, c.assessment, c.state)?;
        if let Some(h) = &c.handed_over {
            writeln!(
                out,
                "handed over: the task continues in {}:{} ({}); this context is its source — stop here",
                super::escape::line(&h.host),
                super::escape::line(&h.path),
                if h.archived {
                    "source archived"
                } else {
                    "verified there, source not archived yet"
                }
            )?;
        }
    }
    if s.compactions > 0 {
        writeln!(out, "context compactions: {}", s.compactions)?;
    }
    for conflict in &s.conflicts {
        writeln!(out, "conflict: {}", line(conflict))?;
    }
    if !s.conflicts.is_empty() {
        writeln!(
            out,
            "  (two clones wrote this run at once, before either pulled the other's records; both are kept, in the same order everywhere, and nothing is lost. Read the merged story (git pair handoff), then go on from one clone only: the other runs git pair pull before it writes again)"
        )?;
    }
    writeln!(
        out,
        "reviewer: {}{}",
        s.reviewer,
        if s.reviewer_fallback {
            " (a fallback: the configured reviewer was not available)"
        } else {
            ""
        }
    )?;
    writeln!(out, "next: {}", next_step(s.next))?;
    // Only the settings that hold something: an empty panel or an unset budget says nothing.
    let settings: Vec<String> = s
        .settings
        .0
        .iter()
        .filter(|e| !e.value.is_null() && e.value != serde_json::json!([]))
        .map(|e| format!("{} {} ({})", e.key, e.value, e.from))
        .collect();
    writeln!(out, "settings: {}", settings.join(" · "))
}
